"""At most one log line every so often about one kind of thing, with a count (pure).

A flood (wrong tokens from rotating addresses, refused pages, bad calls) must not fill
the disk with log lines: each place that logs what a client did keeps a
:class:`LogLimit` and writes a line only when :meth:`LogLimit.due` says so, naming how
many it left out.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["LogLimit"]


class LogLimit:
    """Counts occurrences; one line may be written every ``every`` seconds.

    Args:
        every: seconds between two lines.
        clock: time source (tests move it by hand).
    """

    def __init__(self, every: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self._clock = clock
        self._unlogged = 0
        self._logged_at = -1e18

    def due(self) -> int | None:
        """Count one occurrence; when a line is due, how many it stands for (else None)."""
        self._unlogged += 1
        now = self._clock()
        if now - self._logged_at < self.every:
            return None
        count, self._unlogged, self._logged_at = self._unlogged, 0, now
        return count
