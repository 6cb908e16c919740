"""The LiveChess resources of a Chess960 board: its start number, its castling moves."""

from __future__ import annotations

import chess

from broadcast.feed.messages import BoardState, MoveInfo
from broadcast.livechess.eboards import BoardView, FeedGroup


def _state() -> BoardState:
    start = chess.Board.from_chess960_pos(3)  # BQNNRKRB: O-O swaps king and rook
    board = start.copy()
    moves = []
    for san in ("O-O", "O-O", "Nd3"):
        move = board.parse_san(san)
        moves.append(MoveInfo(san=san, uci=move.uci(), clock=170.0))
        board.push(move)
    pgn = f'[Variant "Chess960"]\n[SetUp "1"]\n[FEN "{start.fen()}"]\n\n1. O-O O-O 2. Nd3 *\n'
    return BoardState(board=1, pgn=pgn, fen=board.fen(), moves=tuple(moves), variant="chess960")


def test_a_setup_feed_finds_its_position_after_chess960_castling() -> None:
    state = _state()
    after_castling = chess.Board.from_chess960_pos(3)
    for uci in ("f1g1", "f8g8"):
        after_castling.push_uci(uci)
    group = FeedGroup(serial="01025", setup=after_castling.fen())
    assert group.refresh(BoardView(state))
    assert group.payload is not None
    assert group.payload["match"] is True
    assert group.payload["san"] == ["Nd3"]
    assert group.payload["start"] == after_castling.fen()
