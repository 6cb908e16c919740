"""A journal knows its event and rounds: another round's journal is refused, resumed or kept."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from daemon.config.model import load_config
from daemon.journal.identity import compare_identity, identity_of, open_round_journal
from daemon.journal.records import JournalError, RoundIdentity
from daemon.journal.store import ROUND, Journal
from daemon.shell.app import Daemon, DaemonOptions
from tests.daemon.support import BoardSpec, refused_start, write_config
from tests.serving import dgtcast_run


def _config(folder: Path, *, round_number: int = 2, event: str = "Test Open") -> Path:
    boards = [BoardSpec(1, None), BoardSpec(2, None)]
    return write_config(folder, boards, name=event, round_number=round_number)


def _start_and_stop(config: Path, *, new_journal: bool = False) -> Path:
    """Build the daemon (which opens and replays its journal); returns the journal's path."""
    daemon = asyncio.run(Daemon.open(config, DaemonOptions(port=0, new_journal=new_journal)))
    path = Path(daemon.journal.path)
    daemon.journal.close()
    return path


def test_a_new_journal_is_stamped_with_the_event_and_rounds(tmp_path: Path) -> None:
    config = _config(tmp_path)
    path = _start_and_stop(config)
    with Journal(path) as journal:
        assert journal.identity() == RoundIdentity(event="Test Open", rounds={"": 2})
    assert _start_and_stop(config) == path  # the same round again: the same journal


def test_another_rounds_journal_is_refused_in_one_line_and_left_as_it_was(tmp_path: Path) -> None:
    _start_and_stop(_config(tmp_path, round_number=1))
    journal = tmp_path / "journal.db"
    before = journal.read_bytes()
    stderr = refused_start(_config(tmp_path, round_number=2))
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert 'journal belongs to event "Test Open", round 1' in lines[0]
    assert "dgtcast round next" in lines[0]
    assert "--new-journal" in lines[0]
    assert journal.read_bytes() == before


def test_another_events_journal_is_refused(tmp_path: Path) -> None:
    _start_and_stop(_config(tmp_path, event="Spring Open"))
    stderr = refused_start(_config(tmp_path, event="Autumn Open"))
    assert stderr.count("\n") == 1
    assert 'journal belongs to event "Spring Open", round 2, not event "Autumn Open"' in stderr


def test_new_journal_starts_beside_the_old_one_and_a_restart_finds_it(tmp_path: Path) -> None:
    old = _start_and_stop(_config(tmp_path, round_number=1))
    before = old.read_bytes()
    config = _config(tmp_path, round_number=2)
    fresh = _start_and_stop(config, new_journal=True)
    assert fresh == tmp_path / "journal.round-2.db"
    assert old.read_bytes() == before
    with Journal(fresh) as journal:
        assert journal.identity() == RoundIdentity(event="Test Open", rounds={"": 2})
    assert _start_and_stop(config) == fresh  # no flag needed after a crash
    assert _start_and_stop(config, new_journal=True) == fresh


def test_a_round_moved_on_in_the_journal_resumes_and_a_later_one_needs_round_next(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, round_number=1)
    path = _start_and_stop(config)
    with Journal(path) as journal:
        journal.append(0, ROUND, {"section": "", "round": 2}, 1.0)
        assert journal.identity() == RoundIdentity(event="Test Open", rounds={"": 2})
    with open_round_journal(load_config(config)) as journal:  # unchanged config: resumes
        assert journal.identity() == RoundIdentity(event="Test Open", rounds={"": 2})
    with open_round_journal(load_config(_config(tmp_path, round_number=2))):
        pass
    with pytest.raises(JournalError, match=r"round 2; the configuration names .* round 3"):
        open_round_journal(load_config(_config(tmp_path, round_number=3)))


def test_sections_compare_one_by_one() -> None:
    found = RoundIdentity(event="E", rounds={"A": 3, "B": 2})
    assert compare_identity(found, RoundIdentity(event="E", rounds={"A": 3, "B": 2})) is None
    assert compare_identity(found, RoundIdentity(event="E", rounds={"A": 1, "B": 2})) is None
    ahead = compare_identity(found, RoundIdentity(event="E", rounds={"A": 3, "B": 3}))
    assert ahead is not None
    assert "sections A round 3 and B round 2" in ahead
    other = compare_identity(found, RoundIdentity(event="E", rounds={"A": 3}))
    assert other is not None
    assert other.startswith("journal belongs to")


def test_identity_of_a_two_section_config() -> None:
    config = load_config(Path(__file__).parents[3] / "config" / "sections.toml")
    identity = identity_of(config)
    assert identity.event == "Victorian Junior Championship 2026"
    assert set(identity.rounds.values()) == {2}
    assert len(identity.rounds) == 2


def test_a_second_daemon_on_the_same_journal_is_refused(tmp_path: Path) -> None:
    config = _config(tmp_path)
    first = subprocess.Popen(
        dgtcast_run(config),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert first.stdout is not None
        while "viewer:" not in (line := first.stdout.readline()):
            assert line, "the first daemon did not start"
        stderr = refused_start(config)
        assert stderr.count("\n") == 1
        assert "in use by another dgtcast daemon" in stderr
    finally:
        first.terminate()
        assert first.wait(30) == 0
        assert first.stdout is not None
        first.stdout.close()
    assert _start_and_stop(config)  # the lock went with the first daemon
