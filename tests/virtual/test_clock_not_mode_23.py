"""``dgt_mode = 23`` but a clock in another option: it refuses dgtcast's settings."""

from __future__ import annotations

from pathlib import Path

from drivers.emulator.clock import ClockSettings
from tests.virtual.games import Table, board_config, read_game
from tests.virtual.world import World


def test_a_clock_not_in_mode_23_is_one_alert_and_its_own_times(
    folder: Path, games_dir: Path
) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn")
    clock = ClockSettings(base_seconds=900, increment_seconds=0, mode=12)  # adds nothing
    table = Table.of(game, seed=3, speed=3.0, settings=clock, plies=16)
    world = World(board_config(folder, time_control="900+10", mode23=True), table.firmware)
    daemon = world.start_daemon()
    end = world.play(table.schedule, origin=3.0)
    world.run_until(end + 5.0)
    alerts = [a for a in daemon.core.engine.alerts if a.kind.value == "clock_mismatch"]
    assert [a.details.get("check") for a in alerts] == ["mode"]
    assert "not in mode 23" in alerts[0].action
    refusals = [line for line in world.logs if "refuses dgtcast's settings" in line]
    assert len(refusals) == 1
    moves = daemon.moves()
    assert len(moves) == 16
    shown = [seconds for _, seconds in table.firmware.presses]
    # The first press's SETNRUN is the one refused: from the next press on, each move's
    # [%clk] is what the clock showed.
    assert [clock for _, clock in moves][1:] == shown[1:16]
