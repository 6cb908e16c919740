"""A chess table for tests: the emulator's board and clock, the DGT observers, a tracker.

Everything is the real part wired as the daemon wires it, in virtual time: hands act on
:class:`PhysicalBoard`, whose sensor changes become DGT ``FieldUpdated`` events, turned
into placements by the driver's :class:`SensorBoard`; the emulator's :class:`ChessClock`
readings become ``ClockTimes`` and then :class:`ClockObserved`. Between actions the table
lets time pass second by second, reporting clock changes (UPDATE_NICE style) and firing
the tracker's timers at their deadlines.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

import chess

from daemon.game.events import GameEvent, MoveMade, MovesWithdrawn
from daemon.game.state import TrackerSettings
from daemon.game.tracker import GameTracker
from drivers.dgt.events import BoardDump, FieldUpdated
from drivers.dgt.observe import SensorBoard, clock_observation
from drivers.emulator.clock import ChessClock, ClockSettings, Side, other_side
from drivers.emulator.firmware import clock_times
from drivers.emulator.physical import PhysicalBoard, SensorChange
from drivers.emulator.player import Action, Lift, Place, PressLever, StartClock, TimedAction
from drivers.observations import PlacementObserved

__all__ = ["BLITZ", "Table", "final_moves"]

T = TypeVar("T")

#: 3 min + 2 s, as in the real recordings 1 and 2.
BLITZ = ClockSettings(base_seconds=180, increment_seconds=2)


def final_moves(events: list[GameEvent]) -> list[str]:
    """The game's moves (UCI) once every withdrawal is applied, in ply order."""
    plies: dict[int, str] = {}
    for event in events:
        if isinstance(event, MovesWithdrawn):
            plies = {ply: uci for ply, uci in plies.items() if ply < event.from_ply}
        elif isinstance(event, MoveMade):
            plies = {ply: uci for ply, uci in plies.items() if ply < event.ply}
            plies[event.ply] = event.uci
    return [plies[ply] for ply in sorted(plies)]


