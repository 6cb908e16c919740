"""Snapshots taken off the event loop: a forked child pickles the core, a thread waits.

:class:`ChildSnapshots` starts :func:`~daemon.round.snapshot.dump_in_child` (the fork is
all the loop waits for), collects the child's bytes in a worker thread, and writes them
to the journal back on the loop, as the snapshot of the record that was last when the
child was forked (every input the core had taken by then was journalled up to it).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
from concurrent.futures import Future

from daemon.journal.store import Journal
from daemon.round.core import RoundCore
from daemon.round.snapshot import dump_in_child

__all__ = ["ChildSnapshots"]

log = logging.getLogger(__name__)


class ChildSnapshots:
    """One snapshot at a time, pickled by a child process.

    Args:
        journal: where snapshots are written.
        fingerprint: what they are made with.
    """

    def __init__(self, journal: Journal, fingerprint: str) -> None:
        self.journal = journal
        self.fingerprint = fingerprint
        #: A child is pickling the core.
        self.running = False
        #: Snapshots written so far.
        self.written = 0

    def start(self, core: RoundCore, at: float) -> bool:
        """Fork a child pickling ``core`` as it is now; False when none could start."""
        if self.running:
            return False
        seq = self.journal.last_seq
        try:
            child = dump_in_child(core)
        except OSError as exc:
            log.warning("= snapshot not taken (%s); the journal still has every input", exc)
            return False
        self.running = True
        collected = asyncio.get_running_loop().run_in_executor(None, child.collect)
        collected.add_done_callback(functools.partial(self._collected, seq, at))
        return True

    def _collected(self, seq: int, at: float, collected: Future[bytes]) -> None:
        self.running = False
        try:
            self.journal.write_snapshot(seq, at, self.fingerprint, collected.result())
            self.written += 1
        except (OSError, RuntimeError, sqlite3.Error) as exc:
            log.warning("= snapshot not written (%s); the journal still has every input", exc)
