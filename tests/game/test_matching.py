"""Whole-placement matching against the positions reachable from the game (§12.2)."""

from __future__ import annotations

import chess
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.game.matching import (
    ROTATED_START,
    START,
    Match,
    MatchKind,
    PlacementKey,
    changed_squares,
    find_match,
    placement_key,
    rotated,
)
from daemon.game.rules import result_of_kings


def game(*ucis: str) -> tuple[chess.Board, list[PlacementKey]]:
    board = chess.Board()
    history = [placement_key(board)]
    for uci in ucis:
        board.push_uci(uci)
        history.append(placement_key(board))
    return board, history


def after(*ucis: str) -> PlacementKey:
    board = chess.Board()
    for uci in ucis:
        board.push_uci(uci)
    return placement_key(board)


def test_current_one_ply_two_plies_sibling_and_takeback() -> None:
    board, history = game("e2e4", "e7e5", "g1f3")
    stack = list(board.move_stack)
    assert find_match(board, history[-1], history) == Match(kind=MatchKind.CURRENT)
    one = find_match(board, after("e2e4", "e7e5", "g1f3", "b8c6"), history)
    assert one == Match(kind=MatchKind.FORWARD, moves=(chess.Move.from_uci("b8c6"),))
    two = find_match(board, after("e2e4", "e7e5", "g1f3", "b8c6", "f1b5"), history)
    assert two is not None
    assert [m.uci() for m in two.moves] == ["b8c6", "f1b5"]
    sibling = find_match(board, after("e2e4", "e7e5", "g1h3"), history)
    assert sibling == Match(kind=MatchKind.CORRECTION, back=1, moves=(chess.Move.from_uci("g1h3"),))
    back = find_match(board, after("e2e4"), history)
    assert back == Match(kind=MatchKind.TAKEBACK, back=2)
    assert find_match(board, after("d2d4"), history) is None
    assert board.move_stack == stack


def test_two_plies_whose_capture_square_looks_unchanged() -> None:
    # 3. dxe5 dxe5: e5 held a black pawn before and holds one after; the first move is
    # still found, through the square it left.
    board, history = game("e2e4", "e7e5", "d2d4", "d7d6")
    target = after("e2e4", "e7e5", "d2d4", "d7d6", "d4e5", "d6e5")
    assert changed_squares(history[-1], target) & chess.BB_E5 == 0
    match = find_match(board, target, history)
    assert match is not None
    assert [m.uci() for m in match.moves] == ["d4e5", "d6e5"]


def test_repetition_prefers_forward_unless_going_back() -> None:
    board, history = game("g1f3", "g8f6", "f3g1")
    start_again = after()
    forward = find_match(board, start_again, history)
    assert forward == Match(kind=MatchKind.FORWARD, moves=(chess.Move.from_uci("f6g8"),))
    board, history = game("g1f3", "g8f6")
    assert find_match(board, start_again, history) == Match(
        kind=MatchKind.FORWARD,
        moves=(chess.Move.from_uci("f3g1"), chess.Move.from_uci("f6g8")),
    )
    assert find_match(board, start_again, history, backwards=True) == Match(
        kind=MatchKind.TAKEBACK, back=2
    )


def test_rotation_and_start_positions() -> None:
    assert placement_key(rotated(chess.BaseBoard())) == ROTATED_START
    assert placement_key(rotated(rotated(chess.BaseBoard()))) == START
    board = chess.BaseBoard()
    assert rotated(board).piece_at(chess.E1 ^ 63) == chess.Piece(chess.KING, chess.WHITE)


@settings(max_examples=60)
@given(st.data())
def test_key_equality_is_placement_equality(data: st.DataObject) -> None:
    board = chess.Board()
    for _ in range(data.draw(st.integers(0, 30))):
        moves = sorted(board.legal_moves, key=lambda move: move.uci())
        if not moves:
            break
        board.push(data.draw(st.sampled_from(moves)))
    other = chess.BaseBoard(board.board_fen())
    square = data.draw(st.sampled_from(chess.SQUARES))
    other.remove_piece_at(square)
    same = chess.BaseBoard(board.board_fen()) == other
    assert (placement_key(board) == placement_key(other)) == same
    assert (changed_squares(placement_key(board), placement_key(other)) == 0) == same


def test_kings_on_the_centre_squares() -> None:
    def kings(white: int, black: int) -> chess.BaseBoard:
        board = chess.BaseBoard.empty()
        board.set_piece_at(white, chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(black, chess.Piece(chess.KING, chess.BLACK))
        board.set_piece_at(chess.A2, chess.Piece(chess.PAWN, chess.WHITE))
        return board

    assert result_of_kings(kings(chess.E4, chess.D5)) == "1-0"
    assert result_of_kings(kings(chess.D5, chess.E4)) == "1-0"
    assert result_of_kings(kings(chess.D4, chess.E5)) == "0-1"
    assert result_of_kings(kings(chess.D4, chess.E4)) == "1/2-1/2"
    assert result_of_kings(kings(chess.E4, chess.F5)) is None
    assert result_of_kings(chess.BaseBoard()) is None
