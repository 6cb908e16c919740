"""The LiveChess tournament resources: tournaments, rounds, pairings, games (pure).

docs/integrations.md, "HTTP resources". One LiveChess *tournament* per section of the event
(the one-event form is one tournament), with stable uuids derived from the event's and
section's names (the same names give the same uuids after a restart, on any machine); a
game's uuid derives from its tournament, round and board. Only the round being played is
known.

Resources, as answers to ``GET /api/v1.0/...``:

* ``tournaments`` → ``[{uuid, description, rounds}]``
* ``tournament/{uuid}`` → ``{uuid, name, description, location, country, rounds, eboards}``
  (``eboards[N-1]`` is the serial number of the section's board N, null if not heard)
* ``round/{uuid}/{nr}`` → ``{nr, date, pairings: [{nr, uuid, white, black, live, result}]}``
* ``game/{uuid}`` → ``{chess960, result, comment, clock, moves: ["e4 5399", ...]}``

Results are LiveChess names: ``WHITEWIN``, ``BLACKWIN``, ``DRAW``, ``WHITEFORFAIT`` (White
wins by forfeit, TRF ``+-``), ``BLACKFORFAIT`` (``-+``); null while the game goes on and
for a double forfeit, which LiveChess cannot name.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import chess

from broadcast.feed.messages import BoardState, BoardStatus
from broadcast.livechess.eboards import clock_json, start_fen

__all__ = [
    "RESULT_NAMES",
    "Pairing",
    "Player",
    "Resources",
    "Tournament",
    "index_player_json",
    "is_live",
    "move_string",
    "player_json",
    "result_name",
    "split_name",
]

#: PGN / TRF results to LiveChess result names.
RESULT_NAMES = {
    "1-0": "WHITEWIN",
    "0-1": "BLACKWIN",
    "1/2-1/2": "DRAW",
    "+-": "WHITEFORFAIT",
    "-+": "BLACKFORFAIT",
}
_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "urn:dgtcast:livechess")
_STANDARD_POSITION = 518  # the Chess960 number of the initial position


@dataclass(frozen=True, slots=True, kw_only=True)
class Player:
    """A player as the pairing names them (``"Surname, Firstname"`` or ``"First Last"``)."""

    name: str = ""
    title: str | None = None
    fide_id: int | None = None
    federation: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Pairing:
    """Board ``board`` (the event's numbering): ``white`` against ``black``."""

    board: int
    white: Player
    black: Player


@dataclass(frozen=True, slots=True, kw_only=True)
class Tournament:
    """One section of the event, as a LiveChess tournament.

    Attributes:
        name: the event's name.
        section: the section's name ("" in the one-event form).
        site: where it is played.
        date: the round's date, ``YYYY-MM-DD``.
        round: the round being played.
        pairings: the section's boards in order; the N-th is LiveChess board N.
    """

    name: str
    section: str = ""
    site: str = ""
    date: str = ""
    round: int = 1
    pairings: tuple[Pairing, ...] = ()

    @property
    def uuid(self) -> str:
        """Stable: derived from the event's and section's names."""
        return str(uuid.uuid5(_NAMESPACE, f"{self.name}\n{self.section}"))

    @property
    def title(self) -> str:
        """``Event`` or ``Event - Section``."""
        return f"{self.name} - {self.section}" if self.section else self.name

    def game_uuid(self, board: int) -> str:
        """The uuid of the game on ``board`` in the current round."""
        return str(uuid.uuid5(_NAMESPACE, f"{self.uuid}\n{self.round}\n{board}"))


def split_name(name: str) -> tuple[str | None, str | None, str | None]:
    """(first, middle, last) of ``"Surname, First Middle"`` or ``"First Middle Last"``."""
    name = " ".join(name.split())
    if not name:
        return None, None, None
    if "," in name:
        last, _, given = (part.strip() for part in name.partition(","))
        first, _, middle = given.partition(" ")
    else:
        *given_parts, last = name.split(" ")
        first = given_parts[0] if given_parts else ""
        middle = " ".join(given_parts[1:])
    return first or None, middle or None, last or None


def player_json(player: Player) -> dict[str, Any]:
    """A player as the LiveChess API answers one (§6): :func:`index_player_json`, then
    gender and fideid."""
    return {**index_player_json(player), "gender": None, "fideid": player.fide_id}


def index_player_json(player: Player) -> dict[str, Any]:
    """A player as LiveChess writes one in a round's ``index.json`` (§7): fname, mname,
    lname, title, federation."""
    first, middle, last = split_name(player.name)
    return {
        "fname": first,
        "mname": middle,
        "lname": last,
        "title": player.title,
        "federation": player.federation,
    }


def move_string(san: str, clock: float | None) -> str:
    """``"e4 5399"``: the move and the mover's clock after it, in whole seconds (§6)."""
    return san if clock is None else f"{san} {max(0, int(clock))}"


def is_live(state: BoardState | None) -> bool:
    """Whether the game is being played: no result yet and moves made or the board in play."""
    if state is None or state.result != "*":
        return False
    return bool(state.moves) or state.status in (BoardStatus.ONLINE, BoardStatus.OUT_OF_SYNC)


def result_name(state: BoardState | None) -> str | None:
    """The LiveChess name of the board's result; None while it goes on."""
    return None if state is None else RESULT_NAMES.get(state.result)


def _chess960(state: BoardState) -> int:
    board = chess.Board(start_fen(state))
    number = board.chess960_pos() if board.fullmove_number == 1 else None
    return _STANDARD_POSITION if number is None else number


class Resources:
    """Answers the tournament resources from the event and the boards' latest states.

    Args:
        tournaments: the event's sections.
        state_of: the latest state of a board (None if the hub has none).
        serials_of: the serial numbers heard on these boards (None where none).
    """

    def __init__(
        self,
        tournaments: tuple[Tournament, ...],
        state_of: Callable[[int], BoardState | None],
        serials_of: Callable[[list[int]], list[str | None]],
    ) -> None:
        self._tournaments = {t.uuid: t for t in tournaments}
        self._order = tournaments
        self._state_of = state_of
        self._serials_of = serials_of
        self._games = {t.game_uuid(p.board): (t, p) for t in tournaments for p in t.pairings}

    def tournaments(self) -> list[dict[str, Any]]:
        """``tournaments``: every section."""
        return [{"uuid": t.uuid, "description": t.title, "rounds": t.round} for t in self._order]

    def tournament(self, tournament_uuid: str) -> dict[str, Any] | None:
        """``tournament/{uuid}``; None if unknown."""
        t = self._tournaments.get(tournament_uuid)
        if t is None:
            return None
        return {
            "uuid": t.uuid,
            "name": t.name,
            "description": t.title,
            "location": t.site or None,
            "country": None,
            "rounds": t.round,
            "eboards": self._serials_of([p.board for p in t.pairings]),
        }

    def round(self, tournament_uuid: str, number: int) -> dict[str, Any] | None:
        """``round/{uuid}/{nr}``; None unless it is the round being played."""
        t = self._tournaments.get(tournament_uuid)
        if t is None or number != t.round:
            return None
        pairings = []
        for index, pairing in enumerate(t.pairings, start=1):
            state = self._state_of(pairing.board)
            pairings.append(
                {
                    "nr": index,
                    "uuid": t.game_uuid(pairing.board),
                    "white": player_json(pairing.white),
                    "black": player_json(pairing.black),
                    "live": is_live(state),
                    "result": result_name(state),
                }
            )
        return {"nr": t.round, "date": t.date or None, "pairings": pairings}

    def game(self, game_uuid: str) -> dict[str, Any] | None:
        """``game/{uuid}``; None if unknown."""
        found = self._games.get(game_uuid)
        if found is None:
            return None
        state = self._state_of(found[1].board)
        if state is None:
            return {
                "chess960": _STANDARD_POSITION,
                "result": None,
                "comment": None,
                "clock": None,
                "moves": [],
            }
        return {
            "chess960": _chess960(state),
            "result": result_name(state),
            "comment": None,
            "clock": clock_json(state),
            "moves": [move_string(m.san, m.clock) for m in state.moves],
        }
