"""Helpers for the recovery scenarios: games played in parts, truth from the emulated clock."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from drivers.emulator.device import EmulatedBoard
from tests.daemon.support import journal_moves

__all__ = ["check_record", "play_part", "rest_of"]


def rest_of(game: chess.pgn.Game, plies: int) -> chess.pgn.Game:
    """The moves of ``game`` after ``plies``, as a game starting from that position."""
    moves = list(game.mainline_moves())
    board = game.board()
    for move in moves[:plies]:
        board.push(move)
    rest = chess.pgn.Game()
    rest.setup(board)
    node: chess.pgn.GameNode = rest
    for move in moves[plies:]:
        node = node.add_variation(move)
    rest.headers["Result"] = game.headers.get("Result", "*")
    return rest


async def play_part(
    board: EmulatedBoard,
    game: chess.pgn.Game,
    start: int,
    stop: int | None,
    *,
    speed: float,
    noise: float = 0.0,
) -> None:
    """Plies ``start`` … ``stop`` of ``game`` (the clock is started before ply 0 only)."""
    part = rest_of(game, start)
    plies = None if stop is None else stop - start
    await board.play(part, speed=speed, noise=noise, plies=plies, start_clock=start == 0)


def check_record(
    journal_path: Path, number: int, game: chess.pgn.Game, board: EmulatedBoard, plies: int
) -> list[dict[str, Any]]:
    """Assert the journal's line is the game's first ``plies`` plies, each ``[%clk]`` the
    clock's own reading at its lever press; returns the line."""
    line = journal_moves(journal_path, number)
    expected = [move.uci() for move in game.mainline_moves()][:plies]
    assert [m["uci"] for m in line] == expected
    truth: Sequence[tuple[str, int]] = board.firmware.presses[:plies]
    assert [m["clock"] for m in line] == [seconds for _, seconds in truth]
    return line
