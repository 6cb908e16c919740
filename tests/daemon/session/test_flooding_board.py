"""A board that floods the line costs little and alerts the arbiter (issue 17.10).

Through the real daemon and driver on a pty: the emulated board sends thousands of
FIELD_UPDATE messages of a piece flickering on and off a square, in bursts, then the
game goes on. Before, every flicker was a journalled placement (1.7 MB/s at 15,000
updates a second); now at most one placement in 0.1 s goes on while the board floods,
the arbiter gets ``board_flooding`` once, and the game is still recorded.

The guard's calm time is shortened to :data:`CALM` (the five seconds a daemon waits, and
what calms a flood, are tests/daemon/session/test_flood_guard.py's): still longer than any
pause between two bursts, so the flood is one, however busy the machine.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from daemon.journal.store import Journal
from drivers.dgt.boardside import encode_event
from drivers.dgt.events import FieldUpdated
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.conftest import Serve
from tests.daemon.support import read_game, wait_for

E4 = 36  # DGT field of e4 (0 = a8, docs/protocol.md §5.2)
WHITE_PAWN = 0x01
BURSTS = 20
FLICKERS = 250  # per burst: 2 updates each
CALM = 2.0  # seconds the board stays under half the limits before it is calm again


def _flicker() -> bytes:
    on = encode_event(FieldUpdated(field=E4, piece=WHITE_PAWN))
    off = encode_event(FieldUpdated(field=E4, piece=0))
    return (on + off) * FLICKERS


def _placements(path: Path, board: int) -> int:
    with Journal(path, read_only=True) as journal:
        return sum(1 for _ in journal.records(board=board, kinds={"placement"}))


async def test_a_flickering_board_is_bounded_and_alerts(
    tmp_path: Path, games_dir: Path, serve: Serve
) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")
    async with (
        EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=7) as board,
        serve(board) as daemon,
    ):
        session = daemon.sessions[1]
        session.flood.calm = CALM
        before = _placements(tmp_path / "journal.db", 1)
        for _ in range(BURSTS):
            board.inject_garbage(_flicker())  # valid messages, sent raw
            await asyncio.sleep(0.05)
        kinds = [alert.kind for alert in daemon.core.engine.open_alerts]
        assert "board_flooding" in kinds
        await wait_for(lambda: not session.flood.flooding, 60, "the board calms down")
        flooding = [a for a in daemon.core.engine.alerts if a.kind == "board_flooding"]
        assert [a.state for a in flooding] == ["resolved"]  # calm again: resolved
        during = _placements(tmp_path / "journal.db", 1) - before
        sent = BURSTS * FLICKERS * 2
        assert during < sent // 20, f"{during} placements journalled for {sent} updates"
        await board.play(game, speed=60)
        expected = [move.uci() for move in game.mainline_moves()]
        await wait_for(
            lambda: [m.uci for m in daemon.core.games[1].record.moves] == expected,
            30,
            "the game after the flood",
        )
