"""Replies faster than dgtcast's SETNRUN on a mode 23 clock, in virtual time.

After each press dgtcast sends the clock a SETNRUN with the mover's increment; a busy
computer sends it late (``latency``). A reply pressed before it reaches the clock is
undone by it, and dgtcast carries the reply out with a second SETNRUN, which sets running
a side the clock did not run: a press by that side while it is on its way does nothing.
dgtcast then carries that press out too, from the move the board shows (docs/faults.md,
"A reply faster than dgtcast's answer"). Each schedule here failed before: the clock ran
the side the players did not expect and the board went out of sync. The record must end
as the game played, every ``[%clk]`` within a second of what the clock should have shown
(tests/virtual/world.py, ``should_have_shown``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.config.model import Config
from tests.virtual.found import Schedule
from tests.virtual.schedules import run_schedule, schedule_configs


@pytest.fixture(scope="module")
def configs(folder: Path) -> dict[tuple[bool, bool], Config]:
    return schedule_configs(folder)


def _fast(
    game: int, seed: int, speed: float, latency: float, *, rotate: bool, right: bool
) -> Schedule:
    return Schedule(
        game=game,
        seed=seed,
        speed=speed,
        mode23=True,
        rotate=rotate,
        right=right,
        faults=(),
        latency=latency,
    )


#: (numbers of ../shared/data/games) Replies from 1/speed s on, SETNRUNs ``latency`` late.
FAST = {
    "speed 20, 0.1 s late": _fast(7, 63780, 20.0, 0.1, rotate=False, right=False),
    "speed 10, 0.25 s late": _fast(7, 64987, 10.0, 0.25, rotate=False, right=True),
    "speed 10, 0.4 s late": _fast(0, 26151, 10.0, 0.4, rotate=False, right=False),
    "speed 20, 0.25 s late": _fast(2, 8271, 20.0, 0.25, rotate=True, right=True),
    "speed 20, 0.4 s late": _fast(6, 276, 20.0, 0.4, rotate=False, right=True),
    "speed 40, 0.1 s late": _fast(1, 63944, 40.0, 0.1, rotate=True, right=False),
}


@pytest.mark.parametrize("schedule", FAST.values(), ids=FAST.keys())
def test_replies_faster_than_a_late_setnrun(
    schedule: Schedule, configs: dict[tuple[bool, bool], Config]
) -> None:
    run_schedule(schedule, configs)
