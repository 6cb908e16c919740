"""A relay's past rounds and standings, kept from the broker and answered from memory.

The daemons publish each section's past rounds and standings once they are public
(:mod:`broadcast.outputs.mqtt_rounds`, :mod:`daemon.links.section_topics`).
:class:`RelayRounds` keeps the latest of each (:meth:`RelayRounds.receive_message`) and
gives the relay's server the same routes as a daemon's: ``/rounds.json``,
``/round/N.pgn``, ``/round/N/B.pgn|json`` (:meth:`RelayRounds.routes`: the rounds
being played from the relay's public hub, the past ones from here) and
``/standings.json`` (:meth:`RelayRounds.answer`). Pure: no I/O.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

from broadcast.feed.archive import RoundArchive
from broadcast.feed.events import encode_json
from broadcast.feed.hub import Hub
from broadcast.feed.public_results import ResultsPolicy
from broadcast.outputs.mqtt_rounds import read_section_message
from broadcast.web.http import JSON_TYPE, Answer, ExtraRoutes
from broadcast.web.rounds import RoundRoutes

__all__ = ["RelayRounds"]

log = logging.getLogger(__name__)


class RelayRounds:
    """Every section's past rounds and standings, as the daemons last published them."""

    def __init__(self) -> None:
        self.archive = RoundArchive()
        self._standings: dict[str, dict[str, Any]] = {}  # by topic key
        self._rounds: dict[tuple[str, int], str] = {}  # (key, round) → the section's name
        self._body: bytes | None = None

    def receive_message(self, parts: list[str], payload: bytes) -> None:
        """One message; ``parts`` are the topic's levels after ``<prefix>/section/``.

        Raises:
            ValueError: a payload that is not what its topic says (nothing changes).
        """
        message = read_section_message(parts, payload)
        if message is None:
            return
        if message.round is None:
            if message.standings is None:
                self._standings.pop(message.key, None)
            else:
                self._standings[message.key] = message.standings
            self._body = None
            return
        where = (message.key, message.round)
        if message.kept is None:
            name = self._rounds.pop(where, None)
            if name is not None:
                self.archive.forget(name, message.round)
            return
        kept = message.kept
        self._rounds[where] = kept.section
        self.archive.keep(kept.section, kept.round, kept.states, kept.at)

    def routes(self, hub: Hub, results: ResultsPolicy) -> list[ExtraRoutes]:
        """The server's routes: the rounds' over ``hub`` (the relay's public hub) and the
        kept rounds (the daemons publish a round once it is public: shown at once), and
        the standings'."""
        rounds = RoundRoutes(self.archive, hub, delay=0.0, results=results, clock=lambda: math.inf)
        return [rounds, self]

    def answer(self, path: str, query: Mapping[str, list[str]]) -> Answer | None:
        """``/standings.json``: the sections in the order of their lowest board."""
        if path != "/standings.json":
            return None
        if self._body is None:
            sections = sorted(self._standings.values(), key=_order)
            self._body = encode_json({"sections": sections}).encode()
        return Answer(200, self._body, JSON_TYPE)


def _order(section: dict[str, Any]) -> tuple[float, str]:
    boards = [
        board
        for pairing in section.get("pairings", [])
        if isinstance(pairing, dict) and isinstance(board := pairing.get("board"), int)
    ]
    return (min(boards, default=math.inf), str(section.get("section", "")))
