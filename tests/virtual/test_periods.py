"""Move-count periods in virtual time: the move-40 period change of "40 moves in 15m + 1s,
then 5m + 1s", the same game on two clocks.

* A clock that runs the period itself: every ``[%clk]`` what it showed, no alert.
* A clock that misses the bonus (set to 15m + 1s only): its readings recorded as shown,
  and one ``clock_mismatch`` per colour at move 40 saying the 301 s that were due.
* A mode 23 clock, which adds nothing: dgtcast adds the increment after every press and
  the period's 5 minutes after move 40; every ``[%clk]`` what the clock should have shown.

A short mode 23 game across a period change, and Armageddon, play through the real
daemon on ptys (tests/daemon/end_to_end/test_time_controls_end_to_end.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.game.durations import TimeControl
from drivers.emulator.clock import ClockSettings
from tests.virtual.games import Table, board_config, read_game
from tests.virtual.world import World

SPEED = 12.0
ORIGIN = 3.0
PLIES = 82  # through Black's move 41
CLASSICAL = "40 moves in 15m + 1s, then 5m + 1s"


@pytest.mark.parametrize("runs_the_period", [True, False], ids=["period-clock", "no-bonus"])
def test_a_game_through_the_move_40_period_change(
    folder: Path, games_dir: Path, runs_the_period: bool
) -> None:
    game = read_game(games_dir / "nepomniachtchi-liren-game1.pgn")
    periods = ((40, 300),) if runs_the_period else ()
    settings = ClockSettings(base_seconds=900, increment_seconds=1, periods=periods)
    table = Table.of(game, seed=1, speed=SPEED, settings=settings, plies=PLIES)
    world = World(board_config(folder, time_control=CLASSICAL), table.firmware)
    daemon = world.start_daemon()
    end = world.play(table.schedule, origin=ORIGIN)
    world.run_until(end + 10.0)
    moves = daemon.moves()
    assert [uci for uci, _ in moves] == [m.uci() for m in game.mainline_moves()][:PLIES]
    assert [clock for _, clock in moves] == table.truth[:PLIES], "what the clock showed"
    gained = {ply: table.truth[ply - 1] - table.truth[ply - 3] for ply in (79, 80)}
    mismatches = [
        alert
        for alert in daemon.core.engine.alerts
        if alert.board == 1 and alert.kind == "clock_mismatch"
    ]
    if runs_the_period:
        assert all(seconds > 250 for seconds in gained.values()), gained
        assert mismatches == [], "a clock that adds the period raises nothing"
        return
    assert all(seconds <= 1 for seconds in gained.values()), gained
    missing = sorted(mismatches, key=lambda a: a.details["color"])
    assert [(a.details["color"], a.details["move"]) for a in missing] == [
        ("black", 40),
        ("white", 40),
    ]
    assert all(a.details["added"] <= 2 for a in missing)
    assert "instead of 301 s" in missing[0].action


def test_a_mode_23_clock_gets_the_next_period_from_dgtcast(folder: Path, games_dir: Path) -> None:
    game = read_game(games_dir / "nepomniachtchi-liren-game1.pgn")
    settings = ClockSettings(base_seconds=900, increment_seconds=1, mode=23)
    table = Table.of(game, seed=2, speed=SPEED, settings=settings, mode23=True, plies=PLIES)
    config = board_config(folder, time_control=CLASSICAL, mode23=True)
    world = World(config, table.firmware)
    daemon = world.start_daemon()
    end = world.play(table.schedule, origin=ORIGIN)
    world.run_until(end + 10.0)
    moves = daemon.moves()
    assert [uci for uci, _ in moves] == [m.uci() for m in game.mainline_moves()][:PLIES]
    assert all(world.seen_presses), "every press followed live"
    wanted = world.should_have_shown(TimeControl.from_text(CLASSICAL).added_after)
    assert [clock for _, clock in moves] == wanted[:PLIES], "what the clock should show"
    # The clock's own reading at each side's 41st press: the period's 300 s are on it.
    shown = [seconds for _, seconds in world.firmware.presses]
    gained = {ply: shown[ply - 1] - shown[ply - 3] for ply in (81, 82)}
    assert all(seconds > 250 for seconds in gained.values()), gained
    assert "clock_mismatch" not in daemon.open_alerts()
