"""A journal on a real full or read-only filesystem (a small tmpfs, mounted as root).

Disk full: the boards are still read and served, what cannot be written is held in
memory and written once there is room, the arbiter is told both times, and arbiter
commands are refused (changing nothing) while the journal cannot take them. A journal
that cannot be written at all is refused at start in one line.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest

from broadcast.feed.commands import SetResult
from daemon.journal.inputs import CLOCK, LINK, PLACEMENT
from daemon.journal.store import Journal
from daemon.round.codec import input_of
from tests.daemon.support import (
    BoardSpec,
    clock_input,
    refused_start,
    running_daemon,
    wait_for,
    write_config,
)


@contextlib.contextmanager
def small_disk(where: Path, size: str = "768k") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` (skips the test when it cannot be)."""
    where.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root and mount(8)")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path) -> Path:
    """Take every free byte of ``disk`` with one file."""
    filler = disk / "filler"
    with contextlib.suppress(OSError), filler.open("wb") as handle:
        while True:
            handle.write(b"\0" * 4096)
            handle.flush()
    return filler


def _config(folder: Path, disk: Path) -> Path:
    boards = [BoardSpec(1, "/dev/dgtcast-absent-1"), BoardSpec(2, None)]
    return write_config(folder, boards, journal=f"{disk}/j.db")


def _clock(left: int) -> dict[str, object]:
    return clock_input(left, 5400, "left", "right")


@pytest.mark.error_log  # the journal failing is logged at ERROR
async def test_a_full_disk_holds_inputs_in_memory_alerts_and_writes_them_later(
    tmp_path: Path,
) -> None:
    with small_disk(tmp_path / "disk") as disk:
        config = _config(tmp_path, disk)
        async with running_daemon(config) as daemon:
            service, now = daemon.service, time.time()
            service.receive(input_of(1, LINK, {"state": "online", "reason": ""}, now))
            service.receive(input_of(1, PLACEMENT, {"fen": chess.STARTING_BOARD_FEN}, now))
            filler = _fill(disk)
            left, sent = 5400, 0
            while not service.writer.held:  # until the disk refuses a write
                left -= 1
                sent += 1
                assert sent < 50_000, "the full disk never refused a write"
                service.receive(input_of(1, CLOCK, _clock(left), now + sent))
            failed = [a for a in daemon.hub.open_alerts() if a.kind == "journal_failed"]
            assert len(failed) == 1
            assert "full" in failed[0].details["reason"]
            for _ in range(20):  # the board is still read and served
                left -= 1
                sent += 1
                service.receive(input_of(1, CLOCK, _clock(left), now + sent))
            state = daemon.hub.state(1)
            assert state is not None
            assert state.white_clock == left
            reply = await service.execute(SetResult(board=2, result="1-0"))
            assert not reply.ok
            assert "journal cannot be written" in reply.reason
            assert daemon.core.engine.result_of(2) is None  # refused: nothing changed
            held = service.writer.held
            filler.unlink()  # room again: the timer loop writes what was held
            await wait_for(lambda: not service.writer.held, 10, "held records written")
            assert not [a for a in daemon.hub.open_alerts() if a.kind == "journal_failed"]
            recovered = daemon.hub.alert(failed[0].id)  # written again: resolved
            assert recovered is not None
            assert recovered.state == "resolved"
            note = recovered.history[-1].note
            assert note.startswith("the journal is written again: the ")
            assert int(note.split()[6]) >= held, note
            assert (await service.execute(SetResult(board=2, result="1-0"))).ok
            before = {
                "alerts": daemon.core.engine.alerts,
                "clock": daemon.core.games[1].clock,
                "result": daemon.core.engine.result_of(2),
            }
        with Journal(disk / "j.db") as journal:
            assert journal.verify() > 0
        async with running_daemon(config) as again:  # everything was journalled, in order
            assert again.core.engine.alerts == before["alerts"]
            assert again.core.games[1].clock == before["clock"]
            assert again.core.engine.result_of(2) == before["result"]


def test_a_journal_that_cannot_be_written_is_refused_at_start(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        config = _config(tmp_path, disk)
        Journal(disk / "j.db").close()
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        started = time.monotonic()
        stderr = refused_start(config)
        assert stderr.count("\n") == 1, stderr
        assert "Read-only file system" in stderr or "cannot be written" in stderr
        assert time.monotonic() - started < 30
