"""With ``--plain`` an alert the outputs raise is one log line per step, not two (issue 33).

A lichess round that refuses the push raises ``lichess_refused``; the alert log
(daemon/shell/logs.py) writes it as the arbiter's view, and nothing else writes the
alert again (the push's own line says what lichess answered).
"""

from __future__ import annotations

from pathlib import Path

from tests.broadcast.conftest import RecordingServer
from tests.broadcast.fake_lichess import BAD, FakeLichess
from tests.daemon.support import BoardSpec, wait_for, write_config
from tests.serving import start_dgtcast, stop_process


async def test_a_lichess_refusal_is_one_warning_in_the_plain_log(tmp_path: Path) -> None:
    server = RecordingServer()
    await server.start()
    FakeLichess(server)
    extra = (
        f'\n[[lichess]]\nrounds = {{ 2 = "TestRdLg" }}\ntoken = "{BAD}"\n'
        f'server = "{server.url("")}"\n'
    )
    config = write_config(tmp_path, [BoardSpec(1, None)], extra=extra)
    log = tmp_path / "daemon.log"
    started = await start_dgtcast(
        "run", "--config", str(config), "--http-port", "0", "--plain", log=log
    )
    try:

        def said() -> list[str]:
            lines = log.read_text().splitlines()
            return [line for line in lines if "alert 1000000" in line or "lichess_refused" in line]

        await wait_for(lambda: any(" daemon.alerts " in line for line in said()), 20, "logged")
    finally:
        await stop_process(started.process)
        await server.close()
    (line,) = said()
    assert " WARNING daemon.alerts ! alert 1000000 raised: the event lichess_refused:" in line
    assert "lichess refused round TestRdLg (401: No such token)" in line
