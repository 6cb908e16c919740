"""The journal's SQLite file: its schema, creating or upgrading it, opening it to read.

:func:`set_up` checks that a file is a journal (or empty), puts it in WAL mode and
creates or upgrades its tables in one write transaction, so that an unwritable journal
is refused at start, not mid-round. :func:`open_read_only` opens it for readers, which
never write and never take the write lock (``dgtcast results``, tools, tests).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from daemon.journal.records import JournalError, JournalMissing

__all__ = ["SCHEMA_VERSION", "explain", "is_blank", "open_read_only", "schema_version", "set_up"]

#: Version of the tables below; a journal written by a newer version is refused.
SCHEMA_VERSION = 2
_TABLES = frozenset({"schema_version", "records", "meta", "snapshots"})
_INDEXES = frozenset({"records_by_board", "records_rare"})
_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    seq     INTEGER PRIMARY KEY,
    board   INTEGER NOT NULL,
    kind    TEXT    NOT NULL,
    at      REAL    NOT NULL,
    payload TEXT    NOT NULL,
    digest  BLOB
);
CREATE INDEX IF NOT EXISTS records_by_board ON records (board, seq);
CREATE INDEX IF NOT EXISTS records_rare ON records (kind, seq)
    WHERE kind IN ('round', 'daemon_start');
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshots (
    seq         INTEGER PRIMARY KEY,
    at          REAL    NOT NULL,
    fingerprint TEXT    NOT NULL,
    digest      BLOB    NOT NULL,
    state       BLOB    NOT NULL
);
"""


def set_up(db: sqlite3.Connection, path: str, synchronous: str) -> None:
    """Check the file is a journal; create or upgrade its schema (one write).

    Raises:
        JournalError: another program's file, or a newer dgtcast's journal.
        sqlite3.DatabaseError: the file cannot be read or written.
    """
    db.execute("PRAGMA busy_timeout = 5000")
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    ours = {t for t in tables if not t.startswith("sqlite_") and t not in _INDEXES}
    if (ours and "schema_version" not in ours) or not ours <= _TABLES:
        foreign = ", ".join(sorted(ours - _TABLES)) or "no schema_version"
        raise JournalError(f"{path}: not a dgtcast journal (it holds {foreign})")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    db.execute("BEGIN IMMEDIATE")
    try:
        _create_or_upgrade(db, path)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _create_or_upgrade(db: sqlite3.Connection, path: str) -> None:
    exists = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_version'").fetchone()
    version = None
    if exists:
        row = db.execute("SELECT version FROM schema_version").fetchone()
        version = None if row is None else int(row[0])
    if version is not None and version > SCHEMA_VERSION:
        raise JournalError(
            f"{path}: journal schema {version} is newer than this dgtcast's ({SCHEMA_VERSION})"
        )
    if version == 1:  # no digests, identity or snapshots yet: add them
        db.execute("ALTER TABLE records ADD COLUMN digest BLOB")
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    if version is None:
        db.execute("DELETE FROM schema_version")
        db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
    else:  # a write, so that an unwritable journal is refused now, not mid-round
        db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))


def open_read_only(path: str) -> sqlite3.Connection:
    """A connection that cannot write (SQLite's ``mode=ro``)."""
    if not os.path.exists(path):
        raise JournalMissing(f"{path}: no journal")
    uri = Path(path).absolute().as_uri() + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA busy_timeout = 5000")
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot open the journal: {exc}") from None
    return db


def schema_version(db: sqlite3.Connection) -> int | None:
    """The journal's schema version; None when it has none (not a journal)."""
    try:
        row = db.execute("SELECT version FROM schema_version").fetchone()
    except sqlite3.DatabaseError:
        return None
    return None if row is None else int(row[0])


def is_blank(db: sqlite3.Connection) -> bool:
    """Whether the file holds no tables at all (a new file, not yet set up)."""
    return db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None


def explain(exc: sqlite3.DatabaseError) -> str:
    text = str(exc)
    if "locked" in text:
        return f"the journal is in use by another connection ({text})"
    if "readonly" in text or "read-only" in text:
        return f"the journal cannot be written ({text})"
    if "unable to open" in text:
        return f"the journal cannot be opened for writing ({text})"
    return f"not a dgtcast journal ({text})"
