"""The recovery scenarios in virtual time: whole games, the players never waiting.

* ``kill -9`` and a restart after 10 s, 60 s and 5 minutes of play, two real games, one
  board set up the wrong way round with White's clock on the right;
* the cable out for 1, 3, 10 and 30 plies (the board keeps its power and logs on);
* on a mode 23 clock, a gap across move 40 of a two-period control: each move's
  ``[%clk]`` gets the increments and the second period's time nobody added meanwhile.

Each record must hold every move, each ``[%clk]`` what the clock showed at its press
(on a mode 23 clock: what it should have shown), and the result the players signalled.
"""

from __future__ import annotations

from pathlib import Path

import chess
import chess.pgn
import pytest

from daemon.config.model import Config
from daemon.game.durations import TimeControl
from drivers.emulator.clock import ClockSettings
from tests.virtual.games import Table, board_config, read_game
from tests.virtual.virtual_daemon import VirtualDaemon
from tests.virtual.world import World

SPEED = 3.0
ORIGIN = 3.0


def _check(daemon: VirtualDaemon, game: chess.pgn.Game, truth: list[int]) -> None:
    moves = daemon.moves()
    wanted = [move.uci() for move in game.mainline_moves()]
    assert [uci for uci, _ in moves] == wanted, daemon.world.logs[-20:]
    for ply, ((_, clock), seconds) in enumerate(zip(moves, truth, strict=False), start=1):
        assert clock is not None, f"ply {ply}: no [%clk]"
        assert abs(clock - seconds) <= 1, f"ply {ply}: [%clk] {clock}, not {seconds}"


def _signalled(daemon: VirtualDaemon, game: chess.pgn.Game) -> bool:
    state = daemon.core.engine.result_of(daemon.world.number)
    return state is not None and state.result == game.headers["Result"]


@pytest.mark.parametrize("down", [10.0, 60.0, 300.0])
@pytest.mark.parametrize(
    ("name", "index", "rotate", "white_side"),
    [
        ("nepomniachtchi-liren-game1.pgn", 0, False, "left"),
        ("kasparov-deep-blue-1997.pgn", 0, True, "right"),
    ],
    ids=["nepo-liren", "kasparov-rotated"],
)
def test_kill_9_and_a_restart_after_minutes_of_play(
    folder: Path,
    games_dir: Path,
    down: float,
    name: str,
    index: int,
    rotate: bool,
    white_side: str,
) -> None:
    game = read_game(games_dir / name, index)
    table = Table.of(
        game,
        seed=11,
        speed=SPEED,
        clock="3+2",
        rotate=rotate,
        white_side="right" if white_side == "right" else "left",
        result=game.headers["Result"],
    )
    world = World(board_config(folder), table.firmware)
    world.start_daemon()
    end = world.play(table.schedule, origin=ORIGIN)
    presses = table.press_times(ORIGIN)
    world.run_until(presses[5] + 0.5)  # a few moves live
    world.kill()
    world.run_until(world.now + down)
    daemon = world.start_daemon()
    world.run_until(max(end, world.now) + 30.0)  # the game may have ended meanwhile
    _check(daemon, game, table.truth)
    game_state = daemon.core.games[1]
    assert game_state.recovered_plies >= 1
    assert _signalled(daemon, game)


@pytest.mark.parametrize(("at", "out"), [(10, 1), (12, 3), (20, 10), (30, 30)])
def test_a_cable_out_for_some_plies(folder: Path, games_dir: Path, at: int, out: int) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn")
    table = Table.of(game, seed=20 + out, speed=SPEED, clock="3+2", result=game.headers["Result"])
    world = World(board_config(folder), table.firmware)
    daemon = world.start_daemon()
    end = world.play(table.schedule, origin=ORIGIN)
    presses = table.press_times(ORIGIN)
    world.run_until(presses[at - 1] + 0.05)
    assert len(daemon.moves()) == at
    world.unplug(keep_power=True)
    world.run_until(presses[at + out - 1] + 0.05)
    world.replug()
    world.run_until(end + 30.0)
    _check(daemon, game, table.truth)
    assert daemon.core.games[1].recovered_plies == out
    assert _signalled(daemon, game)


def test_a_gap_across_move_40_on_a_mode_23_clock(folder: Path, games_dir: Path) -> None:
    """Moves 38 to 41 of each side while the daemon is down: move 40 brings the second
    period (600 s) on top of its increment; the memory's presses lack both."""
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn")
    text = "40/1800+10:600+10"
    control = TimeControl.from_text(text)
    config = board_config(folder, time_control=text, mode23=True)
    settings = ClockSettings(base_seconds=1800, increment_seconds=10, mode=23)
    table = Table.of(game, seed=7, speed=SPEED, settings=settings, mode23=True)
    world = World(config, table.firmware)
    world.start_daemon()
    end = world.play(table.schedule, origin=ORIGIN)
    presses = table.press_times(ORIGIN)
    world.run_until(presses[73] + 0.05)  # 74 plies live
    world.kill()
    world.run_until(presses[81] + 0.05)  # 8 plies unseen: moves 38-41 of each side
    daemon = world.start_daemon()
    world.run_until(end + 30.0)
    _check(daemon, game, world.should_have_shown(control.added_after))
    assert "clock_mismatch" not in daemon.open_alerts()


def test_the_configs_are_what_the_scenarios_say(folder: Path) -> None:
    config: Config = board_config(folder, time_control="40/1800+10:600+10", mode23=True)
    event = config.sections[0].event
    assert event.dgt_mode == 23
    assert event.time_control.added_after(40) == 610
