"""One writer per journal: an advisory lock on a file beside it (``journal.db.lock``).

The lock belongs to the open file, so the operating system releases it when the process
ends, ``kill -9`` included: a crashed daemon never leaves a stale lock behind. The lock
file itself is left in place (removing it would race with the next daemon taking it).
"""

from __future__ import annotations

import os
import sys

__all__ = ["JournalLock"]


class JournalLock:
    """A non-blocking exclusive lock on ``<journal>.lock``.

    Args:
        journal_path: the journal's path; the lock file is this plus ``.lock``.
    """

    def __init__(self, journal_path: str) -> None:
        self.path = journal_path + ".lock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock; False when another process (or open file) holds it.

        Raises:
            OSError: the lock file cannot be created (e.g. a read-only folder).
        """
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _lock(fd)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        """Give the lock back (closing the file releases it)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


if sys.platform == "win32":
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
