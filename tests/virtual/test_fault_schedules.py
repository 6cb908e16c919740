"""Random fault schedules in virtual time, the players never waiting (issue 32).

Each example is a real game (every game of ../shared/data/games, two Chess960 games),
human timings at a random speed, a computer that answers the board at once or up to
0.25 s late (a busy laptop: its commands, a SETNRUN among them, reach the clock that much
later while the players go on), a Fischer clock or a mode 23 clock that dgtcast drives,
a board set up either way round with the clock on either side, and up to four faults at
random moments of play: ``kill -9`` and a restart after a random downtime (the journal
replayed), the cable out and in (the board keeps its power and logs on), a duplicated
field update, lost and torn field updates, a whole-board read in the middle of a move,
lost clock readings. Moves go on during every memory read. The schedules that found
bugs are kept in tests/virtual/found.py.

Whenever the board's memory still holds the moves, the record must end as the game
played, every ``[%clk]`` within a second of what the clock showed, and no alert may be
left open that the facts have settled: no ``out_of_sync``, no ``clock_mismatch`` for a
gap the daemon could not see, no ``moves_recovered`` for plies the game went on from. A
DGT board's memory holds every move of the plies played; one property test gives the
board a memory of 96 to 400 bytes instead, which wraps: there, the record must hold no
move that was not played, every press followed live must give its move's ``[%clk]``, and
when moves are missing an alert must stay open that says so (``out_of_sync``, or
``gap_ambiguous`` with the lines that fit).

On a mode 23 clock, which adds nothing itself, the truth is what the clock showed after
each press plus what the press earned, plus the increments of the mover's earlier
presses that the clock was never given (those made since dgtcast last set it: a SETNRUN
gives it all it lacks): a press made while nobody listened comes back with every
increment the clock should have had (tests/virtual/world.py, ``should_have_shown``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from daemon.config.model import Config
from tests.virtual.found import FOUND, Schedule
from tests.virtual.schedules import (
    GAME_LIST,
    SMALL_MEMORIES,
    run_schedule,
    schedule_configs,
    schedules,
)

#: Examples per test and run (docs/development.md: some 14 s of one core a test, each on its
#: own pytest-xdist worker, tests/virtual/conftest.py); DGTCAST_SCHEDULES for more.
EXAMPLES = int(os.environ.get("DGTCAST_SCHEDULES", "350"))


@pytest.fixture(scope="module")
def configs(folder: Path) -> dict[tuple[bool, bool], Config]:
    return schedule_configs(folder)


SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],  # a failure is shown as found: no shrinking
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(schedule=schedules(mode23=False, chess960=False))
def test_fault_schedules_on_clocks_that_add_their_own_time(
    schedule: Schedule, configs: dict[tuple[bool, bool], Config]
) -> None:
    run_schedule(schedule, configs)


@pytest.mark.parametrize("name", sorted(FOUND))
def test_the_schedules_that_found_bugs(name: str, configs: dict[tuple[bool, bool], Config]) -> None:
    run_schedule(FOUND[name], configs)


@SETTINGS
@given(schedule=schedules(mode23=True, chess960=False))
def test_fault_schedules_on_mode_23_clocks(
    schedule: Schedule, configs: dict[tuple[bool, bool], Config]
) -> None:
    run_schedule(schedule, configs)


@SETTINGS
@given(schedule=schedules(mode23=True, chess960=True))
def test_fault_schedules_in_chess960(
    schedule: Schedule, configs: dict[tuple[bool, bool], Config]
) -> None:
    run_schedule(schedule, configs)


@settings(SETTINGS, max_examples=max(1, EXAMPLES // 5))
@given(
    schedule=st.one_of(
        schedules(mode23=False, chess960=False, memory=SMALL_MEMORIES),
        schedules(mode23=True, chess960=False, memory=SMALL_MEMORIES),
    )
)
def test_fault_schedules_with_a_memory_that_wraps(
    schedule: Schedule, configs: dict[tuple[bool, bool], Config]
) -> None:
    run_schedule(schedule, configs)


def test_the_games_are_there() -> None:
    assert len(GAME_LIST) >= 10
    assert any(game.headers.get("Variant") == "Chess960" for game in GAME_LIST)
