"""Clock readings for the increment control's tests (mode 23)."""

from __future__ import annotations

from drivers.observations import ClockObserved, ClockSide

__all__ = ["clock_reading"]


def clock_reading(
    left: int, right: int, running: ClockSide | None, *, at: float = 0.0
) -> ClockObserved:
    """A connected clock showing ``left`` and ``right`` seconds, ``running`` (None:
    paused, the lever on the left) at ``at``, no flag fallen."""
    return ClockObserved(
        left_seconds=left,
        right_seconds=right,
        left_flag=False,
        right_flag=False,
        running=running,
        lever=running or ClockSide.LEFT,
        connected=True,
        at=at,
    )
