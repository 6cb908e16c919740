"""The event journal: every sensor-level event and every decision, in SQLite (WAL).

The daemon appends a record *before* it acts on or publishes what the record says, so a
restart rebuilds everything by replaying :meth:`Journal.records` (issue 4, "a journal that
loses nothing"). A record is a global sequence number, a board number (0 for what
concerns the whole event), a kind, a wall-clock time and a JSON payload.

Durability. The journal runs in WAL mode. With ``synchronous="normal"`` (the default) a
committed record survives a crash of the process, ``kill -9`` included: the commit has
reached the operating system when :meth:`Journal.append` returns. A power cut may lose the
last commits (never tear or reorder them); ``synchronous="full"`` also survives that, at
the price of one disk flush per commit (see ``bench/journal.py`` for both rates).

A :class:`Journal` is used by one thread at a time; it may be handed to a worker thread
(e.g. ``asyncio.to_thread``). Other processes may read the file while it is written.

Exceptions::

    JournalError    the file is not a dgtcast journal, or a newer dgtcast wrote it
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = [
    "EVENT_BOARD",
    "SCHEMA_VERSION",
    "Entry",
    "Journal",
    "JournalEntry",
    "JournalError",
    "Record",
]

#: Version of the tables below; a journal written by a newer version is refused.
SCHEMA_VERSION = 1
#: The board number of records that concern the whole event (daemon start, clocks set).
EVENT_BOARD = 0

_PAGE = 512
_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    seq     INTEGER PRIMARY KEY,
    board   INTEGER NOT NULL,
    kind    TEXT    NOT NULL,
    at      REAL    NOT NULL,
    payload TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_board ON records (board, seq);
"""


class JournalError(Exception):
    """The file cannot be used as a journal (not SQLite, not ours, or too new)."""


class JournalEntry(Protocol):
    """Anything that can be appended: a board, a kind, a time and a JSON payload."""

    @property
    def board(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def at(self) -> float: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """A record to append (see :meth:`Journal.append_many`)."""

    board: int
    kind: str
    at: float
    payload: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    """A record read back, with its global sequence number."""

    seq: int
    board: int
    kind: str
    at: float
    payload: dict[str, Any]


class Journal:
    """An append-only journal in one SQLite file, created if missing.

    Args:
        path: the database file (its ``-wal`` and ``-shm`` companions live beside it).
        synchronous: ``"normal"`` survives process crashes, ``"full"`` also power loss.

    Raises:
        JournalError: the file is not a journal this version can use.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["normal", "full"] = "normal",
    ) -> None:
        self.path = os.fspath(path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot open the journal: {exc}") from None
        try:
            self._set_up(synchronous)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise JournalError(f"{self.path}: not a dgtcast journal: {exc}") from None
        except JournalError:
            self._db.close()
            raise

    def _set_up(self, synchronous: str) -> None:
        self._db.execute("PRAGMA busy_timeout = 5000")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        self._db.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}")
        try:
            rows = self._db.execute("SELECT version FROM schema_version").fetchall()
            if not rows:
                self._db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            elif rows[0][0] > SCHEMA_VERSION:
                raise JournalError(
                    f"{self.path}: journal schema {rows[0][0]} is newer than this"
                    f" dgtcast's ({SCHEMA_VERSION})"
                )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    # -- writing --------------------------------------------------------------------------

    def append(self, board: int, kind: str, payload: Mapping[str, Any], at: float) -> int:
        """Append one record in its own transaction; returns its sequence number.

        When this returns the record is committed (durable as described above).

        Raises:
            ValueError: ``at`` or a payload number is not finite.
            TypeError: the payload is not JSON data.
        """
        row = _row(board, kind, payload, at)
        cursor = self._db.execute(
            "INSERT INTO records (board, kind, at, payload) VALUES (?, ?, ?, ?)", row
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def append_many(self, entries: Iterable[JournalEntry]) -> list[int]:
        """Append several records in one transaction: all of them are committed, or none.

        Batching is how a busy daemon keeps up (see ``bench/journal.py``).

        Raises:
            ValueError, TypeError: as :meth:`append`; then nothing is written.
        """
        rows = [_row(e.board, e.kind, e.payload, e.at) for e in entries]
        if not rows:
            return []
        seqs = []
        self._db.execute("BEGIN")
        try:
            for row in rows:
                cursor = self._db.execute(
                    "INSERT INTO records (board, kind, at, payload) VALUES (?, ?, ?, ?)", row
                )
                assert cursor.lastrowid is not None
                seqs.append(cursor.lastrowid)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return seqs

    # -- reading --------------------------------------------------------------------------

    def records(
        self,
        board: int | None = None,
        after: int = 0,
        kinds: Collection[str] | None = None,
    ) -> Iterator[Record]:
        """Records in sequence order: the replay iterator.

        Args:
            board: only this board's records (None: every board).
            after: only records with a sequence number above this one.
            kinds: only records of these kinds (None: every kind).

        Records appended while iterating are included; the file is read page by page.
        """
        where: list[str] = ["seq > ?"]
        params: list[int | str] = [after]
        if board is not None:
            where.append("board = ?")
            params.append(board)
        if kinds is not None:
            if not kinds:
                return
            where.append(f"kind IN ({', '.join('?' * len(kinds))})")
            params.extend(sorted(kinds))
        query = (
            "SELECT seq, board, kind, at, payload FROM records"
            f" WHERE {' AND '.join(where)} ORDER BY seq LIMIT {_PAGE}"
        )
        while True:
            rows = self._db.execute(query, params).fetchall()
            for seq, row_board, kind, at, payload in rows:
                yield Record(
                    seq=seq, board=row_board, kind=kind, at=at, payload=json.loads(payload)
                )
            if len(rows) < _PAGE:
                return
            params[0] = rows[-1][0]

    @property
    def synchronous(self) -> Literal["normal", "full"]:
        """The durability level this connection commits with (see the module docstring)."""
        level = self._db.execute("PRAGMA synchronous").fetchone()[0]
        return "full" if level >= 2 else "normal"

    @property
    def last_seq(self) -> int:
        """The sequence number of the last record, 0 when the journal is empty."""
        row = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM records").fetchone()
        return int(row[0])

    def close(self) -> None:
        """Close the file (checkpointing the WAL into it)."""
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _row(
    board: int, kind: str, payload: Mapping[str, Any], at: float
) -> tuple[int, str, float, str]:
    if not math.isfinite(at):
        raise ValueError(f"a record's time must be finite, got {at}")
    text = json.dumps(dict(payload), separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return board, kind, at, text
