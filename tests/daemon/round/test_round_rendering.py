"""The daemon's fast paths give exactly what the slow, obvious code gives.

* The PGN of a board, extended move by move (``RenderedGame``), is the text of a full
  python-chess export of the record after every move.
* ``board_fen`` / ``board_from_fen`` agree with python-chess on any placement.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from base.fen import board_fen, board_from_fen
from daemon.config.model import parse_config
from daemon.game.events import GameStarted, MoveMade, MovesWithdrawn
from daemon.game.record import GameRecord, pgn_text
from daemon.round.board_game import BoardGame, game_headers, render_pgn

CONFIG = """
[event]
name = "Render Open"
round = 1
time_control = "180+2"
[[boards]]
number = 1
white = "Smith, John"
black = "Doe, Jane"
"""


def _board_game() -> BoardGame:
    config = parse_config(
        CONFIG,
        source="render.toml",
        base_dir=Path("."),
        env={},
        now=dt.datetime(2026, 6, 1, 10, tzinfo=dt.UTC),
    )
    section = config.sections[0]
    board = section.boards[0]
    return BoardGame(
        config=board,
        section=section,
        tracker=None,
        record=GameRecord(game_headers(board, section)),
    )


@st.composite
def games(draw: st.DrawFn) -> list[tuple[chess.Move, int | None]]:
    board = chess.Board()
    moves = []
    for _ in range(draw(st.integers(0, 60))):
        legal = list(board.legal_moves)
        if not legal:
            break
        move = draw(st.sampled_from(legal))
        clock = draw(st.one_of(st.none(), st.integers(0, 3 * 3600)))
        moves.append((move, clock))
        board.push(move)
    return moves


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(games(), st.sampled_from(["*", "1-0", "1/2-1/2"]))
def test_extended_pgn_equals_a_full_export(
    moves: list[tuple[chess.Move, int | None]], result: str
) -> None:
    game = _board_game()
    game.record.receive_event(GameStarted(rotated=False, at=0.0))
    board = chess.Board()
    for ply, (move, clock) in enumerate(moves, start=1):
        san = board.san(move)
        board.push(move)
        event = MoveMade(
            ply=ply,
            uci=move.uci(),
            san=san,
            clock=clock,
            clock_before=clock,
            emt=None,
            fen=board.fen(),
            at=float(ply),
        )
        game.record.receive_event(event)
        text, fen = render_pgn(game, result)
        full = game.record.game()
        full.headers["Result"] = result
        assert text == pgn_text(full)
        assert fen == board.fen()
    if len(moves) >= 2:  # a takeback: the rendering must start again, not extend
        game.record.receive_event(
            MovesWithdrawn(from_ply=len(moves) - 1, reason="takeback", at=99.0)
        )
        text, _ = render_pgn(game, result)
        full = game.record.game()
        full.headers["Result"] = result
        assert text == pgn_text(full)


@st.composite
def placements(draw: st.DrawFn) -> chess.BaseBoard:
    pieces = st.sampled_from([chess.Piece(t, c) for t in chess.PIECE_TYPES for c in chess.COLORS])
    squares = draw(st.dictionaries(st.integers(0, 63), pieces, max_size=64))
    board = chess.BaseBoard.empty()
    for square, piece in squares.items():
        board.set_piece_at(square, piece)
    return board


@settings(max_examples=200, deadline=None)
@given(placements())
def test_board_fen_agrees_with_python_chess(board: chess.BaseBoard) -> None:
    assert board_fen(board) == board.board_fen()
    assert board_from_fen(board.board_fen()) == board
