"""Gaps the board's memory cannot cover, filled by a search, the players never waiting.

The board's memory is 160 bytes (a DGT board's holds 7,936) and has wrapped: after the
cable's 9 and 12 s out, the read holds nothing of the game, and the gap from the game's
position to the placement the board shows is searched (daemon/round/gap_fill.py). The
line's last move must get its mover's time from the first reading that shows that side
stopped, not the last one before the gap; on a mode 23 clock what the line's presses
earned is owed to the clock, so every later ``[%clk]`` is what it should have shown. A
placement that shows a piece in a player's hand is not searched from: a line that takes
the piece off the board (a capture nobody made) would be published.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.config.model import Config
from tests.virtual.found import Fault, Schedule
from tests.virtual.schedules import INCREMENT, PLIES, run_schedule, schedule_configs


@pytest.fixture(scope="module")
def configs(folder: Path) -> dict[tuple[bool, bool], Config]:
    return schedule_configs(folder)


def _cables(*, mode23: bool) -> Schedule:
    """(game 3 of ../shared/data/games) The cable out twice; plies 26-28 searched."""
    return Schedule(
        game=3,
        seed=20,
        speed=3.0,
        mode23=mode23,
        rotate=True,
        right=True,
        faults=(
            Fault(kind="duplicate", share=0.056009493681193914, seconds=6.664620841019455),
            Fault(kind="read", share=8.327381494732762e-41, seconds=1.5259848413636385),
            Fault(kind="cable", share=0.9218682262933096, seconds=12.014887849929307),
            Fault(kind="cable", share=0.5789380275227546, seconds=9.057708472882172),
        ),
        latency=0.02,
        memory=160,
    )


@pytest.mark.parametrize("mode23", [False, True], ids=["Fischer clock", "mode 23 clock"])
def test_a_searched_gap_takes_the_clock_after_it(
    mode23: bool, configs: dict[tuple[bool, bool], Config]
) -> None:
    world = run_schedule(_cables(mode23=mode23), configs)
    assert world.daemon is not None
    moves = world.daemon.moves()
    assert len(moves) >= 28, "the gap filled"
    truth = (
        world.should_have_shown(lambda _: INCREMENT)
        if mode23
        else [seconds for _, seconds in world.presses]
    )
    for ply, ((_, clock), wanted) in enumerate(zip(moves, truth, strict=False), start=1):
        if ply in (26, 27):
            assert clock is None, f"ply {ply}: searched, only the line's last move has a time"
        else:
            assert clock is not None, f"ply {ply}: no [%clk]"
            assert abs(clock - wanted) <= 1, f"ply {ply}: [%clk] {clock}, not {wanted}"
    assert len(moves) <= PLIES


def test_no_move_made_up_from_a_piece_in_the_air(configs: dict[tuple[bool, bool], Config]) -> None:
    """(game 0) The daemon killed for 18 s: the placement it searched from after its
    restart showed White's knight lifted from b1; the search found Na3 Bxa3 and the
    bishop back, a line nobody played. ``run_schedule`` checks that no move is made up."""
    schedule = Schedule(
        game=0,
        seed=19964,
        speed=1.5,
        mode23=False,
        rotate=True,
        right=False,
        faults=(
            Fault(kind="kill", share=0.28648817944483623, seconds=17.755374416288944),
            Fault(kind="read", share=0.9, seconds=2.00001),
            Fault(kind="read", share=1e-09, seconds=8.929832187248305),
            Fault(kind="cable", share=2.220446049250313e-16, seconds=15.41629642238415),
        ),
        latency=0.25,
        memory=160,
    )
    run_schedule(schedule, configs)
