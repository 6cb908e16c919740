"""The configured command: a real process, its exit code and output, timeouts, cancels."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from daemon.pairing.command import run_command
from daemon.pairing.handoff import ResultHandoff
from daemon.pairing.pairings import read_pairings
from daemon.pairing.trf import Tournament
from tests.pairing.support import copy_example

RECORDER = """
import json, os, sys
with open(sys.argv[1], "w") as out:
    json.dump({"argv": sys.argv[2:], "round": os.environ.get("DGTCAST_ROUND"),
               "complete": os.environ.get("DGTCAST_ROUND_COMPLETE")}, out)
print("paired round", os.environ.get("DGTCAST_ROUND"))
print("no pairing yet", file=sys.stderr)
sys.exit(3)
"""


async def test_the_command_gets_the_trf_path_and_the_round_and_its_exit_code_is_reported(
    tmp_path: Path,
) -> None:
    trf, pairings = copy_example(tmp_path)
    record = tmp_path / "record.json"
    tournament = Tournament.from_trf(trf)
    command = [sys.executable, "-c", RECORDER, str(record)]
    handoff = ResultHandoff(tournament, 4, read_pairings(pairings), trf, command)
    handoff.receive_result(1, "1-0", source="arbiter", at=0.0)
    report = await handoff.run_command()
    assert report is not None
    assert (report.exit_code, report.ok, report.timed_out) == (3, False, False)
    assert report.argv == (*command, str(trf))
    assert report.output == "paired round 4\nno pairing yet\n"
    assert record.read_text() == f'{{"argv": ["{trf}"], "round": "4", "complete": "0"}}'


async def test_no_command_configured() -> None:
    trf = Path("unused.trf")
    tournament = Tournament.from_text("001    1 m    Alpha, Ann" + " " * 56 + " 0.0", source="t")
    assert await ResultHandoff(tournament, 1, [], trf).run_command() is None


async def test_a_command_that_does_not_finish_is_killed(tmp_path: Path) -> None:
    command = [sys.executable, "-c", "import time\nprint('working', flush=True)\ntime.sleep(60)"]
    report = await run_command(command, tmp_path / "t.trf", kill_after=0.5)
    assert report.timed_out
    assert report.exit_code == -signal.SIGKILL
    assert report.output == "working\n"


async def test_cancelling_kills_the_command_and_what_it_started(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    os.mkfifo(pids)
    script = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "time.sleep(60)\n"
    )
    task = asyncio.create_task(run_command([sys.executable, "-c", script], tmp_path / "t.trf"))
    started = await asyncio.to_thread(pids.read_text)  # returns once the script wrote
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for pid in map(int, started.split()):
        assert await asyncio.to_thread(_ends, pid)


async def test_a_command_leaving_a_process_behind_returns_and_the_process_is_stopped(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    script = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
    )
    report = await run_command([sys.executable, "-c", script], tmp_path / "t.trf")
    assert (report.exit_code, report.timed_out) == (0, False)
    assert await asyncio.to_thread(_ends, int(pid_file.read_text()))


async def test_a_command_that_cannot_be_started(tmp_path: Path) -> None:
    report = await run_command([str(tmp_path / "no-such-program")], tmp_path / "t.trf")
    assert (report.exit_code, report.ok) == (None, False)
    assert report.output == f"cannot run {tmp_path / 'no-such-program'}: No such file or directory"


def _ends(pid: int) -> bool:
    """Wait (up to 10 s) for a killed process to be gone; False if it lives on."""
    deadline = time.monotonic() + 10
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting for its parent."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split()[2] != "Z"
