"""The daemon with emulated e-boards over real ptys: whole games, clocks and results."""

from __future__ import annotations

import asyncio
from pathlib import Path

import chess
import chess.pgn

from broadcast.feed.commands import ConfirmResult
from daemon.journal.store import Journal
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.conftest import Serve
from tests.daemon.support import BoardSpec, journal_moves, press_readings, read_game, wait_for

SPEED = 50.0


def _mainline_uci(game: chess.pgn.Game) -> list[str]:
    return [move.uci() for move in game.mainline_moves()]


async def test_two_boards_play_real_games_to_the_end(
    tmp_path: Path, games_dir: Path, serve: Serve
) -> None:
    mate = read_game(games_dir / "molinari-bordais-1979.pgn")  # 10 plies, ends in mate
    long = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)  # 37 plies, 1-0 by the kings
    clock = ClockSettings.from_text("3+2")
    async with (
        EmulatedBoard(clock=clock, seed=1) as one,
        EmulatedBoard(clock=clock, seed=2, rotate=True, white_side="right") as two,
        serve(one, two, BoardSpec(3, None)) as daemon,
    ):
        await asyncio.gather(
            one.play(mate, speed=SPEED, noise=0.2),
            two.play(long, speed=SPEED, noise=0.2, signal_result=True),
        )
        engine = daemon.core.engine
        await wait_for(lambda: engine.result_of(2) is not None, 10, "result of board 2")
        reply = await daemon.service.execute(ConfirmResult(board=2))
        assert reply.ok, reply.reason
        state_one = daemon.hub.state(1)
        state_two = daemon.hub.state(2)
        assert state_one is not None
        assert state_two is not None
        assert state_one.result == "0-1"
        assert state_two.result == "1-0"
        assert state_two.result_final
        assert (state_one.serial, state_two.serial) == ("01025", "01025")  # from the handshake
        assert state_one.port is not None
    journal_path = tmp_path / "journal.db"
    for board, game, white_side in ((1, mate, "left"), (2, long, "right")):
        line = journal_moves(journal_path, board)
        assert [m["uci"] for m in line] == _mainline_uci(game)
        presses = press_readings(journal_path, board, white_side)
        clocks = {color: [m["clock"] for m in line[i::2]] for i, color in enumerate(presses)}
        assert len(presses["black"]) >= 4, "the clock inputs show the presses"
        for color, readings in presses.items():
            assert clocks[color] == readings[: len(clocks[color])], f"board {board} {color}"
    with Journal(journal_path, read_only=True) as journal:
        kinds = [r.kind for r in journal.records(board=1)]
        assert "game.GameEnded" in kinds
        results = [r.payload for r in journal.records(board=2, kinds={"result"})]
        assert results[-1]["result"] == "1-0"
        assert results[-1]["confirmed"] is True
