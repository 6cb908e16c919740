"""``GET /prizes.json``: each section's prize race "if the event ended now" (layer L3).

For every section with ``[prizes]`` and a TRF: the section's standings as
``/standings.json`` counts them (the TRF as the daemon keeps it, plus the round's results
once spectators can see them: :func:`daemon.links.standings.public_round_entries`), run
through the prize rules (:func:`daemon.prizes.event.prize_race`). A game still to play
counts for nobody yet. The JSON is :func:`daemon.prizes.report.race_payload`'s, one entry
per section (docs/prizes.md); a section whose ratings CSV cannot be used answers its
problems instead (``{"section": "Open", "problems": ["ratings.csv:3: …"]}``), logged
once. Computed again only when the TRF or a public result changed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from broadcast.feed.events import encode_json
from broadcast.feed.hub import Hub
from broadcast.web.http import JSON_TYPE, Answer
from daemon.links.pairing import PairingLink
from daemon.links.standings import public_round_entries
from daemon.prizes.event import prize_race
from daemon.prizes.ratings import Ratings, RatingsFileError, load_ratings
from daemon.prizes.report import race_payload
from daemon.prizes.rules import PrizeRules

__all__ = ["PrizeRoutes"]

log = logging.getLogger(__name__)


class PrizeRoutes:
    """``/prizes.json`` (an :class:`~broadcast.web.http.ExtraRoutes`).

    Args:
        links: each section's TRF hand-off, by section name.
        hub: the public hub.
        sections: the sections' names in the configuration's order, now.
        rules: each section's prize rules (``Config.prizes``).
    """

    def __init__(
        self,
        links: Mapping[str, PairingLink],
        hub: Hub,
        sections: Callable[[], list[str]],
        rules: Mapping[str, PrizeRules],
    ) -> None:
        self.links = links
        self.hub = hub
        self.sections = sections
        self.rules = rules
        self._ratings: dict[str, Ratings | None] = {}
        self._problems: dict[str, tuple[str, ...]] = {}
        for name, section_rules in rules.items():
            try:
                self._ratings[name] = load_ratings(
                    section_rules.ratings, section_rules.rating_systems
                )
            except RatingsFileError as exc:
                self._problems[name] = exc.problems
                for problem in exc.problems:
                    log.error("prizes: %s", problem)
        self._cache: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}

    def answer(self, path: str, query: Mapping[str, list[str]]) -> Answer | None:
        """Every section's prize race; None for other paths."""
        if path != "/prizes.json":
            return None
        names = [n for n in self.sections() if n in self.rules and n in self.links]
        data = {"sections": [self.section(name) for name in names]}
        return Answer(200, encode_json(data).encode(), JSON_TYPE)

    def section(self, name: str) -> dict[str, Any]:
        """One section's race, computed again only when its inputs changed."""
        if name in self._problems:
            return {"section": name, "problems": list(self._problems[name])}
        results = self.links[name].handoff.results
        entries = public_round_entries(results, self.hub.state)
        key = (results.tournament, results.round, tuple(sorted(entries.items())))
        cached = self._cache.get(name)
        if cached is not None and cached[0][0] is key[0] and cached[0][1:] == key[1:]:
            return cached[1]
        tournament = results.tournament.with_round(results.round, entries)
        race = prize_race(tournament, self.rules[name], results.round, self._ratings.get(name))
        payload = race_payload(race, name)
        self._cache[name] = (key, payload)
        return payload
