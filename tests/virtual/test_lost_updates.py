"""A lost or torn field update costs no move, in virtual time (issue 17.2).

The board loses one FIELD_UPDATE on the wire, or tears it (the driver then sees a
protocol violation), in the middle of a game. The sensed board is then wrong on one
square; the daemon reads the whole board again when a placement has matched nothing for
a moment, after a violation, and every few seconds, and the game is recorded move for
move. tests/daemon/session/test_lost_updates.py keeps one torn update through the real
shell on a pty.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from drivers.dgt.commands import RequestBoard
from tests.virtual.games import Table, board_config, read_game
from tests.virtual.world import World

SPEED = 4.0
ORIGIN = 3.0
#: Plies played after the fault.
AFTER = 10


@pytest.mark.parametrize(
    ("at_ply", "torn", "seed"),
    [(2, False, 1), (5, False, 2), (3, True, 4), (6, True, 5), (12, False, 7), (15, True, 8)],
    ids=["lost-at-2", "lost-at-5", "torn-at-3", "torn-at-6", "lost-at-12", "torn-at-15"],
)
def test_one_lost_field_update_costs_no_move(
    folder: Path, games_dir: Path, at_ply: int, torn: bool, seed: int
) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)
    plies = at_ply + AFTER
    table = Table.of(game, seed=seed, speed=SPEED, plies=plies)
    world = World(board_config(folder), table.firmware)
    daemon = world.start_daemon()
    end = world.play(table.schedule, origin=ORIGIN)
    presses = table.press_times(ORIGIN)
    world.run_until(presses[at_ply - 1] + 0.05)
    assert len(daemon.moves()) == at_ply, world.logs[-10:]
    if torn:
        world.firmware.tear_field_updates = 1
    else:
        world.firmware.drop_field_updates = 1
    world.run_until(end + 30.0)
    firmware = world.firmware
    assert firmware.drop_field_updates + firmware.tear_field_updates == 0, "the fault happened"
    expected = [move.uci() for move in game.mainline_moves()][:plies]
    assert [uci for uci, _ in daemon.moves()] == expected, world.logs[-20:]
    assert firmware.commands.count(RequestBoard()) >= 2, "the handshake's dump and a refresh"
