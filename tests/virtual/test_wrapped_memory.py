"""A board whose memory has wrapped, in virtual time (its players wait for the arbiter).

A tiny cyclic memory (48 bytes) holds nothing of the plies played while the cable was
out: the gap search publishes the one line that fits, or the arbiter chooses among the
candidates; a wrong move is never published, and every other move keeps its ``[%clk]``.
"""

from __future__ import annotations

from pathlib import Path

import chess.pgn
import pytest

from broadcast.feed.alerts import AlertKind
from broadcast.feed.commands import ChooseLine
from drivers.emulator.player import HumanPlayer
from tests.virtual.games import Table, board_config, read_game
from tests.virtual.world import World

SPEED = 3.0


def _part(world: World, game: chess.pgn.Game, start: int, stop: int | None, seed: int) -> float:
    """Plies ``start`` … ``stop`` played from now (the clock started before ply 0 only);
    returns when the last action is done."""
    board = game.board()
    moves = list(game.mainline_moves())
    for move in moves[:start]:
        board.push(move)
    player = HumanPlayer(seed=seed, speed=SPEED)
    schedule = player.play(moves[start:stop], start=board, start_clock=start == 0)
    return world.play(schedule, origin=world.now + 0.5)


def _sans(game: chess.pgn.Game, start: int, plies: int) -> list[str]:
    board = game.board()
    moves = list(game.mainline_moves())
    for move in moves[:start]:
        board.push(move)
    sans = []
    for move in moves[start : start + plies]:
        sans.append(board.san(move))
        board.push(move)
    return sans


@pytest.mark.parametrize(("at", "out"), [(10, 1), (14, 3), (20, 5)])
def test_a_board_whose_memory_has_wrapped(folder: Path, games_dir: Path, at: int, out: int) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn")
    truth = [move.uci() for move in game.mainline_moves()]
    table = Table.of(game, seed=31, speed=SPEED, clock="3+2", memory_size=48, plies=0)
    world = World(board_config(folder), table.firmware)
    daemon = world.start_daemon()
    world.run_until(1.0)
    world.run_until(_part(world, game, 0, at, seed=1) + 1.0)
    assert len(daemon.moves()) == at
    world.unplug(keep_power=True)
    world.run_until(_part(world, game, at, at + out, seed=2) + 0.5)
    world.replug()
    world.run_until(world.now + 20.0)  # the memory read, the gap searched
    shown = [uci for uci, _ in daemon.moves()]
    assert shown == truth[: len(shown)], "a wrong move was published"
    ambiguous = [a for a in daemon.core.engine.alerts if a.kind is AlertKind.GAP_AMBIGUOUS]
    if ambiguous:
        candidates = ambiguous[-1].details["lines"]
        played = _sans(game, at, out)
        assert played in candidates
        daemon.execute(ChooseLine(board=1, line=candidates.index(played) + 1))
    assert [uci for uci, _ in daemon.moves()] == truth[: at + out]
    world.run_until(_part(world, game, at + out, None, seed=3) + 10.0)
    moves = daemon.moves()
    assert [uci for uci, _ in moves] == truth
    presses = [seconds for _, seconds in table.firmware.presses]
    for ply, (_, clock) in enumerate(moves, start=1):
        if at < ply < at + out:
            assert clock is None, f"ply {ply}: searched, only the gap's last move has a time"
        else:
            assert clock == presses[ply - 1], f"ply {ply}: [%clk] {clock}"
    assert "out_of_sync" not in daemon.open_alerts()
    # one ply ahead is live input's own business: the reading shows the press
    assert daemon.core.games[1].recovered_plies == (out if out > 1 else 0)
