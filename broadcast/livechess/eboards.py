"""E-boards as LiveChess shows them, and the ``eboardevent`` feed they drive (pure).

docs/integrations.md, "The websocket API". Every board whose e-board has been heard (its
serial number is known) is listed by :meth:`EBoards.eboards`; boards without an e-board are
not. A lost board stays listed as ``NOTRESPONDING`` with ``source`` and ``clock`` null (OV).

The feed of one board is shared by all its subscribers. Subscribers that asked for the
same ``setup`` position (and whose connections agree on ``flipped``) share a
:class:`FeedGroup`: each change of the board makes one new event per group, encoded
once (as a *delta*, which leaves out ``board`` and ``clock`` when unchanged, and, only
if someone needs it, as a *full* event), so a thousand overlays on one board cost one
encode per event, not a thousand. What the groups share is computed once per change
of the board (:class:`BoardView`: the SAN of the moves, the positions the game passed
through), so a group costs a lookup, not a replay of the game. Clients cannot make
this work grow without bound: an e-board has at most ``max_subscribers`` subscriptions
and ``max_setups`` distinct setup positions (:class:`EBoards`).

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
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

import chess

from broadcast.feed.events import encode_json
from broadcast.feed.messages import BoardState, BoardStatus, MoveInfo

__all__ = [
    "BoardView",
    "EBoards",
    "FeedGroup",
    "GamePositions",
    "battery_text",
    "clock_json",
    "eboard_json",
    "eboard_state",
    "game_positions",
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
    null for a USB board, which reports none (docs/protocol.md §4.1)."""
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


@dataclass(frozen=True, slots=True)
class GamePositions:
    """The positions a game passed through: ``keys[ply]`` after ``ply`` moves, and the
    last ply of each position (:func:`game_positions`)."""

    keys: tuple[tuple[str, bool], ...]
    last: dict[tuple[str, bool], int]


def game_positions(start: str, moves: tuple[MoveInfo, ...]) -> GamePositions:
    """Replay the game once; every ``setup`` group of the board looks its position up."""
    board = chess.Board(start, chess960=True)  # takes e1g1 and Chess960's king-to-rook f1g1
    keys = [_position_key(board)]
    for move in moves:
        board.push_uci(move.uci)
        keys.append(_position_key(board))
    return GamePositions(keys=tuple(keys), last={key: ply for ply, key in enumerate(keys)})


class BoardView:
    """One state of a board as its feed groups read it: what they share, computed once.

    The moves' SAN and the positions of the game (for ``setup`` groups) are computed
    when first asked for, and carried over from the previous view while the moves stay.
    """

    def __init__(self, state: BoardState, previous: BoardView | None = None) -> None:
        self.state = state
        self.start = start_fen(state)
        self.placement = state.fen.split(" ", 1)[0]
        self.clock = clock_json(state)
        self.in_sync = state.status is not BoardStatus.OUT_OF_SYNC
        self._sans: tuple[str, ...] | None = None
        self._positions: GamePositions | None = None
        if previous is not None and (previous.start, previous.state.moves) == (
            self.start,
            state.moves,
        ):
            self._sans, self._positions = previous._sans, previous._positions

    @property
    def sans(self) -> tuple[str, ...]:
        """Every move's SAN since :attr:`start`."""
        if self._sans is None:
            self._sans = tuple(move.san for move in self.state.moves)
        return self._sans

    @property
    def positions(self) -> GamePositions:
        """The positions of the game (replayed once per change of its moves)."""
        if self._positions is None:
            self._positions = game_positions(self.start, self.state.moves)
        return self._positions


