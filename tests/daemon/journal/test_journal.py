"""The journal: records round-trip, batches are atomic, and ``kill -9`` loses nothing."""

from __future__ import annotations

import math
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from daemon.journal.records import Entry, JournalError, JournalMissing, Record
from daemon.journal.store import SCHEMA_VERSION, Journal
from tests.daemon.journal.journal_writer import digest
from tests.shared_data import ROOT

WRITER = Path(__file__).with_name("journal_writer.py")


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "journal.db")


def test_append_returns_the_global_sequence_and_records_round_trip(journal: Journal) -> None:
    first = journal.append(1, "placement", {"fen": "8/8/8/8/8/8/8/8", "at": 0.1}, 1750000000.125)
    second = journal.append(2, "clock", {"left": 5430, "right": 5430, "name": "Jané"}, 1750000001.5)
    assert (first, second) == (1, 2)
    assert journal.last_seq == 2
    assert list(journal.records()) == [
        Record(
            seq=1,
            board=1,
            kind="placement",
            at=1750000000.125,
            payload={"fen": "8/8/8/8/8/8/8/8", "at": 0.1},
        ),
        Record(
            seq=2,
            board=2,
            kind="clock",
            at=1750000001.5,
            payload={"left": 5430, "right": 5430, "name": "Jané"},
        ),
    ]


def test_records_filter_by_board_sequence_and_kind(journal: Journal) -> None:
    kinds = ["move", "clock", "alert"]
    for n in range(30):
        journal.append(n % 3 + 1, kinds[n % 3], {"n": n}, float(n))
    assert [r.payload["n"] for r in journal.records(board=2)] == list(range(1, 30, 3))
    assert [r.seq for r in journal.records(after=27)] == [28, 29, 30]
    assert [r.payload["n"] for r in journal.records(board=1, after=20)] == [21, 24, 27]
    assert {r.kind for r in journal.records(kinds={"alert", "clock"})} == {"alert", "clock"}
    assert len(list(journal.records(kinds={"alert", "clock"}))) == 20
    assert list(journal.records(kinds=())) == []


def test_replay_reads_page_by_page_and_sees_records_appended_meanwhile(journal: Journal) -> None:
    journal.append_many(Entry(board=1, kind="k", at=0.0, payload={"n": n}) for n in range(1200))
    seen = []
    for record in journal.records():
        seen.append(record.payload["n"])
        if record.seq == 1000:
            journal.append(1, "k", {"n": 1200}, 0.0)
    assert seen == list(range(1201))


def test_a_batch_with_one_bad_entry_writes_nothing(journal: Journal) -> None:
    journal.append(1, "k", {"n": 0}, 0.0)
    good = Entry(board=1, kind="k", at=0.0, payload={"n": 1})
    with pytest.raises(ValueError, match="Out of range float"):
        journal.append_many([good, Entry(board=1, kind="k", at=0.0, payload={"x": math.nan})])
    with pytest.raises(TypeError):
        journal.append_many([good, Entry(board=1, kind="k", at=0.0, payload={"x": {1, 2}})])
    with pytest.raises(ValueError, match="finite"):
        journal.append(1, "k", {}, math.inf)
    assert [r.payload for r in journal.records()] == [{"n": 0}]
    assert journal.append_many([]) == []
    assert journal.append_many([good, good]) == [2, 3]


