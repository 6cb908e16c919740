"""Increments and periods for clocks in mode 23, where the computer is in charge (pure).

A DGT clock in mode 23 ("computer controlled", dgt-protocol.md §8) counts down the running
side and, with the lever flag set, switches sides on a lever press — but adds nothing:
no increment, no next period. The computer must. :class:`IncrementControl` watches the
clock readings of one board; at each lever press it answers with the reading as it must
be (the mover's time plus what the time control adds after that move: the increment,
and the next period's time after the move that completes a period's quota, e.g. 1800 s +
30 s after move 40 of "40/5400+30:1800+30") and the SETNRUN command that makes the clock
show it (§7.5). Readings that arrive before the clock confirmed the new times are stale
and dropped.

Which move a press completes comes from the game when it is known (``move_number``: the
tracker's position, so a daemon restarted mid-game still adds the bonus after move 40);
otherwise moves are counted as a multi-period DGT clock counts them, one per lever press
of that side since the clock was last set (:meth:`IncrementControl.reset`). White's side
is the configured one, else the side that runs first.

The opponent may press while the SETNRUN is on its way (a fast reply). If the clock
carries the command out after that press, it sets the old running side again and the
press is undone; the first reading after the acknowledgement then shows the opponent's
time running once more. The press seen meanwhile is then carried out here: the opponent's
time as it was at the press, plus what that move earns, and the mover's time running
since then.

A press that completes no move gains nothing: the press that starts the clock at the
round's start (Black's lever, to start White's time; or either lever pressed before White
has moved), which the game reports as move 0 (:data:`MoveNumber`).

Who adds the time is decided per game from what the clock itself does: a clock that
turns out to add it (a normal Fischer or multi-period option, not mode 23) is left alone
from the first press that gained the time on its own, *whenever* that happens (a clock
swapped between rounds, or set by hand), so dgtcast never adds time to a clock that adds
its own. :meth:`IncrementControl.reset` forgets the decision: the daemon calls it at
every round change, reconnection and clock set (docs/daemon.md, "Mode 23").
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable

import chess

from daemon.game.durations import ClockRules, TimeControl
from drivers.dgt.commands import ClockSetAndRun
from drivers.observations import ClockObserved, ClockSide

__all__ = ["IncrementControl", "IncrementState", "MoveNumber", "move_number_of"]

#: The number of the move a press by a side completes, from the game; None = unknown,
#: 0 = none (the press starts the clock before White's first move).
MoveNumber = Callable[[ClockSide], int | None]


def move_number_of(board: chess.Board, color: chess.Color) -> int:
    """The number of ``color``'s move that a press now completes.

    The move is usually still pending (``color`` to move in ``board``): the full-move
    number. If it was already published before the press (its placement settled), White's
    is still the full-move number and Black's the one before it.
    """
    return board.fullmove_number - (color == chess.BLACK and board.turn == chess.WHITE)


class IncrementState(enum.Enum):
    """Whether dgtcast adds the increments of this clock."""

    WATCHING = "watching"  # no press that gains time seen yet
    ADDING = "adding"  # mode 23: dgtcast adds each increment and period
    SETTING = "setting"  # a SETNRUN is on its way; readings are stale until it is done
    CLOCK_ADDS = "clock_adds"  # the clock adds time itself: nothing to do


class IncrementControl:
    """Adds what the time control gives after each lever press (mode 23).

    Args:
        rules: each colour's time control, or one control for both.
        white_side: the clock side White sits at; None = the side that runs first.
        move_number: the move a press by a side completes, from the game; without it
            (or when it answers None) presses are counted.
    """

    def __init__(
        self,
        rules: ClockRules | TimeControl,
        *,
        white_side: ClockSide | None = None,
        move_number: MoveNumber | None = None,
    ) -> None:
        self.rules = rules if isinstance(rules, ClockRules) else ClockRules.uniform(rules)
        self._move_number = move_number
        self.state = IncrementState.WATCHING
        self._configured = white_side
        self._white_side = white_side
        self._presses: dict[ClockSide, int] = {}
        self._last: ClockObserved | None = None
        self._seed: ClockObserved | None = None  # the journal's reading (see reset)
        self._reply: ClockObserved | None = None  # a press seen while a SETNRUN was on its way

    @property
    def presses(self) -> dict[ClockSide, int]:
        """The move each side's last press completed (the clock's move counters)."""
        return dict(self._presses)

    def reset(self, last: ClockObserved | None = None) -> None:
        """A new game, a clock set or a reconnection: count moves afresh, learn White's
        side again, and decide again who adds the time (the clock may be another one).

        ``last``: on a reconnection (a restart too), the last reading the journal holds.
        When the first reading now shows the other side running and neither time grew
        (a mode 23 clock adds nothing by itself), a lever was pressed while nobody
        listened: that press gets its increment like any other.
        """
        self._presses.clear()
        self._white_side = self._configured
        self._last = None
        self._seed = last
        self._reply = None
        self.state = IncrementState.WATCHING

    def receive_reading(
        self, reading: ClockObserved
    ) -> tuple[ClockObserved | None, ClockSetAndRun | None]:
        """Take one reading; returns the reading to record (None: stale) and a command to send.

        After a command, call :meth:`receive_done` when the clock acknowledged it (or failed).
        """
        if self.state is IncrementState.SETTING:
            sent = self._last
            if sent is not None and reading.running not in (None, sent.running):
                self._reply = reading
            return None, None
        seed, self._seed = self._seed, None
        if self._last is None and seed is not None and _only_ran(seed, reading):
            self._last = seed
        reply, self._reply = self._reply, None
        if reply is not None and self._last is not None and reading.running is self._last.running:
            reading = _redo_press(reply, reading, self._last)
        last, self._last = self._last, reading
        if self._white_side is None and reading.running is not None:
            self._white_side = reading.running
        mover = _presser(last, reading)
        if mover is None or self.state is IncrementState.CLOCK_ADDS:
            return reading, None
        assert last is not None
        known = None if self._move_number is None else self._move_number(mover)
        move = self._presses.get(mover, 0) + 1 if known is None else known
        if move < 1:
            return reading, None  # the clock started: no move completed, nothing to add
        self._presses[mover] = move
        expected = self._control(mover).added_after(move)
        if expected == 0:
            return reading, None
        gained = _seconds(reading, mover) - _seconds(last, mover)
        if 2 * gained >= expected:  # the clock added it itself: never add it again
            self.state = IncrementState.CLOCK_ADDS
            return reading, None
        return self._add(reading, mover, expected)

    def receive_done(self) -> None:
        """The SETNRUN was acknowledged, or failed: readings count again."""
        if self.state is IncrementState.SETTING:
            self.state = IncrementState.ADDING

    def _control(self, side: ClockSide) -> TimeControl:
        white = self._white_side is None or side is self._white_side
        return self.rules.white if white else self.rules.black

    def _add(
        self, reading: ClockObserved, mover: ClockSide, seconds: int
    ) -> tuple[ClockObserved, ClockSetAndRun]:
        field = "left_seconds" if mover is ClockSide.LEFT else "right_seconds"
        corrected = dataclasses.replace(reading, **{field: getattr(reading, field) + seconds})
        assert corrected.running is not None
        command = ClockSetAndRun(
            left_seconds=corrected.left_seconds,
            right_seconds=corrected.right_seconds,
            run=corrected.running.value,
            toggle_on_lever=True,
        )
        self._last = corrected
        self.state = IncrementState.SETTING
        return corrected, command


def _redo_press(reply: ClockObserved, now: ClockObserved, sent: ClockObserved) -> ClockObserved:
    """The reading as it would be had the clock not undone ``reply``'s press.

    ``sent`` is the reading the SETNRUN set (the opponent running); the opponent pressed
    at ``reply``: its time stays as it was then, and the mover's has run since.
    """
    assert reply.running is not None
    assert sent.running is not None
    opponent, mover = sent.running, reply.running
    ran = max(0, round(now.at - reply.at))
    times = {
        opponent: _seconds(reply, opponent),
        mover: max(0, _seconds(sent, mover) - ran),
    }
    return dataclasses.replace(
        now,
        left_seconds=times[ClockSide.LEFT],
        right_seconds=times[ClockSide.RIGHT],
        running=mover,
        lever=mover,
    )


def _only_ran(before: ClockObserved, now: ClockObserved) -> bool:
    """Whether ``now`` can follow ``before`` on a clock that only ran (nobody set it, and
    it added nothing: mode 23); a second's slack for the rounding of the readings."""
    return (
        before.connected
        and now.connected
        and now.left_seconds <= before.left_seconds + 1
        and now.right_seconds <= before.right_seconds + 1
    )


def _presser(last: ClockObserved | None, reading: ClockObserved) -> ClockSide | None:
    """The side that pressed its lever between two readings, if one did."""
    if last is None or last.running is None or reading.running is None:
        return None
    return last.running if reading.running is not last.running else None


def _seconds(reading: ClockObserved, side: ClockSide) -> int:
    return reading.left_seconds if side is ClockSide.LEFT else reading.right_seconds
