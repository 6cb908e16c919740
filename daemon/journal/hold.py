"""Journal writes that survive a full or failing disk: held in memory, retried, in order.

:class:`HeldJournal` stands between the round service and the
:class:`~daemon.journal.store.Journal`. A batch the disk refuses (``database or disk is full``,
``disk I/O error``) is kept in memory, and every batch after it joins the queue behind it,
so the journal's order stays the order in which the core saw its inputs. :meth:`retry`
writes the queue once the disk takes it again. The service raises the arbiter alerts
(``journal_failed``, ``journal_recovered``) on the transitions this reports.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable

from daemon.journal.records import JournalEntry
from daemon.journal.store import Journal

__all__ = ["HeldJournal"]

log = logging.getLogger(__name__)


class HeldJournal:
    """Appends to ``journal`` in order; holds what cannot be written and retries it.

    Args:
        journal: the open journal.
    """

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._held: list[JournalEntry] = []
        #: Why the last write failed; None while everything is written.
        self.failure: str | None = None

    @property
    def held(self) -> int:
        """Records waiting in memory."""
        return len(self._held)

    def append_many(self, entries: Iterable[JournalEntry]) -> bool:
        """Write ``entries`` after those held; False when they are held in memory.

        Raises:
            ValueError, TypeError: a record that is not JSON data (a bug; nothing held).
        """
        batch = list(entries)
        if self._held:
            self._held.extend(batch)
            return self.retry()
        try:
            self.journal.append_many(batch)
        except sqlite3.DatabaseError as exc:
            self._hold(batch, exc)
            return False
        return True

    def retry(self) -> bool:
        """Write what is held; True when nothing is held any more."""
        if not self._held:
            return True
        try:
            self.journal.append_many(self._held)
        except sqlite3.DatabaseError as exc:
            self.failure = str(exc)
            return False
        log.warning("= journal written again: %d held records are in it", len(self._held))
        self._held.clear()
        self.failure = None
        return True

    def _hold(self, batch: list[JournalEntry], exc: sqlite3.DatabaseError) -> None:
        if self.failure is None:
            log.error("= the journal cannot be written (%s): holding records in memory", exc)
        self.failure = str(exc)
        self._held.extend(batch)
