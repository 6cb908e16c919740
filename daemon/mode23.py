"""Increments for clocks in mode 23, where the computer is in charge (pure).

A DGT clock in mode 23 ("computer controlled", dgt-protocol.md §8) counts down the running
side and, with the lever flag set, switches sides on a lever press — but adds no increment:
the computer must. :class:`IncrementControl` watches the clock readings of one board; at each
lever press it answers with the reading as it must be (the mover's time plus the increment,
FIDE Fischer mode) and the SETNRUN command that makes the clock show it (§7.5). Readings
that arrive before the clock confirmed the new times are stale and dropped.

A clock that turns out to add the increment itself (a normal Fischer option, not mode 23)
is left alone from its first press on.
"""

from __future__ import annotations

import dataclasses
import enum

from drivers.dgt.commands import ClockSetAndRun
from drivers.observations import ClockObserved, ClockSide

__all__ = ["IncrementControl", "IncrementState"]


class IncrementState(enum.Enum):
    """Whether dgtcast adds the increments of this clock."""

    WATCHING = "watching"  # no press seen yet
    ADDING = "adding"  # mode 23: dgtcast adds each increment
    SETTING = "setting"  # a SETNRUN is on its way; readings are stale until it is done
    CLOCK_ADDS = "clock_adds"  # the clock adds increments itself: nothing to do


class IncrementControl:
    """Adds ``increment`` seconds to the mover after each lever press (mode 23).

    Args:
        increment: seconds per move of the time control (Fischer, from move 1).
    """

    def __init__(self, increment: int) -> None:
        self.increment = increment
        self.state = IncrementState.WATCHING
        self._last: ClockObserved | None = None

    def receive_reading(
        self, reading: ClockObserved
    ) -> tuple[ClockObserved | None, ClockSetAndRun | None]:
        """Take one reading; returns the reading to record (None: stale) and a command to send.

        After a command, call :meth:`receive_done` when the clock acknowledged it (or failed).
        """
        if self.state is IncrementState.SETTING:
            return None, None
        last, self._last = self._last, reading
        mover = _presser(last, reading)
        if mover is None or self.increment == 0 or self.state is IncrementState.CLOCK_ADDS:
            return reading, None
        assert last is not None
        gained = _seconds(reading, mover) - _seconds(last, mover)
        if self.state is IncrementState.WATCHING and 2 * gained >= self.increment:
            self.state = IncrementState.CLOCK_ADDS
            return reading, None
        return self._add(reading, mover)

    def receive_done(self) -> None:
        """The SETNRUN was acknowledged, or failed: readings count again."""
        if self.state is IncrementState.SETTING:
            self.state = IncrementState.ADDING

    def _add(
        self, reading: ClockObserved, mover: ClockSide
    ) -> tuple[ClockObserved, ClockSetAndRun]:
        field = "left_seconds" if mover is ClockSide.LEFT else "right_seconds"
        corrected = dataclasses.replace(
            reading, **{field: getattr(reading, field) + self.increment}
        )
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
