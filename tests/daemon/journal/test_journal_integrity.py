"""Journal integrity: foreign files untouched, changed or unreadable records found by number."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from pathlib import Path

import pytest

from daemon.config.model import load_config
from daemon.journal.identity import identity_of
from daemon.journal.records import Entry, JournalDamaged, JournalError
from daemon.journal.store import SCHEMA_VERSION, Journal
from daemon.shell.app import Daemon, DaemonOptions
from tests.daemon.support import BoardSpec, refused_start, write_config


def _fill(path: Path, count: int) -> None:
    with Journal(path) as journal:
        journal.append_many(
            Entry(board=1 + n % 3, kind="clock", at=float(n), payload={"left": n, "pad": "x" * 200})
            for n in range(count)
        )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_foreign_sqlite_file_is_refused_and_not_written(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE players (name TEXT)")
    db.execute("INSERT INTO players VALUES ('Carlsen')")
    db.commit()
    db.close()
    before = _sha(path)
    with pytest.raises(JournalError, match=r"not a dgtcast journal \(it holds players\)"):
        Journal(path)
    assert _sha(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal.db"]
    stderr = refused_start(write_config(tmp_path, [BoardSpec(1, None)]))
    assert stderr.count("\n") == 1, stderr
    assert "not a dgtcast journal (it holds players)" in stderr
    assert _sha(path) == before


def test_a_changed_record_is_found_by_its_number(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    _fill(path, 50)
    db = sqlite3.connect(path)
    db.execute("""UPDATE records SET payload = '{"left":0}' WHERE seq = 17""")
    db.commit()
    db.close()
    with Journal(path) as journal, pytest.raises(JournalDamaged, match="damaged at record 17"):
        journal.verify()


def test_a_removed_record_is_found(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    _fill(path, 50)
    db = sqlite3.connect(path)
    db.execute("DELETE FROM records WHERE seq = 30")
    db.commit()
    db.close()
    with Journal(path) as journal, pytest.raises(JournalDamaged, match="damaged at record 30"):
        journal.verify()
    with Journal(path) as journal:
        assert journal.verify(after=31) == 19  # after the gap, the chain holds


def test_a_damaged_page_stops_the_daemon_with_the_record_number(tmp_path: Path) -> None:
    config = write_config(tmp_path, [BoardSpec(1, None), BoardSpec(2, None), BoardSpec(3, None)])
    path = tmp_path / "journal.db"
    _fill(path, 3000)
    with Journal(path) as journal:
        journal.stamp_identity(identity_of(load_config(config)))
        journal.verify()
    data = bytearray(path.read_bytes())
    page = 4096
    middle = (len(data) // page // 2) * page
    data[middle : middle + page] = b"\xa5" * page  # one page of the records' table
    path.write_bytes(bytes(data))
    with Journal(path) as journal, pytest.raises(JournalDamaged) as caught:
        list(journal.records())
    assert 1 < caught.value.seq < 3000
    stderr = refused_start(config)
    assert stderr.count("\n") == 1, stderr
    assert f"journal damaged at record {caught.value.seq}" in stderr


def test_a_schema_1_journal_is_upgraded_and_chained_from_then_on(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE schema_version (version INTEGER NOT NULL);"
        "INSERT INTO schema_version VALUES (1);"
        "CREATE TABLE records (seq INTEGER PRIMARY KEY, board INTEGER NOT NULL,"
        " kind TEXT NOT NULL, at REAL NOT NULL, payload TEXT NOT NULL);"
        """INSERT INTO records (board, kind, at, payload) VALUES (1, 'k', 0.0, '{"n":1}');"""
    )
    db.close()
    with Journal(path) as journal:
        journal.append(1, "k", {"n": 2}, 1.0)
        assert journal.verify() == 1
        assert [r.payload["n"] for r in journal.records()] == [1, 2]
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    db.close()


def test_records_of_boards_the_configuration_lacks_are_kept_not_replayed(tmp_path: Path) -> None:
    config = write_config(tmp_path, [BoardSpec(2, None)])
    _fill(tmp_path / "journal.db", 10)  # boards 1, 2 and 3
    daemon = asyncio.run(Daemon.open(config, DaemonOptions(port=0)))
    daemon.journal.close()
    with Journal(tmp_path / "journal.db") as journal:
        assert journal.last_seq >= 10
