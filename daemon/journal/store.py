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
(e.g. ``asyncio.to_thread``). Other processes may read the file while it is written; with
``exclusive=True`` (the daemon) a second writer is refused (:mod:`daemon.journal.lock`).

Identity. A journal knows the event and the round of each section it holds
(:class:`RoundIdentity`, in the ``meta`` table): :meth:`Journal.identity` reads it,
:meth:`Journal.stamp_identity` writes it once. A record of kind :data:`ROUND` (board 0,
payload ``{"section": name, "round": n, …}``) moves that section to round ``n``: the
journal updates its identity in the same transaction as the record, so the identity always
says which round the records lead to. :mod:`daemon.journal.identity` compares it with a
configuration (refuse, resume, or a new journal beside the old one).

Integrity. Each record carries a digest chained to the previous record's, so an edited,
removed or reordered record is found by :meth:`Journal.verify` ("journal damaged at record
N"), as is a page SQLite cannot read. A file holding other tables is never written to.

The record types and the exceptions are in :mod:`daemon.journal.records`; the file's
schema, its creation and upgrade, and opening it read-only in :mod:`daemon.journal.file`.

Exceptions::

    JournalError        the file cannot be used as this round's journal
     +-- JournalDamaged the records cannot be trusted from record ``seq`` on
     +-- JournalLocked  another process holds the journal
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any, Literal

from daemon.journal.file import (
    SCHEMA_VERSION,
    explain,
    is_blank,
    open_read_only,
    schema_version,
    set_up,
)
from daemon.journal.lock import JournalLock
from daemon.journal.records import (
    Entry,
    JournalDamaged,
    JournalEntry,
    JournalError,
    JournalLocked,
    JournalMissing,
    Record,
    RoundIdentity,
)

__all__ = [
    "EVENT_BOARD",
    "ROUND",
    "SCHEMA_VERSION",
    "Journal",
    "checkpoint",
]

#: The board number of records that concern the whole event (daemon start, clocks set).
EVENT_BOARD = 0
#: Record kind: a section moved to another round (``{"section": name, "round": n, …}``).
ROUND = "round"

_PAGE = 512
#: Kinds few records have, indexed (records_rare) so that finding them reads no other.
_RARE_KINDS = frozenset({ROUND, "daemon_start"})
_INSERT = "INSERT INTO records (seq, board, kind, at, payload, digest) VALUES (?, ?, ?, ?, ?, ?)"


class Journal:
    """An append-only journal in one SQLite file, created if missing.

    Args:
        path: the database file (its ``-wal`` and ``-shm`` companions live beside it).
        synchronous: ``"normal"`` survives process crashes, ``"full"`` also power loss.
        exclusive: hold the journal's lock while open: a second process asking for it is
            refused (the daemon; readers such as ``dgtcast results`` do not ask).
        read_only: only read (``dgtcast results``, tests, tools): never writes, so a
            running daemon's writes never wait for it. A journal an older dgtcast wrote is
            upgraded first, as when opened for writing; a file with no tables yet (a
            daemon creating it) is left alone.

    Raises:
        JournalError: the file is not a journal this version can use, cannot be written
            (the check writes one page) or, ``read_only``, does not exist.
        JournalLocked: ``exclusive`` and another process holds the lock.
        JournalMissing: ``read_only`` and there is no journal yet (no file, or a file
            with no tables).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["normal", "full"] = "normal",
        exclusive: bool = False,
        read_only: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        self._lock: JournalLock | None = None
        #: This object created the file (it did not exist before): see ``abandon_journal``.
        self.created = not read_only and not os.path.exists(self.path)
        if read_only:
            db = open_read_only(self.path)
            version = schema_version(db)
            if version == SCHEMA_VERSION:
                self._db = db
                self._digest = self._last_digest()
                return
            blank = version is None and is_blank(db)
            db.close()  # older (upgraded below) or not a journal (refused below)
            if blank:  # a reader never sets up a file a daemon is creating
                raise JournalMissing(f"{self.path}: no journal yet (the file has no tables)")
        if exclusive:
            self._lock = JournalLock(self.path)
            try:
                acquired = self._lock.acquire()
            except OSError as exc:
                raise JournalError(f"{self.path}: cannot lock the journal: {exc}") from None
            if not acquired:
                raise JournalLocked(
                    f"{self.path}: the journal is in use by another dgtcast daemon"
                    " (one daemon per journal)"
                )
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            self._release()
            raise JournalError(f"{self.path}: cannot open the journal: {exc}") from None
        try:
            set_up(self._db, self.path, synchronous)
        except sqlite3.DatabaseError as exc:
            self.close()
            raise JournalError(f"{self.path}: {explain(exc)}") from None
        except BaseException:
            self.close()
            raise
        self._digest = self._last_digest()

    def _last_digest(self) -> bytes:
        row = self._db.execute("SELECT digest FROM records ORDER BY seq DESC LIMIT 1").fetchone()
        return b"" if row is None or row[0] is None else bytes(row[0])

    # -- identity -------------------------------------------------------------------------

    def identity(self) -> RoundIdentity | None:
        """The event and rounds the journal belongs to; None before it was stamped."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'identity'").fetchone()
        return None if row is None else RoundIdentity.from_json(row[0])

    def stamp_identity(self, identity: RoundIdentity) -> None:
        """Record what the journal belongs to (replacing what it said)."""
        self._db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('identity', ?)",
            (identity.to_json(),),
        )

    def _follow_round(self, payload: Mapping[str, Any]) -> None:
        current = self.identity()
        if current is None:
            return
        rounds = {**current.rounds, str(payload["section"]): int(payload["round"])}
        self.stamp_identity(RoundIdentity(event=current.event, rounds=rounds))

    # -- writing --------------------------------------------------------------------------

    def append(self, board: int, kind: str, payload: Mapping[str, Any], at: float) -> int:
        """Append one record in its own transaction; returns its sequence number.

        When this returns the record is committed (durable as described above).

        Raises:
            ValueError: ``at`` or a payload number is not finite.
            TypeError: the payload is not JSON data.
            sqlite3.OperationalError: the disk is full or failing (nothing written).
        """
        return self.append_many([Entry(board=board, kind=kind, at=at, payload=payload)])[0]

    def append_many(self, entries: Iterable[JournalEntry]) -> list[int]:
        """Append several records in one transaction: all of them are committed, or none.

        Batching is how a busy daemon keeps up (see ``bench/journal.py``).

        Raises:
            ValueError, TypeError: as :meth:`append`; then nothing is written.
            sqlite3.OperationalError: the disk is full or failing; nothing is written
                and the same entries may be appended again later.
        """
        texts = [(e.board, e.kind, e.at, _payload_text(e.at, e.payload), e) for e in entries]
        if not texts:
            return []
        digest = self._digest
        self._db.execute("BEGIN IMMEDIATE")  # the write lock first: no upgrade to fail
        try:
            first = self.last_seq + 1
            rows = []
            for seq, (board, kind, at, text, _) in enumerate(texts, first):
                digest = _chain(digest, seq, board, kind, at, text)
                rows.append((seq, board, kind, at, text, digest))
            self._db.executemany(_INSERT, rows)
            for _, kind, _, _, entry in texts:
                if kind == ROUND:
                    self._follow_round(entry.payload)
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._digest = digest
        return list(range(first, first + len(rows)))

    # -- snapshots ------------------------------------------------------------------------

    def write_snapshot(
        self, seq: int, at: float, fingerprint: str, state: bytes, *, keep: int = 2
    ) -> None:
        """Keep ``state``: the round after every record up to ``seq``.

        A snapshot is an addition: no record is ever removed. Only the ``keep`` newest
        snapshots are kept (older ones are never needed: every record is still there).

        Raises:
            sqlite3.OperationalError: the disk is full or failing (nothing written).
        """
        row = self._db.execute("SELECT digest FROM records WHERE seq = ?", (seq,)).fetchone()
        digest = b"" if row is None or row[0] is None else bytes(row[0])
        self._db.execute("BEGIN")
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO snapshots (seq, at, fingerprint, digest, state)"
                " VALUES (?, ?, ?, ?, ?)",
                (seq, at, fingerprint, digest, state),
            )
            self._db.execute(
                "DELETE FROM snapshots WHERE seq NOT IN"
                " (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT ?)",
                (keep,),
            )
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def latest_snapshot(self, fingerprint: str) -> tuple[int, bytes] | None:
        """The newest snapshot made with ``fingerprint`` whose record chain still holds.

        Returns ``(seq, state)`` or None (then replay everything).
        """
        rows = self._db.execute(
            "SELECT s.seq, s.state FROM snapshots s LEFT JOIN records r ON r.seq = s.seq"
            " WHERE s.fingerprint = ? AND s.seq <= (SELECT COALESCE(MAX(seq), 0) FROM records)"
            " AND (r.digest IS s.digest OR (s.seq = 0 AND r.seq IS NULL))"
            " ORDER BY s.seq DESC LIMIT 1",
            (fingerprint,),
        ).fetchone()
        return None if rows is None else (int(rows[0]), bytes(rows[1]))

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

        Raises:
            JournalDamaged: a page cannot be read, or a payload is not JSON.
        """
        where: list[str] = ["seq > ?"]
        params: list[int | str] = [after]
        if board is not None:
            where.append("board = ?")
            params.append(board)
        if kinds is not None:
            if not kinds:
                return
            if set(kinds) <= _RARE_KINDS:  # literals, so that SQLite takes the partial index
                where.append(f"kind IN ({', '.join(repr(str(k)) for k in sorted(kinds))})")
            else:
                where.append(f"kind IN ({', '.join('?' * len(kinds))})")
                params.extend(sorted(kinds))
        query = (
            "SELECT seq, board, kind, at, payload FROM records"
            f" WHERE {' AND '.join(where)} ORDER BY seq LIMIT {_PAGE}"
        )
        while True:
            rows = self._read(query, params, after=int(params[0]))
            for seq, row_board, kind, at, payload in rows:
                try:
                    data = json.loads(payload)
                except (TypeError, ValueError):
                    raise JournalDamaged(self.path, seq, "a payload is not JSON") from None
                yield Record(seq=seq, board=row_board, kind=kind, at=at, payload=data)
            if len(rows) < _PAGE:
                return
            params[0] = rows[-1][0]

    def verify(self, after: int = 0) -> int:
        """Check the records after ``after`` against their digests; returns how many.

        Records written before digests existed (schema 1) are not checked.

        Raises:
            JournalDamaged: the first record that was changed, removed or is unreadable.
        """
        query = (
            "SELECT seq, board, kind, at, payload, digest FROM records"
            f" WHERE seq >= ? ORDER BY seq LIMIT {_PAGE}"
        )
        params = [after]
        expected = after or 1  # the record at ``after`` anchors the chain
        digest = b""  # the chain starts empty before record 1
        count = 0
        while True:
            rows = self._read(query, params, after=after)
            for seq, board, kind, at, payload, stored in rows:
                if seq != expected:
                    raise JournalDamaged(self.path, expected, "a record is missing")
                if seq > after and stored is not None:
                    text = payload if isinstance(payload, str) else repr(payload)
                    if _chain(digest, seq, board, kind, at, text) != stored:
                        raise JournalDamaged(self.path, seq, "a record was changed")
                    count += 1
                digest = b"" if stored is None else bytes(stored)
                expected = seq + 1
            if len(rows) < _PAGE:
                return count
            params = [rows[-1][0] + 1]
            expected = rows[-1][0] + 1

    def _read(self, query: str, params: list[Any], *, after: int) -> list[Any]:
        try:
            return self._db.execute(query, params).fetchall()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "malformed" not in str(exc):
                raise
            raise JournalDamaged(self.path, self._first_unreadable(after), str(exc)) from None

    def _first_unreadable(self, after: int) -> int:
        """The first record after ``after`` SQLite cannot read (bisecting by seq)."""
        seq = after + 1
        while True:
            try:
                row = self._db.execute(
                    "SELECT seq, board, kind, at, payload FROM records WHERE seq >= ?"
                    " ORDER BY seq LIMIT 1",
                    (seq,),
                ).fetchone()
            except sqlite3.DatabaseError:
                return seq
            if row is None:
                return seq
            seq = int(row[0]) + 1

    def checkpoint_elsewhere(self) -> None:
        """Stop this connection's automatic WAL checkpoints: :func:`checkpoint` runs them.

        SQLite checkpoints inside the commit that fills the WAL's next thousand pages:
        that commit copies them into the file and waits for the disk to flush it, on
        the event loop. A daemon checkpoints from a thread instead
        (``daemon/shell/app.py``), so no commit waits for the disk.
        """
        self._db.execute("PRAGMA wal_autocheckpoint = 0")

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
        """Close the file (checkpointing the WAL into it) and release the lock."""
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def checkpoint(path: str) -> None:
    """Copy the committed WAL pages of the journal at ``path`` into it (a passive
    checkpoint on a connection of its own: writers never wait for it). Blocks: call it
    from a thread.

    Raises:
        sqlite3.Error: the file cannot be opened or checkpointed.
    """
    db = sqlite3.connect(path, timeout=0.0)
    try:
        db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    finally:
        db.close()


def _payload_text(at: float, payload: Mapping[str, Any]) -> str:
    if not math.isfinite(at):
        raise ValueError(f"a record's time must be finite, got {at}")
    return json.dumps(dict(payload), separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def _chain(previous: bytes, seq: int, board: int, kind: str, at: float, text: str) -> bytes:
    """A record's digest: SHA-256 of the previous digest and the record (16 bytes kept)."""
    line = f"{seq}\x1f{board}\x1f{kind}\x1f{at!r}\x1f{text}".encode()
    return hashlib.sha256(previous + line).digest()[:16]
