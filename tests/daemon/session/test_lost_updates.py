"""A lost or torn board message costs no move (issue 17.2): through the real daemon.

The emulator loses one FIELD_UPDATE on the wire (or tears it, so the driver sees a
protocol violation) in the middle of a game played on a pty. The sensed board is then
wrong on one square, and before the driver read the board again it stayed wrong for the
rest of the game: every later placement matched nothing. Now the daemon reads the board
again when the placement has matched nothing for a moment, after a violation, and every
few seconds, and the game is recorded move for move. The logic runs in virtual time
with more faults (tests/virtual/test_lost_updates.py); this file keeps the shell's part.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import chess.pgn

from daemon.shell.app import Daemon
from drivers.dgt.commands import RequestBoard
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.support import BoardSpec, read_game, running_daemon, wait_for, write_config

SPEED = 10.0
#: Plies played after the fault.
AFTER = 4


def _recorded(daemon: Daemon, board: int) -> list[str]:
    return [move.uci for move in daemon.core.games[board].record.moves]


async def _play_with_a_fault(
    tmp_path: Path, game: chess.pgn.Game, at_ply: int, *, torn: bool, seed: int
) -> tuple[list[str], int]:
    """Play ``game``; lose one field update once the daemon has ``at_ply`` plies."""
    expected = [move.uci() for move in game.mainline_moves()][: at_ply + AFTER]
    clock = ClockSettings.from_text("3+2")
    async with EmulatedBoard(clock=clock, seed=seed) as board:
        config = write_config(tmp_path, [BoardSpec(1, str(board.path))])
        async with running_daemon(config) as daemon:
            await wait_for(daemon.sessions[1].online.is_set, 10, "board 1 online")
            playing = asyncio.create_task(board.play(game, speed=SPEED, plies=at_ply + AFTER))
            try:
                await wait_for(lambda: len(_recorded(daemon, 1)) >= at_ply, 60, "plies before")
                board.drop_field_updates(1, torn=torn)
                await playing
            finally:
                playing.cancel()
            lost = board.firmware.drop_field_updates + board.firmware.tear_field_updates
            assert lost == 0, "the fault happened during the game"
            with contextlib.suppress(TimeoutError):  # the assertion below shows the moves
                await wait_for(lambda: _recorded(daemon, 1) == expected, 30, "the whole game")
            return _recorded(daemon, 1), board.firmware.commands.count(RequestBoard())


async def test_one_torn_field_update_costs_no_move(tmp_path: Path, games_dir: Path) -> None:
    """The shell's part: the real driver's violation and refresh on a pty (lost and torn
    updates at other plies run in virtual time: tests/virtual/test_lost_updates.py)."""
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)
    at_ply = 3
    recorded, dumps = await _play_with_a_fault(tmp_path, game, at_ply, torn=True, seed=4)
    assert recorded == [move.uci() for move in game.mainline_moves()][: at_ply + AFTER]
    assert dumps >= 2, "the handshake's dump and at least one refresh"
