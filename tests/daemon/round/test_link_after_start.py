"""After a start the e-boards' links are unknown until heard; a silent one goes offline."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from broadcast.feed.messages import BoardStatus
from daemon.config.model import load_config
from daemon.journal.inputs import LINK, START, TICK
from daemon.round.codec import input_of
from daemon.round.core import RoundCore
from daemon.shell.app import Daemon, DaemonOptions
from tests.daemon.support import FAST_TRACKER, BoardSpec, wait_for, write_config


def _core(tmp_path: Path) -> RoundCore:
    config = write_config(tmp_path, [BoardSpec(1, "/dev/dgt-1"), BoardSpec(2, None)])
    return RoundCore(load_config(config), FAST_TRACKER)


def test_a_restart_makes_a_replayed_online_board_unknown_then_offline_when_silent(
    tmp_path: Path,
) -> None:
    core = _core(tmp_path)
    core.apply(input_of(1, LINK, {"state": "online", "reason": ""}, 100.0))
    assert core.board_state(1, 100.0).status is BoardStatus.WAITING
    core.apply(input_of(0, START, {"silence": 30.0}, 200.0))  # the daemon restarted
    assert core.board_state(1, 200.0).status is BoardStatus.CONNECTING
    assert core.board_state(2, 200.0).status is BoardStatus.MANUAL
    assert core.next_deadline() == 230.0
    outcome = core.apply(input_of(0, TICK, {}, 230.0))
    (alert,) = outcome.alerts
    assert (alert.kind, alert.board, alert.details["since"]) == ("board_offline", 1, 230.0)
    assert core.board_state(1, 230.0).status is BoardStatus.OFFLINE
    back = core.apply(input_of(1, LINK, {"state": "online", "reason": ""}, 240.0))
    (resolved,) = back.alerts  # heard at last: the offline alert resolves
    assert (resolved.id, resolved.state) == (alert.id, "resolved")
    assert resolved.history[-1].note == "the e-board answers again after 10s"
    assert core.board_state(1, 240.0).status is BoardStatus.WAITING


def test_a_board_heard_in_time_raises_nothing(tmp_path: Path) -> None:
    core = _core(tmp_path)
    core.apply(input_of(0, START, {"silence": 30.0}, 200.0))
    core.apply(input_of(1, LINK, {"state": "online", "reason": ""}, 210.0))
    assert core.next_deadline() != 230.0
    assert core.apply(input_of(0, TICK, {}, 231.0)).alerts == []
    assert core.board_state(1, 231.0).status is BoardStatus.WAITING


async def test_a_configured_board_that_never_answers_is_reported_offline(tmp_path: Path) -> None:
    config = write_config(tmp_path, [BoardSpec(1, str(tmp_path / "no-such-port"))])
    options = DaemonOptions(port=0, tracker=FAST_TRACKER, board_silence=1.0)
    daemon = await Daemon.open(config, options)
    stop = asyncio.Event()
    task = asyncio.create_task(daemon.run(stop))
    try:
        await wait_for(lambda: bool(daemon.hub.open_alerts()), 20, "board_offline")
        (alert,) = daemon.hub.open_alerts()
        assert (alert.kind, alert.board) == ("board_offline", 1)
        state = daemon.hub.state(1)
        assert state is not None
        assert state.status is BoardStatus.OFFLINE
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)


async def test_after_a_restart_the_replayed_link_is_not_shown_as_online(tmp_path: Path) -> None:
    config = write_config(tmp_path, [BoardSpec(1, str(tmp_path / "no-such-port"))])
    options = DaemonOptions(port=0, tracker=FAST_TRACKER, board_silence=600.0)
    first = await Daemon.open(config, options)
    await first.start()
    first.service.receive(input_of(1, LINK, {"state": "online", "reason": ""}, time.time()))
    state = first.hub.state(1)
    assert state is not None
    assert state.status is BoardStatus.WAITING
    await first.server.close()
    first.journal.close()  # as a crash would leave it
    again = await Daemon.open(config, options)
    try:
        await again.start()
        state = again.hub.state(1)
        assert state is not None
        assert state.status is BoardStatus.CONNECTING
    finally:
        await again.server.close()
        again.journal.close()
