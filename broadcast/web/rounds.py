"""Every round of the event over HTTP: past rounds from the archive, the round in play live.

=====================================  ===================================================
``GET /rounds.json``                   each section's past rounds: games, players, results
``GET /round/N.pgn``                   round N's games (``?section=S``: one section's), 404
                                       for a round no section plays or kept
``GET /round/N/B.pgn``                 the game of board B in round N (``?section=S``)
``GET /round/N/B.json``                that game as a feed board state, with ``pgn``
=====================================  ===================================================

Round N of a section that is playing it comes from the public hub (as ``/round.pgn``);
a round the section finished comes from the :class:`~broadcast.feed.archive.RoundArchive`,
public ``delay`` seconds after the section moved on, as its last moves were. Results are
shown as the event's ``results`` setting says (:func:`public_state`); a provisional one is
marked in the PGN (:func:`~broadcast.feed.pgn.game_pgn`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from broadcast.feed.archive import ArchivedRound, RoundArchive, round_number
from broadcast.feed.events import encode_json, state_to_json
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from broadcast.feed.pgn import game_pgn, in_round_order
from broadcast.feed.public_results import ResultsPolicy, public_state
from broadcast.web.http import JSON_TYPE, PGN_TYPE, Answer

__all__ = ["RoundRoutes"]

_ROUND_PGN = re.compile(r"/round/([1-9][0-9]{0,3})\.pgn")
_GAME = re.compile(r"/round/([1-9][0-9]{0,3})/([1-9][0-9]{0,5})\.(pgn|json)")
_NOT_FOUND = Answer(404, b"no such game\n")
_NO_ROUND = Answer(404, b"no such round\n")


def _game_summary(state: BoardState) -> dict[str, Any]:
    return {
        "board": state.board,
        "white": state.white,
        "black": state.black,
        "white_elo": state.white_elo,
        "black_elo": state.black_elo,
        "result": state.result,
        "result_final": state.result_final,
        "plies": len(state.moves),
    }


class RoundRoutes:
    """The rounds' routes of the broadcast server (an :class:`ExtraRoutes`).

    Args:
        archive: the past rounds.
        hub: the public hub (the round being played, as spectators see it).
        delay: the public delay in seconds.
        results: the event's ``results`` setting.
        clock: wall clock (epoch seconds).
    """

    def __init__(
        self,
        archive: RoundArchive,
        hub: Hub,
        *,
        delay: float = 0.0,
        results: ResultsPolicy = "provisional",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.archive = archive
        self.hub = hub
        self.delay = delay
        self.results = results
        self._clock = clock
        # every spectator asks for the list when a round changes: encoded once per change
        self._listed: tuple[list[ArchivedRound], bytes] = ([], b'{"sections":[]}')

    def answer(self, path: str, query: Mapping[str, list[str]]) -> Answer | None:
        """The reply to one GET, or None for a path that is not a round's."""
        section = query.get("section", [None])[0]
        if path == "/rounds.json":
            return Answer(200, self._rounds_json(), JSON_TYPE)
        match = _ROUND_PGN.fullmatch(path)
        if match is not None:
            games = self._round(int(match.group(1)), section)
            if not games:  # neither played nor kept (in that section)
                return _NO_ROUND
            text = "\n".join(pgn for state in games if (pgn := game_pgn(state)))
            return Answer(200, text.encode(), PGN_TYPE)
        match = _GAME.fullmatch(path)
        if match is None:
            return None
        found = self._game(int(match.group(1)), int(match.group(2)), section)
        if found is None:
            return _NOT_FOUND
        if match.group(3) == "pgn":
            return Answer(200, game_pgn(found).encode(), PGN_TYPE)
        data = {**state_to_json(found), "pgn": game_pgn(found)}
        return Answer(200, encode_json(data).encode(), JSON_TYPE)

    # -- what is public -------------------------------------------------------------------

    def _public(self, states: Iterable[BoardState]) -> list[BoardState]:
        return [public_state(state, self.results) for state in states]

    def _archived(self) -> list[ArchivedRound]:
        return self.archive.rounds(until=self._clock() - self.delay)

    def _live(self, round_wanted: int, section: str | None) -> list[BoardState]:
        return [
            state
            for state in self.hub.states()
            if round_number(state) == round_wanted and section in (None, state.section)
        ]

    def _round(self, round_wanted: int, section: str | None) -> list[BoardState]:
        """Round N's games: live for the sections playing it, archived for the others."""
        live = self._live(round_wanted, section)
        playing = {state.section for state in live}
        archived = [
            state
            for kept in self._archived()
            if kept.round == round_wanted and section in (None, kept.section)
            if kept.section not in playing
            for state in kept.states
        ]
        return in_round_order(self._public([*live, *archived]))

    def _game(self, round_wanted: int, board: int, section: str | None) -> BoardState | None:
        for state in self._round(round_wanted, section):
            if state.board == board:
                return state
        return None

    def _rounds_json(self) -> bytes:
        shown = self._archived()
        old = self._listed[0]
        if len(shown) == len(old) and all(a is b for a, b in zip(shown, old, strict=True)):
            return self._listed[1]
        sections: dict[str, list[dict[str, Any]]] = {}
        for kept in shown:
            games = [_game_summary(state) for state in self._public(kept.states)]
            sections.setdefault(kept.section, []).append({"round": kept.round, "games": games})
        data = [{"section": name, "rounds": rounds} for name, rounds in sections.items()]
        self._listed = (shown, encode_json({"sections": data}).encode())
        return self._listed[1]
