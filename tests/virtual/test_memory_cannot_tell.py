"""A board out of sync whose memory does not hold the game: the alert says so."""

from __future__ import annotations

from pathlib import Path

import chess
import chess.pgn

from tests.virtual.games import Table, board_config, read_game
from tests.virtual.world import World


def test_an_out_of_sync_board_whose_memory_holds_nothing_of_the_game(
    folder: Path, games_dir: Path
) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn")
    table = Table.of(game, seed=5, speed=3.0, clock="15+10", plies=12, memory_size=48)
    world = World(board_config(folder, time_control="900+10"), table.firmware)
    daemon = world.start_daemon()
    end = world.play(table.schedule, origin=3.0)
    world.run_until(end + 2.0)
    assert len(daemon.moves()) == 12
    # Someone sweeps two pieces off and puts a knight where none can go: no position of
    # the game, and the tiny memory holds only the last few changes.
    firmware = table.firmware
    placement = firmware.physical.placement
    for square in (chess.A1, chess.H8):
        placement.remove_piece_at(square)
    placement.set_piece_at(chess.E5, chess.Piece(chess.KNIGHT, chess.WHITE))
    firmware.receive_set_up(placement, world.now)
    world._board_sent()
    world.run_until(world.now + 40.0)  # out of sync, the board read, the memory read again
    alerts = [a for a in daemon.core.engine.open_alerts if a.kind.value == "out_of_sync"]
    assert len(alerts) == 1
    assert alerts[0].details["memory"] == "holds nothing of the game as recorded"
    assert "cannot recover the moves" in alerts[0].action
    assert any("reading its memory again" in line for line in world.logs)
    assert len(daemon.moves()) == 12  # nothing thrown away, nothing made up
