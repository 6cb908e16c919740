"""The arbiter's "rebuild from the board's memory", in virtual time (issue 32, item 2).

A board out of sync whose memory holds the moves heals itself after ``heal_after``, then
with a back-off; ``rebuild_from_memory`` reads the memory at once, outside that
back-off, and runs the same recovery from the last agreed position. Here the session's
own heal is put off for the whole test, so only the arbiter's command can heal it.
"""

from __future__ import annotations

from pathlib import Path

import chess.pgn

from broadcast.feed.commands import RebuildFromMemory
from daemon.journal.inputs import ARBITER
from daemon.session.core import SessionSettings
from drivers.dgt.device_core import DeviceTimeouts
from drivers.emulator.player import HumanPlayer
from tests.virtual.games import Table, board_config, read_game
from tests.virtual.world import World

SPEED = 3.0


def _part(world: World, game: chess.pgn.Game, start: int, stop: int | None, seed: int) -> float:
    """Plies ``start`` … ``stop`` played from now; returns when the last action is done."""
    board = game.board()
    moves = list(game.mainline_moves())
    for move in moves[:start]:
        board.push(move)
    player = HumanPlayer(seed=seed, speed=SPEED)
    schedule = player.play(moves[start:stop], start=board, start_clock=start == 0)
    return world.play(schedule, origin=world.now + 0.5)


def test_the_arbiter_rebuilds_a_board_from_its_memory(folder: Path, games_dir: Path) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn")
    truth = [move.uci() for move in game.mainline_moves()]
    table = Table.of(game, seed=11, speed=SPEED, clock="3+2", plies=0)
    settings = SessionSettings(heal_after=10_000.0)  # no heal of its own in this test
    timeouts = DeviceTimeouts(refresh=600.0)  # no periodic whole read either
    world = World(board_config(folder), table.firmware, settings=settings, timeouts=timeouts)
    daemon = world.start_daemon()
    world.run_until(1.0)
    world.run_until(_part(world, game, 0, 10, seed=1) + 2.0)
    assert [uci for uci, _ in daemon.moves()] == truth[:10]

    table.firmware.drop_field_updates = 10_000  # the line loses every square's change
    world.run_until(_part(world, game, 10, 16, seed=2) + 1.0)
    table.firmware.drop_field_updates = 0
    daemon.read_board()  # a whole read: the board is six plies ahead of the record
    world.run_until(world.now + 30.0)
    assert [uci for uci, _ in daemon.moves()] == truth[:10]
    assert "out_of_sync" in daemon.open_alerts()

    assert daemon.execute(RebuildFromMemory(board=1)) is None
    assert daemon.execute(RebuildFromMemory(board=1)) == "board 1's memory is being read already"
    world.run_until(world.now + 30.0)
    assert [uci for uci, _ in daemon.moves()] == truth[:16]
    assert "out_of_sync" not in daemon.open_alerts()
    assert any("an arbiter asked to rebuild its record" in line for line in world.logs)
    asked = [e for e in world.journal if e.kind == ARBITER]
    assert [e.payload["command"] for e in asked] == 2 * ["rebuild_from_memory"]

    world.run_until(_part(world, game, 16, 30, seed=3) + 5.0)
    assert [uci for uci, _ in daemon.moves()] == truth[:30], "the game goes on"


def test_a_board_offline_cannot_be_rebuilt_now(folder: Path, games_dir: Path) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn")
    table = Table.of(game, seed=12, speed=SPEED, clock="3+2", plies=0)
    world = World(board_config(folder), table.firmware)
    daemon = world.start_daemon()
    world.run_until(5.0)
    world.unplug(keep_power=True)
    world.run_until(world.now + 10.0)
    refused = daemon.execute(RebuildFromMemory(board=1))
    assert refused == "board 1 is offline: its memory is read when it is back"
