"""Board sessions stamp reports with wall-clock times that never go backwards."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import cast

from daemon.config.model import BoardConfig
from daemon.shell.pipeline import BoardSession
from daemon.shell.service import RoundService


async def test_reports_of_one_burst_never_come_out_earlier_than_the_one_before() -> None:
    # The wall clock read for the second report of a burst is a microsecond behind (the
    # two clocks are read at slightly different instants): its stamp must not go back.
    walls = iter([1000.000002, 1000.000001, 1000.5])
    session = BoardSession(
        BoardConfig(number=1, port="/dev/null-board"),
        cast(RoundService, SimpleNamespace(core=None)),  # stamping needs no round
        wall_clock=lambda: next(walls),
    )
    now = asyncio.get_running_loop().time()
    stamps = [session._to_wall(now) for _ in range(3)]
    assert stamps[0] <= stamps[1] <= stamps[2]
    assert stamps[1] == stamps[0]
