"""Clock tracking from :class:`ClockObserved` readings, in whole seconds (docs/protocol.md §7).

What the clock tells the game:

* **Which side is White.** A setting, or learned: the side that runs while the start
  position stands is White's, for now (a press that only starts the clock, Black's lever
  after play was pressed with Black's lever up, hands it over); the side whose lever goes
  down after a move by a known colour is that colour's, for good (§7.2 "Observed":
  recording 2, set up rotated, has White on the right). Learned again for every game.
* **Lever presses.** The running side changing from one side to the other is a press by
  the side that stopped. The first reading after it already shows the increment added
  (§7.4: "a lever press yields one message with the new status and the increment
  added"), so it gives the mover's ``[%clk]``; the reading before it gives the time just
  before the press.
* **Elapsed time** ``[%emt]`` = the mover's time when the turn began + the time the
  press adds − the time after the press. What a press adds comes from the time control:
  the increment, plus the next period's time after the move that completes a period's
  quota (move 40 of "40/5400+30:1800+30" adds 1830 s), so ``[%emt]`` stays exact across
  the period change. Fischer clocks start at base + one increment (§7.2), so the first
  move is measured from that time too. When the clock added something else (a clock
  set wrongly, missing the bonus: the arbiter gets a ``clock_mismatch`` alert), or
  without a configured time control, the time it did add is used (equivalently: turn
  start − time before the press), so ``[%emt]`` stays the time spent.
* **Flag fall** (FIDE Laws 6.9): the flag bit, or 0:00:00 on the side that was running.
  The result is a loss, or a draw when the opponent cannot checkmate
  (``has_insufficient_material``); always provisional. Reported once per game, not after
  the game has ended.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import chess

from base.colors import Color
from base.drain import drain
from daemon.game.durations import ClockRules
from daemon.game.events import ClockSidesLearned, ClockUpdated, FlagFell, GameEvent
from daemon.game.rules import color_name, flag_result
from drivers.observations import ClockObserved, ClockSide

__all__ = [
    "ClockContext",
    "ClockTracker",
    "LeverPress",
    "MoveClock",
    "other_side",
    "running_for",
]


def other_side(side: ClockSide) -> ClockSide:
    """The opposite side of the clock."""
    return ClockSide.RIGHT if side is ClockSide.LEFT else ClockSide.LEFT


def _seconds(reading: ClockObserved, side: ClockSide) -> int:
    return reading.left_seconds if side is ClockSide.LEFT else reading.right_seconds


def _flag(reading: ClockObserved, side: ClockSide) -> bool:
    return reading.left_flag if side is ClockSide.LEFT else reading.right_flag


@dataclass(frozen=True, slots=True, kw_only=True)
class LeverPress:
    """The side that was running pressed its lever: its time stopped, the other's started.

    Attributes:
        side: the side whose lever went down.
        before: that side's time in the last reading before the press.
        after: its time in the first reading after the press (increment included).
        started: its time when the turn now ended began.
    """

    side: ClockSide
    before: int
    after: int
    started: int | None
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveClock:
    """The clock annotations of one move (``[%clk]``, time before the press, ``[%emt]``)."""

    clock: float | None = None
    clock_before: float | None = None
    emt: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockContext:
    """What the game knows when a reading arrives, for learning sides and judging flags.

    Attributes:
        board: the game's position (the opponent's material decides a flag fall).
        start_stands: the start position stands and no move is in progress.
        moving: the colour of a move seen on the board but not yet completed.
        ended: the game is over; a later flag fall is not reported.
    """

    board: chess.Board
    start_stands: bool = False
    moving: chess.Color | None = None
    ended: bool = False


def running_for(reading: ClockObserved | None, side: ClockSide | None) -> ClockObserved | None:
    """``reading`` with ``side`` running (the side to move when the game's last move was
    made), if another ran: presses followed live since then (moves whose field updates
    were lost) are the board's memory's to tell again when it is replayed, so the first
    replayed reading is no press of its own."""
    if reading is None or side is None or not reading.connected:
        return reading
    if reading.running in (None, side):
        return reading
    return dataclasses.replace(reading, running=side, lever=side)


class ClockTracker:
    """Follows one clock for one board; owned by the game tracker.

    Args:
        white_side: the clock side White sits at, when the arbiter set it; None = learn.
        increment: the time control's increment in seconds; None = as the clock adds it.
        rules: each colour's time control; when given, it says what each press adds
            (increments and periods) and ``increment`` is not used.
    """

    def __init__(
        self,
        *,
        white_side: ClockSide | None = None,
        increment: float | None = None,
        rules: ClockRules | None = None,
    ):
        self._configured = white_side
        self._increment = increment
        self._rules = rules
        self._white_side = white_side
        self._provisional = False  # learnt from the start position, not from a move yet
        self._last: ClockObserved | None = None
        self._started: dict[ClockSide, int] = {}
        self._flag_reported = False
        self._last_update: tuple[int, int, ClockSide | None] | None = None
        self._events: list[GameEvent] = []

    @property
    def white_side(self) -> ClockSide | None:
        """The side White sits at, None while unknown."""
        return self._white_side

    @property
    def sides_sure(self) -> bool:
        """White's side is configured, or learnt from a press that completed a move."""
        return self._white_side is not None and not self._provisional

    @property
    def last(self) -> ClockObserved | None:
        """The last reading taken, None before any."""
        return self._last

    @property
    def is_running(self) -> bool:
        """A connected clock with one side's time counting down."""
        last = self._last
        return last is not None and last.connected and last.running is not None

    @property
    def is_connected(self) -> bool:
        """The last reading came from a connected clock."""
        return self._last is not None and self._last.connected

    @property
    def running_color(self) -> chess.Color | None:
        """The colour whose time runs, None when stopped or while the sides are unknown."""
        last = self._last
        if last is None or not last.connected or last.running is None:
            return None
        return self.color_of(last.running)

    def color_of(self, side: ClockSide) -> chess.Color | None:
        """The colour sitting at ``side``, None while unknown."""
        if self._white_side is None:
            return None
        return chess.WHITE if side is self._white_side else chess.BLACK

    def side_of(self, color: chess.Color) -> ClockSide | None:
        """The clock side of ``color``, None while unknown."""
        if self._white_side is None:
            return None
        return self._white_side if color == chess.WHITE else other_side(self._white_side)

    def seconds(self, color: chess.Color) -> int | None:
        """The last reading of ``color``'s time, None without a connected clock."""
        side = self.side_of(color)
        if side is None or not self.is_connected or self._last is None:
            return None
        return _seconds(self._last, side)

    def correct_sides(self, white_side: ClockSide, at: float) -> bool:
        """White sits at ``white_side``, as the board's memory tells (a press learnt from
        was one whose move the field updates hid); True when that changes the sides."""
        if self._configured is not None or white_side is self._white_side:
            return False
        self._white_side, self._provisional = white_side, False
        self._last_update = None
        self._events.append(ClockSidesLearned(white_side=white_side, at=at))
        return True

    def rewind(self, turn: chess.Color) -> None:
        """Take the last reading as the game's last move left the clock, ``turn``'s side
        running (:func:`running_for`): the board's memory is about to be replayed."""
        self._last = running_for(self._last, self.side_of(turn))

    def reset(self) -> None:
        """A new game: learn the sides again, measure turns afresh, report a new flag."""
        self._white_side = self._configured
        self._provisional = False
        self._started.clear()
        self._flag_reported = False
        self._last_update = None

    def receive_clock(self, reading: ClockObserved, context: ClockContext) -> LeverPress | None:
        """Take one clock reading; returns the lever press it shows, if any.

        Call :meth:`events_received` next for the clock updates, learned sides and flags.
        """
        last, self._last = self._last, reading
        if not reading.connected:
            return None
        previous = last.running if last is not None and last.connected else None
        press = self._press(last, reading) if previous is not None else None
        self._note_turn_starts(reading, press)
        self._learn(reading, press, context)
        self._report_update(reading)
        self._report_flag(reading, previous, context)
        return press

    def added_by_press(self, color: chess.Color, move_number: int) -> int | None:
        """Seconds the time control adds to ``color`` after its move ``move_number``.

        None without a configured time control (the clock's own additions are trusted).
        """
        if self._rules is not None:
            return self._rules.of(color_name(color)).added_after(move_number)
        return None if self._increment is None else round(self._increment)

    def move_clock(
        self, color: chess.Color, press: LeverPress | None, shown: int | None, move_number: int = 1
    ) -> MoveClock:
        """The clock annotations of a move by ``color``.

        Args:
            press: the lever press that completed the move, if one did.
            shown: without a press, the mover's time shown when the move was seen.
            move_number: the move's number (its full-move number): it says what the
                press adds under a time control with periods.
        """
        if press is not None:
            emt = None
            if press.started is not None:
                added = press.after - press.before
                expected = self.added_by_press(color, move_number)
                if expected is not None and abs(added - expected) <= 1:
                    added = expected  # the reading before the press may be a second old
                emt = max(0, press.started + added - press.after)
            return MoveClock(clock=press.after, clock_before=press.before, emt=emt)
        if shown is None:
            return MoveClock()
        side = self.side_of(color)
        started = None if side is None else self._started.get(side)
        emt = None if started is None else max(0, started - shown)
        return MoveClock(clock=shown, clock_before=shown, emt=emt)

    def events_received(self) -> list[GameEvent]:
        """Drain the events the readings produced, in order."""
        return drain(self._events)

    # -- internals ------------------------------------------------------------------

    def _press(self, last: ClockObserved | None, reading: ClockObserved) -> LeverPress | None:
        if last is None or last.running is None or reading.running is None:
            return None
        if reading.running is last.running:
            return None
        side = last.running
        return LeverPress(
            side=side,
            before=_seconds(last, side),
            after=_seconds(reading, side),
            started=self._started.get(side),
            at=reading.at,
        )

    def _note_turn_starts(self, reading: ClockObserved, press: LeverPress | None) -> None:
        running = reading.running
        if running is None:
            return
        if press is not None or running not in self._started:
            self._started[running] = _seconds(reading, running)

    def _learn(
        self, reading: ClockObserved, press: LeverPress | None, context: ClockContext
    ) -> None:
        """White's side: for sure from the first press that completes a move; until then
        the side that runs while the start position stands, learnt again after each
        press that only starts the clock (Black's lever pressed to start White's time
        after play was pressed with Black's lever up)."""
        if self._configured is not None or (self._white_side and not self._provisional):
            return
        learned = self._white_side
        if press is not None and context.moving is not None:
            mover = press.side
            learned = mover if context.moving == chess.WHITE else other_side(mover)
            self._provisional = False
        elif context.start_stands and reading.running is not None:
            learned = reading.running
            self._provisional = True
        if learned is not None and learned is not self._white_side:
            self._white_side = learned
            self._events.append(ClockSidesLearned(white_side=learned, at=reading.at))

    def _report_update(self, reading: ClockObserved) -> None:
        white_side = self._white_side
        if white_side is None:
            # sides unknown: a stopped clock showing one time on both sides (as ``dgtcast
            # clocks set`` leaves it before the round) is each colour's, whoever sits where
            same = _seconds(reading, ClockSide.LEFT) == _seconds(reading, ClockSide.RIGHT)
            if not same or reading.running is not None:
                return
            white_side = ClockSide.LEFT
        black_side = other_side(white_side)
        state = (_seconds(reading, white_side), _seconds(reading, black_side), reading.running)
        if state == self._last_update:
            return
        self._last_update = state
        running: Color | None = None
        if reading.running is not None:
            running = "white" if reading.running is white_side else "black"
        self._events.append(
            ClockUpdated(white=state[0], black=state[1], running=running, at=reading.at)
        )

    def _report_flag(
        self, reading: ClockObserved, previous: ClockSide | None, context: ClockContext
    ) -> None:
        if self._flag_reported or context.ended:
            return
        for side in (ClockSide.LEFT, ClockSide.RIGHT):
            fallen = _flag(reading, side) or (
                _seconds(reading, side) == 0 and side in (reading.running, previous)
            )
            color = self.color_of(side)
            if fallen and color is not None:
                self._flag_reported = True
                result = flag_result(context.board, color)
                self._events.append(
                    FlagFell(
                        color=color_name(color), result=result, provisional=True, at=reading.at
                    )
                )
                return
