"""``GET /standings.json``: each section's standings and the round's pairings (layer L3).

Computed from the section's TRF as the daemon keeps it (:mod:`daemon.pairing.handoff`)
with :func:`daemon.pairing.standings.standings`, ranked by the tie-breaks the TRF names
(record ``212`` or ``202``), else those of the section's ``[pairing] tiebreaks``, else
BH-C1, BH, SB (:mod:`daemon.pairing.tiebreaks`); a code dgtcast does not compute is left
out with one warning. The rounds before the one being played
count as the TRF has them. The round being played counts what spectators may already
see: a board's result once it is final in the *public* hub (after the public delay,
as the ``results`` setting says), so the standings never tell a result before the
board does; the round's byes (given at the pairing) count at once.

The JSON, for the viewer and other sites (docs/viewer.md)::

    {"sections": [{"section": "Open", "round": 3, "after_round": 2, "complete": false,
      "tiebreaks": ["BH-C1", "BH", "SB"],
      "standings": [{"place": 1, "start_rank": 4, "name": "…", "title": "FM",
                     "federation": "AUS", "rating": 2150, "fide_id": 661234,
                     "points": 2.5, "tiebreaks": [4.5, 5.5, 4.5], "buchholz_cut1": 4.5,
                     "buchholz": 5.5, "sonneborn_berger": 4.5, "games": 3}, …],
      "pairings": [{"board": 1, "white": {…player…, "points": 2.5}, "black": {…},
                    "result": "1-0", "result_final": true},
                   {"board": null, "white": {…}, "black": null, "bye": "U",
                    "result": "*", "result_final": true}]}]}
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from broadcast.feed.archive import round_number
from broadcast.feed.events import encode_json
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from broadcast.web.http import JSON_TYPE, Answer
from daemon.links.pairing import PairingLink
from daemon.pairing.handoff import RoundResults, result_codes
from daemon.pairing.scoring import RoundEntry
from daemon.pairing.standings import Standing, standings
from daemon.pairing.tiebreaks import DEFAULT_TIEBREAKS, TieBreak, read_tiebreaks
from daemon.pairing.trf import Tournament
from daemon.pairing.trf_reader import Player

__all__ = ["StandingsRoutes", "public_round_entries", "section_standings", "section_tiebreaks"]

log = logging.getLogger(__name__)

_BYE_WORDS = {"U": "bye", "F": "bye (1)", "H": "bye (½)", "Z": "absent", " ": "absent"}


def _number(value: Decimal) -> float | int:
    return int(value) if value == value.to_integral_value() else float(value)


def _player(player: Player) -> dict[str, Any]:
    return {
        "start_rank": player.rank,
        "name": player.name,
        "title": player.title or "",
        "federation": player.federation.strip(),
        "rating": player.rating,
        "fide_id": player.fide_id,
    }


def _row(standing: Standing) -> dict[str, Any]:
    return {
        "place": standing.place,
        **_player(standing.player),
        "points": _number(standing.points),
        "tiebreaks": [_number(value) for value in standing.tiebreaks],
        "buchholz_cut1": _number(standing.buchholz_cut1),
        "buchholz": _number(standing.buchholz),
        "sonneborn_berger": _number(standing.sonneborn_berger),
        "games": standing.games,
    }


def _public_result(results: RoundResults, board: int, state: BoardState | None) -> str | None:
    """The board's result as spectators see it now, or None while it is not final."""
    if state is None or round_number(state) != results.round:
        return None
    if state.result == "*" or not state.result_final:
        return None
    return state.result


def _round_entries(
    results: RoundResults, public: Callable[[int], BoardState | None]
) -> tuple[dict[int, RoundEntry | None], dict[int, tuple[str, bool]]]:
    """The round's entries as the public knows them, and each board's result shown."""
    entries: dict[int, RoundEntry | None] = {}
    shown: dict[int, tuple[str, bool]] = {}
    for board, pairing in results.pairings.items():
        if pairing.black is None:
            continue
        result = _public_result(results, board, public(board))
        white, black = pairing.white, pairing.black
        if result is None:
            entries[white] = RoundEntry(opponent=black, colour="w", code=" ")
            entries[black] = RoundEntry(opponent=white, colour="b", code=" ")
            state = public(board)
            live = (
                state.result if state is not None and round_number(state) == results.round else "*"
            )
            shown[board] = (live, False)
            continue
        codes = result_codes(result)
        entries[white] = RoundEntry(opponent=black, colour="w", code=codes[0])
        entries[black] = RoundEntry(opponent=white, colour="b", code=codes[1])
        shown[board] = (result, True)
    return entries, shown


def public_round_entries(
    results: RoundResults, public: Callable[[int], BoardState | None]
) -> dict[int, RoundEntry | None]:
    """The round's entries as spectators know them: a result once it is final in the
    public hub, else a game still to play (``/prizes.json`` counts the same games)."""
    return _round_entries(results, public)[0]


