"""E-boards as LiveChess shows them, and the ``eboardevent`` feed they drive (pure).

livechess-api.md §3-§5. Every board whose e-board has been heard (its serial number is
known) is listed by :meth:`EBoards.eboards`; boards without an e-board are not. A lost
board stays listed as ``NOTRESPONDING`` with ``source`` and ``clock`` null (OV).

The feed of one board is shared by all its subscribers. Subscribers that asked for the
same ``setup`` position share a :class:`FeedGroup`: each change of the board makes one
new event per group, encoded once (as a *delta*, which leaves out ``board`` and
``clock`` when unchanged, and, only if someone needs it, as a *full* event), so a
thousand overlays on one board cost one encode per event, not a thousand.

Fields of an event (§4): ``serialnr``, ``flipped``, ``board`` (the placement of the
reconstructed position), ``clock`` (§5), ``start`` and ``san`` (every move since
``start``, from dgtcast's exact reconstruction: no duplicates, no pieces in the air;
a correction changes the list in place), ``match`` (the board stands as the game says).

``setup`` (§3) names the position the feed's moves count from. dgtcast reconstructs
the whole game itself, so the position is looked up in the game: ``san`` holds the
moves played after the last time the game reached it, and is empty with ``match``
false until the game gets there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import chess

from broadcast.feed.events import encode_json
from broadcast.feed.messages import BoardState, BoardStatus, MoveInfo

__all__ = [
    "EBoards",
    "FeedGroup",
    "battery_text",
    "clock_json",
    "eboard_json",
    "eboard_state",
    "source_json",
    "start_fen",
]

_FEN_TAG = re.compile(r'^\[FEN "([^"]+)"\]$', re.MULTILINE)


def eboard_state(state: BoardState) -> str:
    """``state`` of an e-board: ``ACTIVE`` while it answers, else ``NOTRESPONDING``.

    A board configured by serial number that has not answered yet (no port) is listed
    ``NOTRESPONDING`` too.
    """
    if state.status is BoardStatus.OFFLINE or state.port is None:
        return "NOTRESPONDING"
    return "ACTIVE"


def clock_json(state: BoardState) -> dict[str, Any] | None:
    """The clock object (§5): whole seconds, ``run`` true = White's time runs, ``time`` ms.

    None without a clock reading, and for a board whose link is down.
    """
    if state.clock_at is None or state.status is BoardStatus.OFFLINE:
        return None
    if state.white_clock is None or state.black_clock is None:
        return None
    run = {"white": True, "black": False}.get(state.running or "")
    return {
        "white": round(state.white_clock),
        "black": round(state.black_clock),
        "run": run,
        "time": round(state.clock_at * 1000),
    }


def start_fen(state: BoardState) -> str:
    """The FEN the game's moves start from: its ``FEN`` tag, or the initial position.

    A position accepted by the arbiter (an illegal move that stood) restarts the record
    from that position (docs/reconstruction.md), and so restarts ``san``.
    """
    found = _FEN_TAG.search(state.pgn)
    return found.group(1) if found else chess.STARTING_FEN


def eboard_json(state: BoardState, *, flipped: bool) -> dict[str, Any]:
    """One entry of ``eboards`` (§3)."""
    online = eboard_state(state) == "ACTIVE"
    return {
        "serialnr": state.serial,
        "source": state.port if online else None,
        "state": eboard_state(state),
        "battery": battery_text(state),
        "comment": None,
        "board": state.fen.split(" ", 1)[0],
        "flipped": flipped,
        "clock": clock_json(state),
    }


def battery_text(state: BoardState) -> str | None:
    """``battery`` of an e-board (§3): ``"84%"`` as a Bluetooth board last reported it;
    null for a USB board, which reports none (dgt-protocol.md §4.1)."""
    return None if state.battery is None else f"{state.battery}%"


def source_json(state: BoardState) -> dict[str, Any]:
    """One entry of ``sources`` (§3, LU): the port an e-board is on."""
    online = eboard_state(state) == "ACTIVE"
    port = state.port or ""
    return {
        "type": "serial",
        "device": port,
        "name": port.rsplit("/", 1)[-1],
        "present": online,
        "active": online,
        "status": eboard_state(state),
    }


def _position_key(board: chess.Board) -> tuple[str, bool]:
    return board.board_fen(), board.turn


def _anchor(start: str, moves: tuple[MoveInfo, ...], setup: str, hint: int | None) -> int | None:
    """The ply after which the game stands in ``setup``: ``hint`` if still so, else the last."""
    wanted = _position_key(chess.Board(setup))
    board = chess.Board(start, chess960=True)  # takes e1g1 and Chess960's king-to-rook f1g1
    keys = [_position_key(board)]
    for move in moves:
        board.push_uci(move.uci)
        keys.append(_position_key(board))
    if hint is not None and hint < len(keys) and keys[hint] == wanted:
        return hint
    found = [ply for ply, key in enumerate(keys) if key == wanted]
    return found[-1] if found else None


@dataclass(eq=False, slots=True)
class FeedGroup:
    """The events of one board for the subscribers that share one ``setup`` (or none).

    ``version`` counts the events; a subscriber that received ``version - 1`` gets the
    delta text, any other the full text. Each text is encoded at most once per event.
    """

    serial: str
    setup: str | None
    members: int = 0
    version: int = 0
    payload: dict[str, Any] | None = None
    delta: dict[str, Any] | None = None
    anchor: int | None = None
    _anchored: tuple[str, tuple[MoveInfo, ...]] | None = None
    _texts: dict[bool, str] = field(default_factory=dict)

    def refresh(self, state: BoardState, flipped: bool) -> bool:
        """Take the board's latest state; True when it makes a new event."""
        payload = self._payload(state, flipped)
        if payload == self.payload:
            return False
        before = self.payload or {}
        self.delta = {
            name: value
            for name, value in payload.items()
            if name not in ("board", "clock") or before.get(name) != value
        }
        self.payload = payload
        self.version += 1
        self._texts.clear()
        return True

    def text_for(self, received: int | None) -> str:
        """The event a subscriber that last received version ``received`` is sent now."""
        full = received != self.version - 1
        text = self._texts.get(full)
        if text is None:
            assert self.payload is not None
            assert self.delta is not None
            text = self._texts[full] = encode_json(self.payload if full else self.delta)
        return text

    def _payload(self, state: BoardState, flipped: bool) -> dict[str, Any]:
        start = start_fen(state)
        found = True
        moves = state.moves
        if self.setup is not None:
            if self._anchored != (start, moves):
                self.anchor = _anchor(start, moves, self.setup, self.anchor)
                self._anchored = (start, moves)
            found = self.anchor is not None
            moves = moves[self.anchor :] if self.anchor is not None else ()
            start = self.setup
        return {
            "serialnr": self.serial,
            "flipped": flipped,
            "board": state.fen.split(" ", 1)[0],
            "clock": clock_json(state),
            "start": start,
            "san": [move.san for move in moves],
            "match": found and state.status is not BoardStatus.OUT_OF_SYNC,
        }


