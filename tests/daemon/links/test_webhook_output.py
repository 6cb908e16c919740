"""The daemon's ``[webhook]``: its alerts are POSTed to the configured address.

A real daemon with an emulated board, a loopback HTTP server as the receiver; the alert
is one the daemon's outputs raise (a lichess refusal), published to its live hub.
"""

from __future__ import annotations

import json
from pathlib import Path

from broadcast.feed.alerts import AlertKind
from drivers.emulator.device import EmulatedBoard
from tests.broadcast.conftest import RecordingServer
from tests.daemon.support import BoardSpec, running_daemon, write_config


async def test_an_alert_of_the_daemon_reaches_the_webhook(tmp_path: Path) -> None:
    receiver = RecordingServer()
    await receiver.start()
    try:
        async with EmulatedBoard(seed=7) as board:
            extra = f'\n[webhook]\nurl = "{receiver.url("/alerts")}"\n'
            config = write_config(tmp_path, [BoardSpec(1, str(board.path))], extra=extra)
            async with running_daemon(config) as daemon:
                details = {"round_id": "abcdefgh", "status": 404, "message": "no such round"}
                alert = daemon.service.output_alerts.raise_alert(
                    AlertKind.LICHESS_REFUSED, details, "fix the round id"
                )
                await receiver.wait_for_requests(1)
        posted = [json.loads(r.body) for r in receiver.requests if r.path == "/alerts"]
        assert [(p["id"], p["kind"]) for p in posted][:1] == [(alert.id, "lichess_refused")]
    finally:
        await receiver.close()
