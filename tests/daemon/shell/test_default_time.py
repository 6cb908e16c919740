"""The default time counts from the round's start, never from the daemon's (issue 21, item 6).

Real daemon, emulated boards on ptys, no ``round_start`` configured: the round starts
when the section's first clock is started (FIDE 6.6), and the default time of FIDE 6.7
counts from then. Without ``default_time`` (FIDE's zero default) no late-arrival alert is
raised at all; the start says so once in the log.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.conftest import Serve
from tests.daemon.support import wait_for

CLOCK = ClockSettings.from_text("3+2")


def _late(daemon: Daemon) -> list[tuple[int, str, float]]:
    alerts = daemon.core.engine.alerts
    return [(a.board, a.details["stage"], a.at) for a in alerts if a.kind == "late_arrival"]


async def test_without_a_default_time_no_forfeit_alert(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with (
        EmulatedBoard(clock=CLOCK, seed=61) as one,
        EmulatedBoard(clock=CLOCK, seed=62) as two,
        serve(one, two, default_time=None) as daemon,
    ):
        one.start_clock()
        await wait_for(lambda: daemon.core.games[1].clock is not None, 10, "clock seen")
        await asyncio.sleep(1.0)  # the zero default time is long past
        late = _late(daemon)
        deadline = daemon.core.engine.next_deadline()
    assert deadline is None, "no late-arrival check is ever due"
    assert late == []
    reports = [r.message for r in caplog.records if "default time 0" in r.message]
    assert len(reports) == 1, reports
    assert "FIDE 6.7" in reports[0]


async def test_the_default_time_counts_from_the_first_clock_started(serve: Serve) -> None:
    async with (
        EmulatedBoard(clock=CLOCK, seed=63) as one,
        EmulatedBoard(clock=CLOCK, seed=64) as two,
    ):
        late_at = {"default_time_warning": "0s"}
        async with serve(one, two, default_time="3s", event=late_at) as daemon:
            await asyncio.sleep(4.0)  # longer than the default time: the round has not started
            assert _late(daemon) == []
            assert daemon.core.engine.next_deadline() is None
            one.start_clock()  # board 1's clock starts the section's round
            await wait_for(lambda: len(_late(daemon)) == 2, 15, "both boards' default alerts")
            late = _late(daemon)
            clock = daemon.core.games[1].clock
    assert clock is not None
    started = min(at for _, _, at in late) - 3
    assert sorted(late) == [(1, "default", started + 3), (2, "default", started + 3)]
    assert started <= clock.at, "counted from the clock's start, not the daemon's"
