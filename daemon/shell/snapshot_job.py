"""The round's snapshots: when one is due, and a forked child that pickles the core.

:class:`RoundSnapshots` counts the inputs and the core's time since the last snapshot
(what a replay from it would cost) for the :class:`~daemon.round.snapshot.SnapshotPolicy`,
loads the newest usable snapshot before a replay, and writes one: pickled here, or off
the event loop by :class:`ChildSnapshots`. That one starts
:func:`~daemon.round.snapshot.dump_in_child` (the fork is all the loop waits for),
collects the child's bytes in a worker thread, and writes them to the journal back on
the loop, as the snapshot of the record that was last when the child was forked (every
input the core had taken by then was journalled up to it).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import pickle
import sqlite3
from concurrent.futures import Future

from daemon.journal.store import Journal
from daemon.round.core import RoundCore
from daemon.round.snapshot import SnapshotPolicy, dump_in_child, dump_state, load_state

__all__ = ["ChildSnapshots", "RoundSnapshots"]

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


class RoundSnapshots:
    """When the core's state is added to the journal, and by whom.

    Args:
        core: the round's pure core.
        journal: where snapshots are written and read.
        fingerprint: what they are made with (:func:`daemon.round.snapshot.fingerprint`);
            None: no snapshots.
        policy: when one is due.
        now: when the count starts (epoch seconds).
    """

    def __init__(
        self,
        core: RoundCore,
        journal: Journal,
        fingerprint: str | None,
        policy: SnapshotPolicy,
        now: float,
    ) -> None:
        self.core = core
        self.journal = journal
        self.fingerprint = fingerprint
        self.policy = policy
        #: Inputs since the last snapshot.
        self.inputs = 0
        #: Seconds the core took for those inputs (what their replay costs).
        self.cost = 0.0
        self._at = now
        self._children: ChildSnapshots | None = None  # snapshots off the loop
        self._written_here = 0

    def due(self, now: float) -> bool:
        """Whether the policy asks for a snapshot at ``now``."""
        return self.policy.due(self.inputs, now - self._at, self.cost)

    def load(self) -> int:
        """Load the newest usable snapshot; returns its record (0: none, replay it all)."""
        if self.fingerprint is None:
            return 0
        found = self.journal.latest_snapshot(self.fingerprint)
        if found is None:
            return 0
        seq, data = found
        try:
            load_state(self.core, data)
        except Exception as exc:  # any failure to load: the inputs are all there
            log.warning("= snapshot at record %d not used (%s): replaying every input", seq, exc)
            return 0
        return seq

    def write(self, now: float) -> bool:
        """Pickle the core here and write it as the snapshot of the last record; False
        when it cannot be written (the count starts again either way)."""
        assert self.fingerprint is not None
        try:
            data = dump_state(self.core)
            self.journal.write_snapshot(self.journal.last_seq, now, self.fingerprint, data)
            self._written_here += 1
        except (sqlite3.DatabaseError, pickle.PicklingError, TypeError, AttributeError) as exc:
            # a full disk, or state that cannot be pickled: the inputs are all journalled
            log.warning("= snapshot not written (%s); the journal still has every input", exc)
            return False
        finally:
            self._taken(now)
        return True

    def start_in_child(self, now: float) -> None:
        """Have a forked child pickle the core (none while one is at work)."""
        assert self.fingerprint is not None
        if self._children is None:
            self._children = ChildSnapshots(self.journal, self.fingerprint)
        if self._children.start(self.core, now):
            self._taken(now)

    @property
    def written(self) -> int:
        """Snapshots written so far, here and by children."""
        children = self._children.written if self._children is not None else 0
        return self._written_here + children

    def _taken(self, now: float) -> None:
        self.inputs, self._at, self.cost = 0, now, 0.0
