"""base/fen.py writes what python-chess writes, in every position of real games."""

from __future__ import annotations

import chess
import chess.pgn
from hypothesis import given, settings
from hypothesis import strategies as st

from base.fen import board_fen, board_from_fen, position_fen
from tests.shared_data import shared_path

GAMES = shared_path() / "data" / "games"


def _positions() -> list[chess.Board]:
    boards: list[chess.Board] = []
    for path in sorted(GAMES.glob("*.pgn")):
        with path.open(encoding="utf-8", errors="replace") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                board = game.board()
                for move in game.mainline_moves():
                    board.push(move)
                    boards.append(board.copy(stack=False))
    return boards


POSITIONS = _positions()


def test_real_games_give_positions() -> None:
    assert len(POSITIONS) > 500


def test_every_position_of_real_games() -> None:
    for board in POSITIONS:
        assert position_fen(board) == board.fen()
        assert board_fen(board) == board.board_fen()
        assert board_from_fen(board_fen(board)) == chess.BaseBoard(board.board_fen())


def test_en_passant_written_only_when_a_capture_there_is_legal() -> None:
    board = chess.Board()
    for san in ("e4", "a6", "e5", "d5"):
        board.push_san(san)
    assert position_fen(board).split()[3] == "d6" == board.fen().split()[3]
    board = chess.Board()
    board.push_san("e4")  # nothing can take on e3
    assert position_fen(board) == board.fen()
    assert position_fen(board).split()[3] == "-"


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=959), st.lists(st.integers(0, 400), max_size=60))
def test_chess960_and_random_play(scharnagl: int, choices: list[int]) -> None:
    board = chess.Board.from_chess960_pos(scharnagl)
    for choice in choices:
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(moves[choice % len(moves)])
        assert position_fen(board) == board.fen()
