"""Journal inputs of games played on boards, as the board sessions hand them to the round
service: for tests of the round core, its snapshots and the service's group commits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from base.fen import board_fen
from daemon.config.model import Config, load_config
from daemon.journal.inputs import CLOCK, LINK, PLACEMENT
from tests.daemon.config_file import BoardSpec, write_config
from tests.daemon.support import clock_input
from tests.shared_data import ROOT

__all__ = ["START", "board_inputs", "three_boards"]

START = 1_780_000_000.0
GAMES = sorted((ROOT / "config" / "games").glob("*.pgn"))


def _game(index: int) -> chess.pgn.Game:
    with GAMES[index % len(GAMES)].open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    return game


def _clock(left: int, right: int, running: str | None, lever: str) -> dict[str, Any]:
    return clock_input(left, right, running, lever)


def board_inputs(number: int, plies: int) -> Iterator[tuple[float, int, str, dict[str, Any]]]:
    """One board: online, start position, then each ply lifted, placed and pressed, with
    a clock reading every second; a cable pull in the middle."""
    board = chess.Board()
    at = START + number * 0.25
    yield at, number, LINK, {"state": "online", "reason": ""}
    yield at, number, PLACEMENT, {"fen": board.board_fen()}
    left = right = 600
    for ply, move in enumerate(list(_game(number).mainline_moves())[:plies]):
        white = board.turn == chess.WHITE
        for _ in range(3):  # thinking, the clock ticking
            at += 1.0
            left, right = (left - 1, right) if white else (left, right - 1)
            yield at, number, CLOCK, _clock(left, right, "left" if white else "right", "right")
        lifted = board.copy()
        lifted.remove_piece_at(move.from_square)
        at += 0.4
        yield at, number, PLACEMENT, {"fen": board_fen(lifted)}
        board.push(move)
        at += 0.4
        yield at, number, PLACEMENT, {"fen": board.board_fen()}
        at += 0.3
        yield at, number, CLOCK, _clock(left, right, "right" if white else "left", "left")
        if ply == plies // 2 and number == 2:
            yield at + 0.1, number, LINK, {"state": "offline", "reason": "cable"}
            yield at + 5.0, number, LINK, {"state": "online", "reason": ""}
            at += 5.0


def three_boards(folder: Path) -> Config:
    """A round of three boards (on ports nobody opens), its journal in ``folder``."""
    return load_config(write_config(folder, [BoardSpec(n, f"/dev/null{n}") for n in (1, 2, 3)]))