@dataclass(eq=False, slots=True)
class FeedGroup:
    """The events of one board for the subscribers that share a ``setup`` (or none) and
    a ``flipped`` (their connection's own flip).

    ``version`` counts the events; a subscriber that received ``version - 1`` gets the
    delta text, any other the full text. Each text is encoded at most once per event.
    """

    serial: str
    setup: str | None
    flipped: bool = False
    members: int = 0
    version: int = 0
    payload: dict[str, Any] | None = None
    delta: dict[str, Any] | None = None
    anchor: int | None = None
    _wanted: tuple[str, bool] | None = None
    _anchored: GamePositions | None = None
    _texts: dict[bool, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.setup is not None:
            self._wanted = _position_key(chess.Board(self.setup))

    def refresh(self, view: BoardView) -> bool:
        """Take the board's latest view; True when it makes a new event."""
        payload = self._payload(view)
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

    def _anchor(self, positions: GamePositions) -> int | None:
        """The ply after which the game stands in ``setup``: the same as before if still
        so, else the last time it did."""
        if positions is not self._anchored:
            hint, keys = self.anchor, positions.keys
            if hint is None or hint >= len(keys) or keys[hint] != self._wanted:
                assert self._wanted is not None
                self.anchor = positions.last.get(self._wanted)
            self._anchored = positions
        return self.anchor

    def _payload(self, view: BoardView) -> dict[str, Any]:
        start, sans, found = view.start, view.sans, True
        if self.setup is not None:
            anchor = self._anchor(view.positions)
            found = anchor is not None
            sans = sans[anchor:] if anchor is not None else ()
            start = self.setup
        return {
            "serialnr": self.serial,
            "flipped": self.flipped,
            "board": view.placement,
            "clock": view.clock,
            "start": start,
            "san": list(sans),
            "match": found and view.in_sync,
        }


@dataclass(slots=True)
class _EBoard:
    view: BoardView
    groups: dict[tuple[str | None, bool], FeedGroup] = field(default_factory=dict)
    entry: str | None = None  # its ``eboards`` entry (not flipped), encoded once per change
    source: str | None = None  # its ``sources`` entry, likewise

    @property
    def subscribers(self) -> int:
        return sum(group.members for group in self.groups.values())

    def setups(self) -> set[str]:
        return {setup for setup, _ in self.groups if setup is not None}


class EBoards:
    """Every e-board by serial number, with its feed groups.

    Call :meth:`receive_board` with every board state; it returns the groups that have a
    new event, whose subscribers should be woken.

    Args:
        max_subscribers: subscriptions one e-board may have, from all connections.
        max_setups: distinct ``setup`` positions one e-board's subscribers may ask for
            (each is a group of its own, refreshed on every change of the board).
    """

    def __init__(self, *, max_subscribers: int = 1000, max_setups: int = 16) -> None:
        self._boards: dict[str, _EBoard] = {}
        self._serial_of: dict[int, str] = {}
        self.max_subscribers = max_subscribers
        self.max_setups = max_setups

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
            eboard = self._boards[state.serial] = _EBoard(view=BoardView(state))
        else:
            eboard.view, eboard.entry, eboard.source = BoardView(state, eboard.view), None, None
        return [g for g in eboard.groups.values() if g.refresh(eboard.view)]

    def knows(self, serial: str) -> bool:
        """Whether an e-board with this serial number has been heard."""
        return serial in self._boards

    def join(self, serial: str, setup: str | None = None, flipped: bool = False) -> FeedGroup | str:
        """A subscriber joins the group of ``serial``, ``setup`` and ``flipped``; it then
        needs a full event. Returns why not instead when a bound is reached.

        Raises:
            KeyError: no e-board with this serial number.
        """
        eboard = self._boards[serial]
        if eboard.subscribers >= self.max_subscribers:
            return f"at most {self.max_subscribers} subscriptions to one e-board"
        group = eboard.groups.get((setup, flipped))
        if group is None:
            setups = eboard.setups()
            if setup is not None and setup not in setups and len(setups) >= self.max_setups:
                return f"at most {self.max_setups} setup positions on one e-board"
            group = eboard.groups[(setup, flipped)] = FeedGroup(serial, setup, flipped)
            group.refresh(eboard.view)
        group.members += 1
        return group

    def leave(self, group: FeedGroup) -> None:
        """A subscriber leaves ``group``; an empty group is forgotten."""
        group.members -= 1
        eboard = self._boards.get(group.serial)
        key = (group.setup, group.flipped)
        if group.members <= 0 and eboard is not None and eboard.groups.get(key) is group:
            del eboard.groups[key]

    def states(self) -> list[BoardState]:
        """The latest state of every listed e-board, by board number."""
        return sorted((e.view.state for e in self._boards.values()), key=lambda s: s.board)

    def eboards(self, flipped: Collection[str] = ()) -> list[dict[str, Any]]:
        """The ``eboards`` answer (§3), by board number; ``flipped``: the serial numbers
        the asking connection turned."""
        return [eboard_json(s, flipped=s.serial in flipped) for s in self.states()]

    def eboards_text(self, flipped: Collection[str] = ()) -> str:
        """:meth:`eboards` as JSON text: each entry encoded once per change of its board
        and shared by every client that asks (a flood of ``eboards`` calls on a hall of
        500 boards costs a join, not 500 encodings each)."""
        entries = []
        for eboard in self._in_order():
            state = eboard.view.state
            if state.serial in flipped:
                entries.append(encode_json(eboard_json(state, flipped=True)))
                continue
            if eboard.entry is None:
                eboard.entry = encode_json(eboard_json(state, flipped=False))
            entries.append(eboard.entry)
        return "[" + ",".join(entries) + "]"

    def sources(self) -> list[dict[str, Any]]:
        """The ``sources`` answer (§3): one per port an e-board was heard on."""
        return [source_json(s) for s in self.states() if s.port]

    def sources_text(self) -> str:
        """:meth:`sources` as JSON text, each entry encoded once per change (as above)."""
        entries = []
        for eboard in self._in_order():
            if eboard.view.state.port:
                if eboard.source is None:
                    eboard.source = encode_json(source_json(eboard.view.state))
                entries.append(eboard.source)
        return "[" + ",".join(entries) + "]"

    def _in_order(self) -> list[_EBoard]:
        return sorted(self._boards.values(), key=lambda e: e.view.state.board)

    def serials_of(self, boards: Iterable[int]) -> list[str | None]:
        """The serial number of each board number, None where none was heard."""
        return [self._serial_of.get(board) for board in boards]