@dataclass(slots=True)
class _EBoard:
    state: BoardState
    flipped: bool = False
    groups: dict[str | None, FeedGroup] = field(default_factory=dict)


class EBoards:
    """Every e-board by serial number, with its feed groups.

    Call :meth:`receive_board` with every board state; it returns the groups that have a
    new event, whose subscribers should be woken.
    """

    def __init__(self) -> None:
        self._boards: dict[str, _EBoard] = {}
        self._serial_of: dict[int, str] = {}

    def receive_board(self, state: BoardState) -> list[FeedGroup]:
        """Take a board state; returns the feed groups with a new event."""
        if state.serial is None:
            return []
        previous = self._serial_of.get(state.board)
        if previous is not None and previous != state.serial:
            self._boards.pop(previous, None)  # another e-board now plays this game
        self._serial_of[state.board] = state.serial
        eboard = self._boards.get(state.serial)
        if eboard is None:
            eboard = self._boards[state.serial] = _EBoard(state=state)
        eboard.state = state
        return self._refresh(eboard)

    def flip(self, serial: str, flipped: bool) -> list[FeedGroup]:
        """The operator says the board is turned (or not); returns groups with an event."""
        eboard = self._boards[serial]
        eboard.flipped = flipped
        return self._refresh(eboard)

    def knows(self, serial: str) -> bool:
        """Whether an e-board with this serial number has been heard."""
        return serial in self._boards

    def join(self, serial: str, setup: str | None = None) -> FeedGroup:
        """A subscriber joins the group of ``serial`` and ``setup``; it then needs a full event.

        Raises:
            KeyError: no e-board with this serial number.
        """
        eboard = self._boards[serial]
        group = eboard.groups.get(setup)
        if group is None:
            group = eboard.groups[setup] = FeedGroup(serial=serial, setup=setup)
            group.refresh(eboard.state, eboard.flipped)
        group.members += 1
        return group

    def leave(self, group: FeedGroup) -> None:
        """A subscriber leaves ``group``; an empty group is forgotten."""
        group.members -= 1
        eboard = self._boards.get(group.serial)
        if group.members <= 0 and eboard is not None and eboard.groups.get(group.setup) is group:
            del eboard.groups[group.setup]

    def states(self) -> list[BoardState]:
        """The latest state of every listed e-board, by board number."""
        return sorted((e.state for e in self._boards.values()), key=lambda s: s.board)

    def eboards(self) -> list[dict[str, Any]]:
        """The ``eboards`` answer (§3), by board number."""
        flipped = {serial: e.flipped for serial, e in self._boards.items()}
        return [eboard_json(s, flipped=flipped[s.serial or ""]) for s in self.states()]

    def sources(self) -> list[dict[str, Any]]:
        """The ``sources`` answer (§3): one per port an e-board was heard on."""
        return [source_json(s) for s in self.states() if s.port]

    def serials_of(self, boards: Iterable[int]) -> list[str | None]:
        """The serial number of each board number, None where none was heard."""
        return [self._serial_of.get(board) for board in boards]

    def _refresh(self, eboard: _EBoard) -> list[FeedGroup]:
        return [g for g in eboard.groups.values() if g.refresh(eboard.state, eboard.flipped)]
