"""A flag fall the arbiter confirms is a time forfeit in the PGN.

docs/daemon.md, "Game records".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from broadcast.feed.commands import ConfirmResult
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.conftest import Serve
from tests.daemon.support import read_game, wait_for

pytestmark = pytest.mark.slow  # a clock runs out in real time (docs/development.md)


async def test_a_confirmed_flag_fall_says_time_forfeit(serve: Serve, games_dir: Path) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")
    async with (
        EmulatedBoard(clock=ClockSettings.from_text("0.1"), seed=1) as board,
        serve(board, time_control="6+0") as daemon,
    ):
        await board.play(game, speed=25.0, plies=3)  # then Black's 6 s run out
        engine = daemon.core.engine
        await wait_for(lambda: engine.result_of(1) is not None, 30, "the flag's result")
        state = daemon.hub.state(1)
        assert state is not None
        assert "Termination" not in state.pgn  # provisional until the arbiter confirms
        reply = await daemon.service.execute(ConfirmResult(board=1))
        assert reply.ok, reply.reason
        state = daemon.hub.state(1)
        assert state is not None
        assert (state.result, state.result_final) == ("1-0", True)
        assert '[Termination "time forfeit"]' in state.pgn
        assert '[Result "1-0"]' in state.pgn
