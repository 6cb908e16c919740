"""Which journal a round uses: the configured one, a later round's, or a new one beside it.

A journal records the event and the round of each section it holds
(:class:`~daemon.journal.store.RoundIdentity`). :func:`open_round_journal` opens the configured
journal for a daemon and compares:

* same event and sections, and every section's configured round is the journal's or an
  earlier one → the journal is used as it is. A journal moved on by ``dgtcast round next``
  (a :data:`~daemon.journal.store.ROUND` record) therefore resumes in its own round after a
  restart with the unchanged configuration; the replay of its ``round`` records takes the
  round there.
* another event, other sections, or a configured round the journal has not reached → one
  line (:class:`~daemon.journal.store.JournalError`, exit 2) saying what the journal belongs to,
  with the way on: ``dgtcast round next`` in the running daemon, or ``--new-journal``,
  which starts this round's journal beside the old one (``name.round-2.db``), leaving the
  old one as it is. A restart finds a journal beside the configured one when it matches,
  with or without the flag.
* a journal without identity (an empty one, or one an earlier dgtcast wrote) is stamped
  with the configuration's.

For the round change (developer notes): append the round change as a record of kind
:data:`~daemon.journal.store.ROUND` with payload ``{"section": name, "round": n, …}``; the journal
then says the section is in round ``n`` (same transaction). State that must survive a
restart lives in :class:`~daemon.round.core.RoundCore`, so that snapshots cover it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from pathlib import Path

from daemon.config.model import Config
from daemon.journal.lock import JournalLock
from daemon.journal.records import JournalError, RoundIdentity
from daemon.journal.store import Journal

__all__ = [
    "abandon_journal",
    "beside_path",
    "compare_identity",
    "identity_of",
    "open_round_journal",
]

log = logging.getLogger(__name__)


def identity_of(config: Config) -> RoundIdentity:
    """The event and each section's round as the configuration names them."""
    event = config.sections[0].event.name if config.sections else ""
    return RoundIdentity(
        event=event, rounds={section.name: section.event.round for section in config.sections}
    )


def compare_identity(found: RoundIdentity, wanted: RoundIdentity) -> str | None:
    """None when a daemon configured for ``wanted`` may use a journal of ``found``.

    Otherwise the reason, in one line without the path.
    """
    if found.event != wanted.event or set(found.rounds) != set(wanted.rounds):
        return (
            f"journal belongs to {found.describe()}, not {wanted.describe()}: move it away,"
            " or start with --new-journal to keep it and begin a new one beside it"
        )
    ahead = [name for name, n in wanted.rounds.items() if n > found.rounds[name]]
    if ahead:
        return (
            f"journal belongs to {found.describe()}; the configuration names"
            f" {wanted.describe()}: move the event on with `dgtcast round next` while the"
            " daemon runs, or start with --new-journal to begin this round's journal beside it"
        )
    return None


def beside_path(path: Path, wanted: RoundIdentity, taken: int = 0) -> Path:
    """Where ``--new-journal`` puts this round's journal: ``name.round-2.db`` beside ``path``."""
    rounds = [wanted.rounds[name] for name in sorted(wanted.rounds)]
    label = (
        f"round-{rounds[0]}" if len(set(rounds)) == 1 else "rounds-" + "-".join(map(str, rounds))
    )
    if taken:
        label += f"-{taken + 1}"
    return path.with_name(f"{path.stem}.{label}{path.suffix}")


def open_round_journal(config: Config, *, new_journal: bool = False) -> Journal:
    """Open this round's journal for the daemon (locked against a second daemon).

    Args:
        config: the configuration; ``[storage]`` names the journal.
        new_journal: when the configured journal belongs to another round, keep it and
            start (or resume) this round's journal beside it.

    Raises:
        JournalError: one line: the journal belongs to another event or round, is locked,
            damaged, not ours or cannot be written.
    """
    wanted = identity_of(config)
    path = config.storage.path
    journal = _open(path, config)
    found = journal.identity()
    if found is None:
        if journal.last_seq:
            log.warning("= journal %s has no round identity; taken as %s", path, wanted.describe())
        journal.stamp_identity(wanted)
        return journal
    problem = compare_identity(found, wanted)
    if problem is None:
        return journal
    journal.close()
    beside = _matching_beside(path, wanted)
    if beside is not None:
        log.info("= %s belongs to %s; using %s", path, found.describe(), beside)
        return _open(beside, config)
    if not new_journal:
        raise JournalError(f"{path}: {problem}")
    taken = 0
    while (fresh := beside_path(path, wanted, taken)).exists():
        taken += 1
    log.warning("= %s belongs to %s; starting %s", path, found.describe(), fresh)
    journal = _open(fresh, config)
    journal.stamp_identity(wanted)
    return journal


def abandon_journal(journal: Journal) -> None:
    """Close the journal of a daemon that did not start (refused: a busy port, a bad
    pairings file); when that start created it, remove it: nothing was served from it,
    and an empty journal left behind would only confuse the next start."""
    path = journal.path
    if not journal.created:
        journal.close()
        return
    lock = JournalLock(path).path  # its file (not taken here: the journal holds it)
    journal.close()
    for leftover in (path, f"{path}-wal", f"{path}-shm", lock):
        with contextlib.suppress(OSError):
            os.remove(leftover)
    log.debug("= %s removed: the daemon did not start", path)


def _open(path: Path, config: Config) -> Journal:
    return Journal(path, synchronous=config.storage.synchronous, exclusive=True)


def _matching_beside(path: Path, wanted: RoundIdentity) -> Path | None:
    for candidate in sorted(path.parent.glob(f"{path.stem}.round*{path.suffix}")):
        found = _peek_identity(candidate)
        if found is not None and compare_identity(found, wanted) is None:
            return candidate
    return None


def _peek_identity(path: Path) -> RoundIdentity | None:
    """A journal's identity, read without writing; None when unreadable or absent."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'identity'").fetchone()
        return None if row is None else RoundIdentity.from_json(row[0])
    except (sqlite3.Error, ValueError, KeyError):
        return None
    finally:
        db.close()
