"""Snapshots taken off the event loop: a forked child pickles the core, threads write it.

:class:`ChildSnapshots` starts :func:`~daemon.round.snapshot.dump_in_child` (the fork is
all the loop waits for) and collects the child's bytes in a worker thread. The journal's
thread (:mod:`daemon.journal.writer`) notes which record is last once the batches handed
over before the fork are written (every input the core had taken by then), and writes
the snapshot as that record's; with records held in memory there is none.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
from concurrent.futures import Future

from daemon.journal.writer import JournalThread
from daemon.round.core import RoundCore
from daemon.round.snapshot import dump_in_child

__all__ = ["ChildSnapshots"]

log = logging.getLogger(__name__)


class ChildSnapshots:
    """One snapshot at a time, pickled by a child process.

    Args:
        writer: the journal's thread, where snapshots are written.
        fingerprint: what they are made with.
    """

    def __init__(self, writer: JournalThread, fingerprint: str) -> None:
        self.writer = writer
        self.fingerprint = fingerprint
        #: A child is pickling the core.
        self.running = False
        #: Snapshots written so far.
        self.written = 0

    def start(self, core: RoundCore, at: float) -> bool:
        """Fork a child pickling ``core`` as it is now; False when none could start."""
        if self.running:
            return False
        seq = self.writer.run(self._last_written)  # after every batch handed over so far
        try:
            child = dump_in_child(core)
        except OSError as exc:
            log.warning("= snapshot not taken (%s); the journal still has every input", exc)
            return False
        self.running = True
        collected = asyncio.get_running_loop().run_in_executor(None, child.collect)
        collected.add_done_callback(functools.partial(self._collected, seq, at))
        return True

    def _last_written(self) -> int | None:
        """The journal's last record, None while records are held (on the writer's thread)."""
        return None if self.writer.held else self.writer.journal.last_seq

    def _collected(self, seq: Future[int | None], at: float, collected: Future[bytes]) -> None:
        try:
            state = collected.result()
        except (OSError, RuntimeError) as exc:
            self.running = False
            log.warning("= snapshot not written (%s); the journal still has every input", exc)
            return
        written = self.writer.run(self._write, seq, at, state)
        loop = asyncio.get_running_loop()
        written.add_done_callback(lambda done: loop.call_soon_threadsafe(self._written, done))

    def _write(self, seq: Future[int | None], at: float, state: bytes) -> bool:
        """Write the snapshot as record ``seq``'s (on the writer's thread, where ``seq``
        was resolved before); False when records were held."""
        last = seq.result()
        if last is None:
            return False
        self.writer.journal.write_snapshot(last, at, self.fingerprint, state)
        return True

    def _written(self, written: Future[bool]) -> None:
        self.running = False
        try:
            self.written += written.result()
        except (OSError, sqlite3.Error) as exc:
            log.warning("= snapshot not written (%s); the journal still has every input", exc)
