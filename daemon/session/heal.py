"""When a live board session reads its board again: the board, then its memory (pure).

A placement that matches nothing of the game has the whole board read again once per
episode (``refresh_after``: a lost field update, docs/faults.md); one that still matches
nothing of a game under way after ``heal_after`` has the board's memory read again, which
replays what was played since the last agreement. While the board stays out of sync the
memory is read again with a growing back-off; in sync again, the next episode starts
afresh. An arbiter's ``rebuild_from_memory`` reads it at once, whatever the back-off says,
and counts as one of its tries. A whole read that shows the field updates lost something
has the memory read too, once the board had ``heal_after`` to settle: a move whose updates
were lost may have let the game be read along another line (docs/faults.md).
:class:`~daemon.session.core.SessionCore` asks
:class:`Healing` when, and tells it what happened.
"""

from __future__ import annotations

import math

from base.backoff import Backoff
from daemon.session.states import SessionSettings

__all__ = ["Healing"]


class Healing:
    """The refresh and memory-read times of one board session (see the module docstring)."""

    def __init__(self, settings: SessionSettings) -> None:
        self._settings = settings
        self._backoff = Backoff(settings.heal_backoff)
        self._not_before = -math.inf
        self._refreshed_episode: float | None = None
        #: The memory read under way is a heal's (or an arbiter's), not a connection's.
        self.reading = False
        #: When the memory is read to check the moves recorded: a whole read showed the
        #: field updates had lost something (a move may have been read from a phantom).
        self.check_at = math.inf

    @property
    def tries(self) -> int:
        """Memory reads of this out-of-sync episode so far."""
        return self._backoff.failures

    def reset(self) -> None:
        """A new connection: nothing read yet."""
        self.reading = False
        self.check_at = math.inf
        self._not_before = -math.inf
        self._backoff.reset()

    def refresh_due(self, since: float | None) -> float:
        """When the whole board is read again, the placement unmatched ``since``."""
        if since is None or since == self._refreshed_episode:
            return math.inf
        return since + self._settings.refresh_after

    def refreshed(self, since: float | None) -> None:
        """The whole board was asked for the episode that started ``since``."""
        self._refreshed_episode = since

    def heal_due(self, since: float | None) -> float:
        """When the memory is read again, the game under way unmatched ``since``."""
        if since is None:
            if self._backoff.failures:  # in sync again: the next episode starts afresh
                self._backoff.reset()
                self._not_before = -math.inf
            return math.inf
        return max(since + self._settings.heal_after, self._not_before)

    def read_ended(self, at: float) -> None:
        """A memory read ended at ``at``: a heal's is tried again after the back-off."""
        if self.reading:
            self._not_before = at + self._backoff.next_delay()
