"""Atomic TRF writes: a writer killed with SIGKILL at any moment never leaves a torn file."""

from __future__ import annotations

import os
import random
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from base.atomic_file import write_atomically
from daemon.pairing.scoring import RoundEntry
from daemon.pairing.trf import Tournament
from tests.pairing.support import player_line, trf_text
from tests.shared_data import ROOT

WRITER = Path(__file__).with_name("trf_writer.py")
PLAYERS = 2000  # about 200 kB: long enough for a kill to land inside a write


def versions() -> tuple[bytes, bytes]:
    """A tournament before and after a round of results (both valid TRF files)."""
    lines = ["012 Crash test", "XXR 9"]
    lines += [player_line(rank, f"Player, Number {rank}", "0.0") for rank in range(1, PLAYERS + 1)]
    before = Tournament.from_text(trf_text(*lines), source="crash.trf")
    entries: dict[int, RoundEntry | None] = {}
    for white in range(1, PLAYERS + 1, 2):
        entries[white] = RoundEntry(opponent=white + 1, colour="w", code="1")
        entries[white + 1] = RoundEntry(opponent=white, colour="b", code="0")
    return before.to_bytes(), before.with_round(1, entries).to_bytes()


def test_a_writer_killed_mid_write_leaves_the_old_or_the_new_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "tournament.trf"
    first, second = versions()
    path.write_bytes(first)
    (tmp_path / "first").write_bytes(first)
    (tmp_path / "second").write_bytes(second)
    rng = random.Random(6)
    for _ in range(4):
        writes = rng.randrange(1, 10)
        process = subprocess.Popen(
            [
                sys.executable,
                str(WRITER),
                str(path),
                str(tmp_path / "first"),
                str(tmp_path / "second"),
            ],
            stdout=subprocess.PIPE,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert process.stdout is not None
        for _ in range(writes):  # let it run some writes, then kill it while it writes on
            assert process.stdout.readline()
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stdout.close()
        assert path.read_bytes() in (first, second)
        assert len(Tournament.from_trf(path).players) == PLAYERS
    others = {p.name for p in tmp_path.iterdir()} - {"tournament.trf", "first", "second"}
    assert all(re.fullmatch(r"\.tournament\.trf\.\w+\.tmp", name) for name in others)


def test_the_file_keeps_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / "tournament.trf"
    path.write_bytes(b"old")
    path.chmod(0o640)
    write_atomically(path, b"new\r\n")
    assert path.read_bytes() == b"new\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["tournament.trf"]


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    folder = tmp_path / "tournament.trf"
    folder.mkdir()  # a folder in the way: the rename fails
    with pytest.raises(IsADirectoryError):
        write_atomically(folder, b"new")
    assert [p.name for p in tmp_path.iterdir()] == ["tournament.trf"]
    assert folder.is_dir()


def test_a_new_file_gets_the_usual_permissions(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    try:
        write_atomically(tmp_path / "new.trf", b"x")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.trf").stat().st_mode) == 0o644
