"""Helpers for the recovery scenarios: games played in parts, truth from the emulated clock."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import HumanPlayer
from tests.daemon.support import journal_moves, second_half

__all__ = ["check_record", "play_part", "play_unwatched"]


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
    part = second_half(game, start)
    plies = None if stop is None else stop - start
    await board.play(part, speed=speed, noise=noise, plies=plies, start_clock=start == 0)


async def play_unwatched(
    board: EmulatedBoard,
    game: chess.pgn.Game,
    stop: int,
    *,
    speed: float,
    noise: float = 0.0,
    seed: int = 0,
) -> None:
    """Plies 0 … ``stop`` of ``game`` (the clock started first) while no host listens: the
    board's time passes at once (:meth:`EmulatedBoard.pass_time`), each action at its own
    time for the clock and the memory, as in the seconds of play they take."""
    player = HumanPlayer(seed=seed, speed=speed, noise=noise, white_side=board.white_side)
    schedule = player.play(game, plies=stop)
    await asyncio.gather(board.perform(schedule), board.pass_time(schedule[-1].at))


def check_record(
    journal_path: Path, number: int, game: chess.pgn.Game, board: EmulatedBoard, plies: int
) -> list[dict[str, Any]]:
    """Assert the journal's line is the game's first ``plies`` plies, each ``[%clk]`` the
    clock's own reading at its lever press; returns the line."""
    line = journal_moves(journal_path, number)
    expected = [move.uci() for move in game.mainline_moves()][:plies]
    got = [m["uci"] for m in line]
    assert got == expected, f"board {number}: {_first_difference(got, expected)}"
    truth: Sequence[tuple[str, int]] = board.firmware.presses[:plies]
    clocks = [m["clock"] for m in line]
    wanted = [seconds for _, seconds in truth]
    assert clocks == wanted, f"board {number} [%clk]: {_first_difference(clocks, wanted)}"
    return line


def _first_difference(got: Sequence[object], wanted: Sequence[object]) -> str:
    for ply, (mine, theirs) in enumerate(zip(got, wanted, strict=False), start=1):
        if mine != theirs:
            return f"ply {ply}: {mine!r} instead of {theirs!r}"
    return f"{len(got)} plies instead of {len(wanted)}"
