"""A board that floods the line with sensor changes costs little (issue 17.10; pure).

Hands change a few squares a second; a faulty board or a piece flickering on a sensor
can report thousands. Each placement is journalled and matched, so such a board used
to take a core and grow the journal by megabytes a minute. :class:`FloodGuard` counts
the placements of the last second, and among them the *flickers* (a placement that
goes back to the one before the last: A, B, A): past ``limit`` placements or
``flicker_limit`` flickers the board *floods*, and from then on at most one placement
every ``interval`` seconds goes on (the latest: the caller holds it and sends it when
:meth:`FloodGuard.next_release` comes). Once both have stayed under half their limit
for ``calm`` seconds the board is calm again. A whole board set up at once (64 updates)
or play far faster than life (tests) stays under both.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

__all__ = ["FloodGuard"]


@dataclass(slots=True)
class FloodGuard:
    """Decides which placements of one board go on.

    Attributes:
        limit: placements in one second beyond which the board floods.
        flicker_limit: flickers (A, B, A) in one second beyond which it floods.
        interval: while flooding, at most one placement this often.
        calm: seconds under half the limit before the board is calm again.
        flooding: whether the board floods now.
        held: placements held back since the board started flooding (for the log).
    """

    limit: int = 500
    flicker_limit: int = 100
    interval: float = 0.1
    calm: float = 5.0
    flooding: bool = False
    held: int = 0
    _times: deque[float] = field(default_factory=deque)
    _flickers: deque[float] = field(default_factory=deque)
    _last_sent: float = -1e18
    _quiet_since: float | None = None

    def admit(self, at: float, *, flicker: bool = False) -> bool:
        """A placement sensed at ``at`` (``flicker``: it is the one before the last
        again): may it go on now? (False: hold it back.)"""
        self._count(self._times, self.limit, at)
        if flicker:
            self._count(self._flickers, self.flicker_limit, at)
        if not self.flooding and (
            len(self._times) > self.limit or len(self._flickers) > self.flicker_limit
        ):
            self.flooding, self._quiet_since = True, None
        if not self.flooding or at - self._last_sent >= self.interval:
            self._last_sent = at
            return True
        self.held += 1
        return False

    def next_release(self) -> float:
        """When a held placement may go on (the caller sends the latest one then)."""
        return self._last_sent + self.interval

    def released(self, at: float) -> None:
        """The caller sent the held placement at ``at``."""
        self._last_sent = at

    def calmed(self, now: float) -> bool:
        """Whether the board stopped flooding by ``now`` (True once, on the change)."""
        if not self.flooding:
            return False
        self._trim(self._times, self.limit, now)
        self._trim(self._flickers, self.flicker_limit, now)
        if len(self._times) > self.limit // 2 or len(self._flickers) > self.flicker_limit // 2:
            self._quiet_since = None
            return False
        if self._quiet_since is None:
            self._quiet_since = now
        if now - self._quiet_since < self.calm:
            return False
        self.flooding, self.held, self._quiet_since = False, 0, None
        return True

    @property
    def rate(self) -> int:
        """Placements counted in the last second (at most ``limit + 1``)."""
        return len(self._times)

    @staticmethod
    def _count(times: deque[float], limit: int, at: float) -> None:
        times.append(at)
        FloodGuard._trim(times, limit, at)

    @staticmethod
    def _trim(times: deque[float], limit: int, now: float) -> None:
        while times and times[0] <= now - 1.0:
            times.popleft()
        while len(times) > limit + 1:
            times.popleft()
