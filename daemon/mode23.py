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

Moves are counted as a multi-period DGT clock counts them: one per lever press of that
side, from the last time the clock was set (:meth:`IncrementControl.reset`). White's side
is the configured one, else the side that runs first.

A clock that turns out to add the time itself (a normal Fischer or multi-period option,
not mode 23) is left alone from the first press that should have gained time.
"""

from __future__ import annotations

import dataclasses
import enum

from daemon.durations import ClockRules, TimeControl
from drivers.dgt.commands import ClockSetAndRun
from drivers.observations import ClockObserved, ClockSide

__all__ = ["IncrementControl", "IncrementState"]


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
    """

    def __init__(
        self, rules: ClockRules | TimeControl, *, white_side: ClockSide | None = None
    ) -> None:
        self.rules = rules if isinstance(rules, ClockRules) else ClockRules.uniform(rules)
        self.state = IncrementState.WATCHING
        self._configured = white_side
        self._white_side = white_side
        self._presses: dict[ClockSide, int] = {}
        self._last: ClockObserved | None = None

    @property
    def presses(self) -> dict[ClockSide, int]:
        """Lever presses per side since the clock was set (the clock's move counters)."""
        return dict(self._presses)

    def reset(self) -> None:
        """The clock was set for a new game: count moves afresh, learn White's side again."""
        self._presses.clear()
        self._white_side = self._configured
        self._last = None
        if self.state is not IncrementState.CLOCK_ADDS:
            self.state = IncrementState.WATCHING

    def receive_reading(
        self, reading: ClockObserved
    ) -> tuple[ClockObserved | None, ClockSetAndRun | None]:
        """Take one reading; returns the reading to record (None: stale) and a command to send.

        After a command, call :meth:`receive_done` when the clock acknowledged it (or failed).
        """
        if self.state is IncrementState.SETTING:
            return None, None
        last, self._last = self._last, reading
        if self._white_side is None and reading.running is not None:
            self._white_side = reading.running
        mover = _presser(last, reading)
        if mover is None or self.state is IncrementState.CLOCK_ADDS:
            return reading, None
        assert last is not None
        move = self._presses[mover] = self._presses.get(mover, 0) + 1
        expected = self._control(mover).added_after(move)
        if expected == 0:
            return reading, None
        gained = _seconds(reading, mover) - _seconds(last, mover)
        if self.state is IncrementState.WATCHING and 2 * gained >= expected:
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


def _presser(last: ClockObserved | None, reading: ClockObserved) -> ClockSide | None:
    """The side that pressed its lever between two readings, if one did."""
    if last is None or last.running is None or reading.running is None:
        return None
    return last.running if reading.running is not last.running else None


def _seconds(reading: ClockObserved, side: ClockSide) -> int:
    return reading.left_seconds if side is ClockSide.LEFT else reading.right_seconds