class Table:
    """One board with (or without) its clock, watched by a :class:`GameTracker`.

    Args:
        settings: the tracker's settings.
        clock: the clock's time control; None = no clock cabled.
        rotated: the board is set up turned by 180°.
        white_side: where White sits at the clock (its lever starts up).
        placement: the pieces at first (default: the start position).
    """

    def __init__(
        self,
        *,
        settings: TrackerSettings | None = None,
        clock: ClockSettings | None = BLITZ,
        rotated: bool = False,
        white_side: Side = "left",
        placement: chess.BaseBoard | None = None,
    ) -> None:
        self.now = 0.0
        self.white_side: Side = white_side
        self.physical = PhysicalBoard(placement, rotated=rotated)
        self.sensor = SensorBoard()
        self.clock: ChessClock | None = None
        if clock is not None:
            settings_with_lever = dataclasses.replace(clock, lever_up=white_side)
            self.clock = ChessClock(settings_with_lever)
        self.tracker = GameTracker(settings)
        self.events: list[GameEvent] = []
        self._reported: object = None
        self._observe(self.sensor.receive_event(BoardDump(squares=self.physical.fields()), 0.0))
        self._report_clock()

    # -- hands --------------------------------------------------------------------------

    def lift(self, square: chess.Square) -> chess.Piece:
        """Take the piece off ``square``."""
        piece, changes = self.physical.lift(square)
        self._sense(changes)
        return piece

    def place(self, square: chess.Square, piece: chess.Piece) -> None:
        """Put ``piece`` on ``square`` (pushing away what stood there)."""
        self._sense(self.physical.place(square, piece))

    def slide(self, origin: chess.Square, *squares: chess.Square, pause: float = 0.2) -> None:
        """Lift the piece on ``origin`` and put it on each of ``squares`` in turn."""
        piece = self.lift(origin)
        for index, square in enumerate(squares):
            self.wait(pause)
            if index:
                self.lift(squares[index - 1])
                self.wait(pause)
            self.place(square, piece)

    def set_up(self, placement: chess.BaseBoard) -> None:
        """Arrange the whole board at once (the arbiter resetting it)."""
        for change in self.physical.set_up(placement):
            self._sense([change])

    def press(self, color: chess.Color) -> None:
        """The player of ``color`` presses their lever."""
        if self.clock is not None:
            side = self.white_side if color == chess.WHITE else other_side(self.white_side)
            self.clock.press_lever(side, self.now)
            self._report_clock()

    def start_clock(self) -> None:
        """The arbiter presses play."""
        if self.clock is not None:
            self.clock.start(self.now)
            self._report_clock()

    def play(self, uci: str, *, think: float = 2.0, press: bool = True) -> None:
        """Think, make the move the plain way (captured piece pushed away), press."""
        board = self.tracker.board
        move = chess.Move.from_uci(uci)
        self.wait(think)
        if board.is_castling(move):
            rook_from, rook_to = _rook_hop(board, move)
            self.slide(move.from_square, _king_target(board, move))
            self.slide(rook_from, rook_to)
        else:
            if board.is_en_passant(move):
                self.lift(move.to_square ^ 8)
            piece = self.lift(move.from_square)
            self.wait(0.3)
            if move.promotion is not None:
                piece = chess.Piece(move.promotion, board.turn)
            self.place(move.to_square, piece)
        if press:
            self.wait(0.5)
            self.press(board.turn)

    def accept(self) -> bool:
        """The arbiter accepts the board as it stands (an arbiter command)."""
        accepted = self.tracker.accept_position(self.now)
        self._collect()
        return accepted

    def apply(self, actions: list[TimedAction]) -> None:
        """Carry out a human player's schedule at its times."""
        for timed in actions:
            self.advance_to(timed.at)
            self._act(timed.action)

    # -- time ---------------------------------------------------------------------------

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass."""
        self.advance_to(self.now + seconds)

    def advance_to(self, when: float) -> None:
        """Let time pass until ``when``: clock seconds tick, tracker timers fire."""
        while True:
            due = [t for t in (self._next_clock_change(), self.tracker.next_deadline()) if t]
            step = min(due, default=None)
            if step is None or step > when:
                break
            self.now = max(self.now, step)
            self.tracker.receive_tick(self.now)
            self._report_clock()
            self._collect()
        self.now = max(self.now, when)
        self.tracker.receive_tick(self.now)
        self._collect()

    # -- results ------------------------------------------------------------------------

    def moves(self) -> list[str]:
        """The moves of the game as published so far (withdrawals applied)."""
        return final_moves(self.events)

    def of_type(self, kind: type[T]) -> list[T]:
        """The events of one kind, in order."""
        return [event for event in self.events if isinstance(event, kind)]

    # -- internals ----------------------------------------------------------------------

    def _act(self, action: Action) -> None:
        if isinstance(action, Lift):
            self.lift(action.square)
        elif isinstance(action, Place):
            self.place(action.square, action.piece)
        elif isinstance(action, PressLever):
            if self.clock is not None:
                self.clock.press_lever(action.side, self.now)
                self._report_clock()
        elif isinstance(action, StartClock):
            self.start_clock()

    def _sense(self, changes: list[SensorChange]) -> None:
        for change in changes:
            event = FieldUpdated(field=change.field, piece=change.code)
            self._observe(self.sensor.receive_event(event, self.now))

    def _observe(self, placement: PlacementObserved | None) -> None:
        if placement is not None:
            self.tracker.receive_placement(placement)
            self._collect()

    def _next_clock_change(self) -> float | None:
        return None if self.clock is None else self.clock.next_change(self.now)

    def _report_clock(self) -> None:
        if self.clock is None:
            return
        reading = self.clock.reading(self.now)
        if reading == self._reported:
            return
        self._reported = reading
        self.tracker.receive_clock(clock_observation(clock_times(reading), self.now))
        self._collect()

    def _collect(self) -> None:
        self.events.extend(self.tracker.events_received())


def _king_target(board: chess.Board, move: chess.Move) -> chess.Square:
    rank = chess.square_rank(move.from_square)
    return chess.square(6 if board.is_kingside_castling(move) else 2, rank)


def _rook_hop(board: chess.Board, move: chess.Move) -> tuple[chess.Square, chess.Square]:
    rank = chess.square_rank(move.from_square)
    if board.is_kingside_castling(move):
        return chess.square(7, rank), chess.square(5, rank)
    return chess.square(0, rank), chess.square(3, rank)