def section_tiebreaks(
    tournament: Tournament, configured: Sequence[str] = ()
) -> tuple[tuple[TieBreak, ...], list[str]]:
    """The section's tie-breaks: the TRF's (record 212 or 202), else ``configured``, else
    BH-C1, BH, SB; and one line per code left out (not computed by dgtcast), and one
    when the TRF overrides a different ``configured`` list."""
    if not tournament.tiebreaks:
        if not configured:
            return DEFAULT_TIEBREAKS, []
        known, problems = read_tiebreaks(configured)
        return known, [f"[pairing] tiebreaks: {problem}, left out" for problem in problems]
    known, problems = read_tiebreaks(tournament.tiebreaks)
    where = f"{tournament.source}: record {tournament.tiebreaks_tag}"
    lines = [f"{where}: {problem}, left out" for problem in problems]
    first = tournament.tiebreaks[0].upper()
    if tournament.tiebreaks_tag == "212" and first != "PTS":
        lines.append(f"{where} ranks by {first} first: dgtcast ranks by the points first")
    if configured and read_tiebreaks(configured)[0] != known:
        named = " ".join(tournament.tiebreaks)
        lines.append(f"{where} names {named}: [pairing] tiebreaks are not used (the TRF wins)")
    return known, lines


def section_standings(
    name: str,
    results: RoundResults,
    public: Callable[[int], BoardState | None],
    tiebreaks: Sequence[TieBreak] = DEFAULT_TIEBREAKS,
) -> dict[str, Any]:
    """One section's standings and pairings as JSON data (see the module docstring)."""
    return _standings_of(name, results, *_round_entries(results, public), tiebreaks)


def _standings_of(
    name: str,
    results: RoundResults,
    current: Mapping[int, RoundEntry | None],
    shown: Mapping[int, tuple[str, bool]],
    tiebreaks: Sequence[TieBreak],
) -> dict[str, Any]:
    tournament = results.tournament
    entries: dict[int, Sequence[RoundEntry | None]] = {}
    for rank, player in tournament.players.items():
        rounds = list(player.rounds[: results.round - 1])
        rounds += [None] * (results.round - 1 - len(rounds))
        rounds.append(current[rank] if rank in current else player.entry(results.round))
        entries[rank] = rounds
    table = standings(tournament.players, entries, tournament.scoring, results.round, tiebreaks)
    points = {row.player.rank: _number(row.points) for row in table}
    complete = all(final for _, final in shown.values())
    return {
        "section": name,
        "round": results.round,
        "after_round": results.round if complete else results.round - 1,
        "complete": complete,
        "tiebreaks": [tiebreak.code for tiebreak in tiebreaks],
        "standings": [_row(row) for row in table],
        "pairings": _pairings(results, shown, points),
    }


def _pairings(
    results: RoundResults, shown: Mapping[int, tuple[str, bool]], points: Mapping[int, Any]
) -> list[dict[str, Any]]:
    players = results.tournament.players

    def side(rank: int) -> dict[str, Any]:
        return {**_player(players[rank]), "points": points.get(rank, 0)}

    rows: list[dict[str, Any]] = []
    for board, pairing in sorted(results.pairings.items()):
        if pairing.black is None:
            continue
        result, final = shown[board]
        rows.append(
            {
                "board": board,
                "white": side(pairing.white),
                "black": side(pairing.black),
                "result": result,
                "result_final": final,
            }
        )
    for rank, player in sorted(players.items()):
        entry = player.entry(results.round)
        if entry is not None and entry.opponent == 0:
            code = entry.result
            rows.append(
                {
                    "board": None,
                    "white": side(rank),
                    "black": None,
                    "bye": _BYE_WORDS.get(code, code),
                    "result": "*",
                    "result_final": True,
                }
            )
    return rows


class StandingsRoutes:
    """``/standings.json`` (an :class:`~broadcast.web.http.ExtraRoutes`).

    Args:
        links: each section's TRF hand-off, by section name (the daemon's, kept up to
            date as rounds change).
        hub: the public hub.
        sections: the sections' names in the configuration's order, now.
        configured: a section's ``[pairing] tiebreaks`` (used when its TRF names none).
    """

    def __init__(
        self,
        links: Mapping[str, PairingLink],
        hub: Hub,
        sections: Callable[[], list[str]],
        configured: Callable[[str], Sequence[str]] = lambda _: (),
    ) -> None:
        self.links = links
        self.hub = hub
        self.sections = sections
        self.configured = configured
        self._warned: set[str] = set()
        # A section's standings cost milliseconds and every spectator asks after each
        # result: computed once per change (the TRF as kept, the public results).
        self._cache: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self._body: tuple[list[dict[str, Any]], bytes] = ([], b"")

    def answer(self, path: str, query: Mapping[str, list[str]]) -> Answer | None:
        """The standings of every section with a TRF; None for other paths."""
        if path != "/standings.json":
            return None
        data = [self.section(name) for name in self.sections() if name in self.links]
        same = len(data) == len(self._body[0]) and all(
            new is old for new, old in zip(data, self._body[0], strict=True)
        )
        if not same:
            self._body = (data, encode_json({"sections": data}).encode())
        return Answer(200, self._body[1], JSON_TYPE)

    def section(self, name: str) -> dict[str, Any]:
        """The section's standings, computed again only when the TRF or a public result
        changed (the tournament is immutable: a new result is a new object)."""
        results = self.links[name].handoff.results
        current, shown = _round_entries(results, self.hub.state)
        key = (results, results.tournament, tuple(sorted(shown.items())))
        cached = self._cache.get(name)
        if cached is None or not _same(cached[0], key):
            tiebreaks, problems = section_tiebreaks(results.tournament, self.configured(name))
            for problem in problems:
                if problem not in self._warned:
                    self._warned.add(problem)
                    log.warning("standings: %s", problem)
            cached = (key, _standings_of(name, results, current, shown, tiebreaks))
            self._cache[name] = cached
        return cached[1]


def _same(old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    """The same results object, the same tournament object, the same public results."""
    return old[0] is new[0] and old[1] is new[1] and old[2] == new[2]
