"""Log lines for the terminal and for systemd's journal (daemon/shell/logs.py)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from websockets.asyncio.client import connect

from broadcast.feed.alerts import Alert, AlertKind
from daemon.shell.logs import alert_lines, under_journald
from tests.broadcast.conftest import RecordingServer
from tests.broadcast.fake_lichess import BAD, FakeLichess
from tests.daemon.config_file import TomlTable
from tests.daemon.support import BoardSpec, wait_for, write_config
from tests.serving import start_dgtcast, stop_process

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


async def test_with_plain_every_step_of_an_alert_is_one_log_line(tmp_path: Path) -> None:
    """Issue 33, item 5: the log is the arbiter's view without the live console."""
    server = RecordingServer()
    await server.start()
    FakeLichess(server)
    lichess: TomlTable = {"rounds": {"2": "TestRdLg"}, "token": BAD, "server": server.url("")}
    config = write_config(tmp_path, [BoardSpec(1, None)], arrays={"lichess": [lichess]})
    log = tmp_path / "daemon.log"
    started = await start_dgtcast(
        "run", "--config", str(config), "--http-port", "0", "--plain", log=log
    )
    try:

        def lines(mark: str) -> list[str]:
            text = log.read_text().splitlines()
            return [line for line in text if " daemon.alerts " in line and mark in line]

        await wait_for(lambda: bool(lines("lichess_refused")), 20, "the refusal logged")
        (raised,) = lines("lichess_refused")
        assert " WARNING daemon.alerts ! alert " in raised
        assert " raised: the event lichess_refused: " in raised
        assert "No such token" in raised  # the action, in words
        alert_id = int(raised.split("! alert ")[1].split()[0])
        url = f"ws://127.0.0.1:{started.port}/ws/arbiter"
        async with connect(url) as ws:
            await ws.send(json.dumps({"type": "auth", "token": "arbiter-secret"}))
            await ws.send(json.dumps({"type": "ack_alert", "id": alert_id, "ref": "r1"}))
            while json.loads(await ws.recv()).get("ref") != "r1":
                pass
        await wait_for(lambda: len(lines("lichess_refused")) == 3, 20, "ack and resolve logged")
        acked, resolved = lines("lichess_refused")[1:]
        assert f" INFO daemon.alerts = alert {alert_id} acknowledged by arbiter: " in acked
        assert f" INFO daemon.alerts = alert {alert_id} resolved by arbiter: " in resolved
    finally:
        await stop_process(started.process)
        await server.close()


def test_alert_lines_one_per_step_even_when_versions_were_skipped() -> None:
    raised = Alert.raised(
        id=7,
        kind=AlertKind.OUT_OF_SYNC,
        board=3,
        at=100.0,
        details={"since": 100.0},
        action="Board 3: the pieces match no position of the game. Put them back.",
    )
    assert alert_lines(raised) == [
        (
            logging.WARNING,
            "! alert 7 raised: board 3 out_of_sync: Board 3: the pieces match no position"
            " of the game. Put them back.",
        )
    ]
    later = (
        raised.updated(110.0, {"since": 100.0}, "Board 3: still apart.", "the pieces moved")
        .acknowledge(120.0)
        .resolve(130.0, "the pieces match the game again")
    )
    assert alert_lines(later, logged=1) == [  # raised was logged; three versions in one
        (logging.WARNING, "! alert 7 updated by dgtcast: board 3 out_of_sync: the pieces"
                          " moved; Board 3: still apart."),
        (logging.INFO, "= alert 7 acknowledged by arbiter: board 3 out_of_sync"),
        (logging.INFO, "= alert 7 resolved by dgtcast: board 3 out_of_sync: the pieces match"
                       " the game again"),
    ]  # fmt: skip
    assert alert_lines(later, logged=4) == []
