"""Log lines for the terminal and for systemd's journal (daemon/shell/logs.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from daemon.shell.logs import under_journald

SCRIPT = """
import logging
from daemon.shell.logs import configure_logging
configure_logging("info")
log = logging.getLogger("daemon.session")
log.debug("not shown")
log.info("board 3 = online")
log.warning("board 4: no answer on /dev/ttyACM3")
try:
    1 / 0
except ZeroDivisionError:
    log.exception("board 5 failed")
"""


def _stderr_of(tmp_path: Path, journald: bool) -> list[str]:
    path = tmp_path / "stderr.txt"
    with path.open("wb") as stderr:
        env = dict(os.environ)
        env.pop("JOURNAL_STREAM", None)
        if journald:  # what systemd sets when stderr is the journal's stream
            status = os.fstat(stderr.fileno())
            env["JOURNAL_STREAM"] = f"{status.st_dev}:{status.st_ino}"
        subprocess.run([sys.executable, "-c", SCRIPT], stderr=stderr, env=env, check=True)
    return path.read_text().splitlines()


def test_under_systemd_lines_carry_the_syslog_priority_and_no_time(tmp_path: Path) -> None:
    lines = _stderr_of(tmp_path, journald=True)
    assert lines[:3] == [
        "<6>daemon.session: board 3 = online",
        "<4>daemon.session: board 4: no answer on /dev/ttyACM3",
        "<3>daemon.session: board 5 failed",
    ]
    assert lines[3] == "<3>Traceback (most recent call last):"
    assert all(line.startswith("<3>") for line in lines[3:])
    assert lines[-1] == "<3>ZeroDivisionError: division by zero"


def test_elsewhere_lines_carry_time_and_level(tmp_path: Path) -> None:
    lines = _stderr_of(tmp_path, journald=False)
    assert lines[0].endswith(" INFO daemon.session board 3 = online")
    assert lines[0][:4].isdigit()  # 2026-12-01 23:10:00,123
    assert lines[1].endswith(" WARNING daemon.session board 4: no answer on /dev/ttyACM3")


def test_a_journal_stream_of_another_file_is_not_ours(tmp_path: Path) -> None:
    assert not under_journald({"JOURNAL_STREAM": "1:2"})
    assert not under_journald({"JOURNAL_STREAM": "nonsense"})
    assert not under_journald({})