def test_reopening_keeps_everything_and_counts_on(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        journal.append_many(Entry(board=b, kind="k", at=1.0, payload={"b": b}) for b in (1, 2))
    with Journal(path) as journal:
        assert journal.append(3, "k", {"b": 3}, 2.0) == 3
        assert [r.payload["b"] for r in journal.records()] == [1, 2, 3]


def test_file_is_wal_with_the_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal(path, synchronous="full") as journal:
        assert journal.synchronous == "full"
        journal.append(1, "k", {}, 0.0)
        other = sqlite3.connect(path)
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert other.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        other.close()
    with Journal(path) as journal:
        assert journal.synchronous == "normal"


def test_files_that_are_not_journals_are_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not SQLite at all, just some text" * 100)
    with pytest.raises(JournalError, match="not a dgtcast journal"):
        Journal(junk)
    newer = tmp_path / "newer.db"
    Journal(newer).close()
    db = sqlite3.connect(newer)
    db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    db.commit()
    db.close()
    with pytest.raises(JournalError, match="is newer than this dgtcast"):
        Journal(newer)


def test_a_reader_reads_while_the_writer_holds_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        journal.append(1, "placement", {"fen": "8/8/8/8/8/8/8/8"}, 1.0)
    writing = sqlite3.connect(path, isolation_level=None)
    writing.execute("BEGIN IMMEDIATE")  # the daemon, mid-write
    try:
        with Journal(path, read_only=True) as reader:  # would wait for the lock to write
            assert [r.kind for r in reader.records()] == ["placement"]
    finally:
        writing.execute("ROLLBACK")
        writing.close()
    with pytest.raises(JournalMissing, match="no journal"):
        Journal(tmp_path / "missing.db", read_only=True)
    assert not (tmp_path / "missing.db").exists()


def test_a_reader_leaves_a_file_a_daemon_is_creating_alone(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    sqlite3.connect(path).close()  # the daemon's connection made the file, no tables yet
    with pytest.raises(JournalMissing, match="no journal yet"):
        Journal(path, read_only=True)
    untouched = sqlite3.connect(path)
    try:  # the reader wrote nothing: the set-up is still the daemon's to do
        assert untouched.execute("SELECT name FROM sqlite_master").fetchall() == []
        assert untouched.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    finally:
        untouched.close()
    with Journal(path, exclusive=True) as daemon:
        daemon.append(1, "placement", {"fen": "8/8/8/8/8/8/8/8"}, 1.0)
    with Journal(path, read_only=True) as reader:
        assert [r.kind for r in reader.records()] == ["placement"]


_POLL = """
import sys
from daemon.journal.store import Journal
path, read_only = sys.argv[1], sys.argv[2] == "ro"
print("polling", flush=True)
while True:
    with Journal(path, read_only=read_only) as journal:
        sum(1 for _ in journal.records(board=1))
"""


def test_readers_polling_a_live_journal_never_fail_its_writer(tmp_path: Path) -> None:
    """``dgtcast results export``, a tool or a test reading the journal while the daemon
    writes: neither a reader nor another process opening it for writing makes an append
    fail with ``database is locked``."""
    path = tmp_path / "journal.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with Journal(path) as writer:
        readers = [
            subprocess.Popen(
                [sys.executable, "-c", _POLL, str(path), mode],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            for mode in ("ro", "rw", "rw")
        ]
        try:
            for reader in readers:
                assert reader.stdout is not None
                assert reader.stdout.readline() == "polling\n"
            for n in range(3000):
                writer.append_many([Entry(board=1, kind="placement", at=1.0 + n, payload={"n": n})])
            assert all(reader.poll() is None for reader in readers), "a reader failed"
        finally:
            for reader in readers:
                reader.kill()
                reader.wait()
                assert reader.stdout is not None
                reader.stdout.close()
    with Journal(path, read_only=True) as journal:
        assert [r.payload["n"] for r in journal.records()] == list(range(3000))


# -- crash safety: a real writer process, killed with SIGKILL mid-stream ----------------------


def run_writer_until_killed(path: Path, batch: int, committed_lines: int) -> int:
    """Start the writer, let it report ``committed_lines`` commits, then SIGKILL it.

    Returns the highest ``n`` the writer reported as committed before it died.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), str(path), str(batch)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert writer.stdout is not None
    reported = 0
    try:
        for _ in range(committed_lines):
            line = writer.stdout.readline()
            assert line, f"writer died early with {writer.wait()}"
            reported = int(line)
        # Land the kill anywhere in the next write: building, inserting or committing.
        time.sleep(random.uniform(0.0, 0.004))
        os.kill(writer.pid, signal.SIGKILL)
    finally:
        writer.kill()
        writer.wait()
        writer.stdout.close()
    assert writer.returncode == -signal.SIGKILL
    return reported


def check_journal(path: Path, batch: int, reported: int) -> int:
    """Every committed record present once, none torn; returns the last ``n``."""
    with Journal(path) as journal:
        records = list(journal.records())
    numbers = [r.payload["n"] for r in records]
    assert numbers == list(range(1, len(numbers) + 1)), "duplicated, missing or reordered"
    assert [r.seq for r in records] == sorted({r.seq for r in records})
    assert len(numbers) >= reported, "a record reported as committed is lost"
    assert len(numbers) % batch == 0, "a batch was partly written"
    for record in records:
        assert record.payload["digest"] == digest(record.payload["n"], record.payload["fill"])
        assert record.board == record.payload["n"] % 4 + 1
    return len(numbers)


@pytest.mark.parametrize("batch", [1, 25])
def test_sigkill_mid_stream_loses_and_duplicates_nothing(tmp_path: Path, batch: int) -> None:
    path = tmp_path / "journal.db"
    last = 0
    for _ in range(3):
        reported = run_writer_until_killed(path, batch, committed_lines=150)
        assert reported > last
        last = check_journal(path, batch, reported)
