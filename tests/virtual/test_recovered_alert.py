"""A ``moves_recovered`` alert closes itself once the facts settle (issue 33).

After a ``kill -9`` the plies played while the daemon was down come from the board's
memory, and the arbiter is told which. Once the board plays on in sync after them, they
stand in the record: the alert resolves by itself, long before any result is confirmed,
and its history (the log line of each step, daemon/shell/logs.py) keeps what was said.
"""

from __future__ import annotations

from pathlib import Path

import chess.pgn

from broadcast.feed.alerts import BY_DGTCAST, AlertKind
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


def test_recovered_plies_that_the_game_goes_on_from_settle_their_alert(
    folder: Path, games_dir: Path
) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn")
    table = Table.of(game, seed=11, speed=SPEED, clock="3+2", plies=0)
    world = World(board_config(folder), table.firmware)
    world.start_daemon()
    world.run_until(1.0)
    world.run_until(_part(world, game, 0, 6, seed=1) + 1.0)  # six plies live
    world.kill()
    world.run_until(_part(world, game, 6, 10, seed=2) + 1.0)  # four while it is down
    daemon = world.start_daemon()
    world.run_until(world.now + 30.0)  # the memory read; the players think
    (recovered,) = [a for a in daemon.core.engine.alerts if a.kind is AlertKind.MOVES_RECOVERED]
    assert recovered.details == {"from_ply": 7, "plies": 4, "source": "memory"}
    assert recovered.is_open, "nothing has settled yet"

    world.run_until(_part(world, game, 10, 30, seed=3) + 5.0)
    assert len(daemon.moves()) == 30
    (settled,) = [a for a in daemon.core.engine.alerts if a.kind is AlertKind.MOVES_RECOVERED]
    assert not settled.is_open, "the game went on from them: nothing left to settle"
    assert daemon.core.engine.result_of(1) is None, "no result was confirmed"
    steps = [(step.step, step.by) for step in settled.history]
    assert steps == [("raised", BY_DGTCAST), ("resolved", BY_DGTCAST)]
    assert "plies 7-10" in settled.action
    assert settled.history[-1].note == (
        "the board plays on in sync after plies 7-10: they stand in the record"
    )
