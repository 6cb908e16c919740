"""Chess960 games caught up from the board's own memory, in virtual time.

A board set up for a Chess960 start (turned round or not) in a Chess960 section, the
daemon away while both sides castle: started for the first time mid-game, or killed at a
placement the log holds twice (only the game's start places it) and started again after
the castling. Every move and every ``[%clk]`` must come out exactly, recovered from the
memory. tests/daemon/session/test_chess960_memory_recovery.py keeps the start mid-game
through the real daemon on ptys.
"""

from __future__ import annotations

from pathlib import Path

import chess.pgn
import pytest

from tests.game.chess960_games import REPEATING, chess960_game
from tests.virtual.games import Table, board_config
from tests.virtual.virtual_daemon import VirtualDaemon
from tests.virtual.world import World

SPEED = 12.0
ORIGIN = 3.0


def _check(daemon: VirtualDaemon, game: chess.pgn.Game, table: Table) -> None:
    """Every move and ``[%clk]``, from the Chess960 start the PGN names."""
    moves = daemon.moves()
    assert [uci for uci, _ in moves] == [move.uci() for move in game.mainline_moves()]
    assert [clock for _, clock in moves] == table.truth[: len(moves)]
    recorded = daemon.core.games[1].record.game()
    assert recorded.headers["Variant"] == "Chess960"
    assert recorded.headers["FEN"] == game.headers["FEN"]


@pytest.mark.parametrize(
    ("number", "rotate", "plies"), [(672, False, 16), (194, True, 12)], ids=["672", "194-rotated"]
)
def test_daemon_started_after_the_castling(
    folder: Path, number: int, rotate: bool, plies: int
) -> None:
    game = chess960_game(number)
    table = Table.of(game, seed=21, speed=SPEED, rotate=rotate, noise=0.2)
    world = World(board_config(folder, chess960=True), table.firmware)
    end = world.play(table.schedule, origin=ORIGIN)
    presses = table.press_times(ORIGIN)
    world.run_until(presses[plies - 1] + 0.05)
    daemon = world.start_daemon()
    world.run_until(end + 30.0)
    _check(daemon, game, table)
    assert daemon.core.games[1].recovered_plies == plies


@pytest.mark.parametrize(
    ("number", "rotate"), [(672, True), (194, False)], ids=["672-rotated", "194"]
)
def test_kill_9_before_the_castling_and_a_restart_after_it(
    folder: Path, number: int, rotate: bool
) -> None:
    # Killed at ply 6, whose placement the log holds twice (after ply 2 too): only the
    # game's start places it. Castled at plies 9 and 10, while the daemon is down.
    game = chess960_game(number, REPEATING)
    table = Table.of(game, seed=31, speed=SPEED, rotate=rotate, noise=0.2)
    world = World(board_config(folder, chess960=True), table.firmware)
    world.start_daemon()
    end = world.play(table.schedule, origin=ORIGIN)
    presses = table.press_times(ORIGIN)
    world.run_until(presses[5] + 0.05)
    assert world.daemon is not None
    assert len(world.daemon.moves()) == 6
    world.kill()
    world.run_until(presses[13] + 0.05)
    daemon = world.start_daemon()
    world.run_until(end + 30.0)
    _check(daemon, game, table)
    assert daemon.core.games[1].recovered_plies == 8
