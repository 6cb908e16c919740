"""Whole games in virtual time: exact without faults, and across a restart while the
players play on (the rehearsal of issue 32: a clock in mode 23, 60 min + 10 s)."""

from __future__ import annotations

from pathlib import Path

import chess.pgn
import pytest

from tests.virtual.games import Table, board_config, read_games
from tests.virtual.virtual_daemon import VirtualDaemon
from tests.virtual.world import World


@pytest.fixture(scope="module")
def games(shared_dir: Path) -> list[chess.pgn.Game]:
    return read_games(shared_dir / "data" / "games")


def assert_record(daemon: VirtualDaemon, table: Table, game: chess.pgn.Game) -> None:
    """Every move of ``game``, each ``[%clk]`` within a second of the truth."""
    got = daemon.moves()
    expected = table.expected(game)
    assert [uci for uci, _ in got] == [uci for uci, _ in expected], daemon.world.logs
    for ply, ((_, clock), (_, truth)) in enumerate(zip(got, expected, strict=True), start=1):
        assert clock is not None, f"ply {ply}: no [%clk]"
        assert abs(clock - truth) <= 1, f"ply {ply}: [%clk] {clock} instead of {truth}"


def test_a_game_without_faults_is_recorded_exactly(
    folder: Path, games: list[chess.pgn.Game]
) -> None:
    game = games[0]
    table = Table.of(game, seed=1, speed=5.0)
    world = World(board_config(folder), table.firmware)
    daemon = world.start_daemon()
    world.run_until(5.0)
    end = world.play(table.schedule, origin=5.0)
    world.run_until(end + 10.0)
    assert_record(daemon, table, game)
    assert daemon.open_alerts() == []


@pytest.mark.parametrize("mode23", [False, True], ids=["fischer-clock", "mode-23"])
@pytest.mark.parametrize(("kill", "down"), [(30.0, 8.0), (20.0, 3.0), (45.0, 15.0)])
def test_a_restart_while_the_players_play_on(
    folder: Path, games: list[chess.pgn.Game], mode23: bool, kill: float, down: float
) -> None:
    game = games[1]
    table = Table.of(game, seed=2, speed=2.0, clock="60+10", mode23=mode23)
    world = World(board_config(folder, time_control="3600+10", mode23=mode23), table.firmware)
    world.start_daemon()
    world.run_until(5.0)
    end = world.play(table.schedule, origin=5.0)
    world.run_until(5.0 + kill)
    world.kill()
    world.run_until(5.0 + kill + down)
    daemon = world.start_daemon()
    world.run_until(end + 30.0)
    assert_record(daemon, table, game)
    assert "clock_mismatch" not in daemon.open_alerts()
