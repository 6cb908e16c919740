"""A lever press whose clock reading is lost on the wire costs no move (issue 17.2).

The board reports the clock when its times change; the reading that shows a lever press
(the other side running, the presser's time with its increment) is lost once. The next
reading, at most a second later, shows the same press: the move is completed from it
and its ``[%clk]`` is still the presser's time at the press, which a halted clock keeps.
Through the real daemon, the board on a pty.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import chess

from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings, Side
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import Lift, Place
from tests.daemon.conftest import Serve
from tests.daemon.support import journal_moves, press_readings, wait_for

LINE = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"]
#: Plies (0-based) whose press reading is lost: one of each colour, and two in a row.
LOST = {1, 4, 5}


def _recorded(daemon: Daemon) -> list[str]:
    return [move.uci for move in daemon.core.games[1].record.moves]


def _has_plies(daemon: Daemon, count: int) -> Callable[[], bool]:
    return lambda: len(_recorded(daemon)) >= count


def _move(board: EmulatedBoard, position: chess.Board, uci: str) -> None:
    move = chess.Move.from_uci(uci)
    piece = position.piece_at(move.from_square)
    assert piece is not None
    board.act(Lift(square=move.from_square))
    board.act(Place(square=move.to_square, piece=piece))
    position.push(move)


async def test_a_lost_press_reading_costs_no_move_and_no_clock(
    tmp_path: Path, serve: Serve
) -> None:
    async with (
        EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=3) as board,
        serve(board) as daemon,
    ):
        board.start_clock()
        position = chess.Board()
        for ply, uci in enumerate(LINE):
            presser: Side = "left" if position.turn == chess.WHITE else "right"
            _move(board, position, uci)
            if ply in LOST:
                board.drop_clock_reports(1)  # the reading this press causes
            board.press_lever(presser)
            await wait_for(_has_plies(daemon, ply + 1), 15, f"ply {ply}")
        assert board.firmware.drop_clock_reports == 0, "every lost reading was a press"
        assert _recorded(daemon) == LINE
    journal = tmp_path / "journal.db"
    line = journal_moves(journal, 1)
    presses = press_readings(journal, 1, "left")
    assert [m["uci"] for m in line] == LINE
    assert [m["clock"] for m in line[0::2]] == presses["white"][:4]
    assert [m["clock"] for m in line[1::2]] == presses["black"][:4]
