"""A clock the test moves by hand, for code that takes its clock as a callable."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class HandClock:
    """Reads ``now``, which only the test moves (``clock.now += 30``)."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now
