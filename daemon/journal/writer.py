"""Journal commits on a thread of their own, in the order they were handed over.

:class:`JournalThread` is a :class:`~daemon.journal.hold.HeldJournal` whose writes run on
one dedicated thread: the event loop hands it batches (tuples, never changed after) and
goes on; the thread writes them one after the other, holding what the disk refuses
exactly as :class:`HeldJournal` does, and resolves each batch's future once it is
durable (or held). The daemon publishes a group when its future is resolved
(``daemon/shell/service.py``), so nothing reaches a spectator before its records are in
the journal, and no commit waits on the loop.

The journal's writes all go through the thread once it is made (appends, snapshots,
retries); :meth:`close` writes what was handed over and ends the thread, after which
writes run in the caller's thread again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from daemon.journal.hold import HeldJournal
from daemon.journal.records import JournalEntry
from daemon.journal.store import Journal

__all__ = ["JournalThread"]

T = TypeVar("T")


class JournalThread(HeldJournal):
    """A held journal whose writes run, in order, on one thread (see the module docstring)."""

    def __init__(self, journal: Journal) -> None:
        super().__init__(journal)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="journal")
        self._closed = False
        self._closing = threading.Lock()

    def run(self, work: Callable[..., T], *args: object) -> Future[T]:
        """Run ``work(*args)`` on the journal's thread after what was handed over before.

        After :meth:`close`, it runs here and now (the future is already resolved).
        """
        with self._closing:
            if not self._closed:
                return self._thread.submit(work, *args)
        done: Future[T] = Future()
        try:
            done.set_result(work(*args))
        except BaseException as exc:  # handed to whoever reads the future
            done.set_exception(exc)
        return done

    def submit(self, entries: Iterable[JournalEntry]) -> Future[bool]:
        """Hand a batch over; its future says True once written, False when held."""
        return self.run(super().append_many, tuple(entries))

    def append_many(self, entries: Iterable[JournalEntry]) -> bool:
        """Write ``entries`` after everything handed over before; waits for it."""
        return self.submit(entries).result()

    def retry_soon(self) -> Future[bool]:
        """Write what is held, on the thread; the future says whether nothing is held."""
        return self.run(super().retry)

    def retry(self) -> bool:
        """Write what is held; waits for it (see :meth:`retry_soon`)."""
        return self.retry_soon().result()

    def close(self) -> None:
        """Write everything handed over, then end the thread."""
        with self._closing:
            self._closed = True
        self._thread.shutdown(wait=True)
