"""The human player: schedules that end in the game's position, with human variety."""

from __future__ import annotations

import io
import math

import chess
import chess.pgn
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.emulator.physical import PhysicalBoard
from drivers.emulator.player import (
    HumanPlayer,
    Lift,
    Place,
    PressLever,
    StartClock,
    TimedAction,
)
from tests.emulator.support import random_games


def perform(board: PhysicalBoard, schedule: list[TimedAction]) -> list[chess.BaseBoard]:
    """Apply a schedule; return the placement after every hand action."""
    seen = []
    for timed in schedule:
        action = timed.action
        if isinstance(action, Lift):
            board.lift(action.square)
        elif isinstance(action, Place):
            board.place(action.square, action.piece)
        else:
            continue
        seen.append(board.placement)
    return seen


def game_of(pgn: str) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    return game


def hands(schedule: list[TimedAction]) -> list[Lift | Place]:
    return [t.action for t in schedule if isinstance(t.action, Lift | Place)]


def board_after(fen: str, uci: str) -> chess.Board:
    board = chess.Board(fen)
    board.push_uci(uci)
    return board


def test_a_clean_game_ends_in_its_final_position_with_a_lever_press_per_ply() -> None:
    game = game_of("1. e4 c5 2. c4 Nc6 3. Ne2 Nf6 4. Nbc3 Nb4 5. g3 Nd3# 0-1")
    schedule = HumanPlayer(seed=1).play(game)
    board = PhysicalBoard()
    perform(board, schedule)
    assert board.placement == game.end().board()
    presses = [t.action for t in schedule if isinstance(t.action, PressLever)]
    assert [p.side for p in presses] == ["left", "right"] * 5
    assert isinstance(schedule[0].action, StartClock)


def test_timings_are_seeded_increasing_and_scaled_by_speed() -> None:
    game = game_of("1. e4 e5 2. Nf3 Nc6 *")
    slow = HumanPlayer(seed=7, speed=1.0).play(game)
    fast = HumanPlayer(seed=7, speed=4.0).play(game)
    again = HumanPlayer(seed=7, speed=1.0).play(game)
    assert slow == again
    assert [t.at for t in slow] == sorted(t.at for t in slow)
    assert [t.action for t in slow] == [t.action for t in fast]
    assert [t.at / 4 for t in slow] == pytest.approx([t.at for t in fast])
    assert slow != HumanPlayer(seed=8).play(game)


def test_white_on_the_right_presses_the_right_lever() -> None:
    schedule = HumanPlayer(white_side="right").move(chess.Board(), chess.Move.from_uci("e2e4"))
    assert schedule[-1].action == PressLever(side="right")


def test_captures_come_in_all_three_orders() -> None:
    board = chess.Board("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1")
    move = chess.Move.from_uci("e4d5")
    orders = set()
    for seed in range(30):
        actions = hands(HumanPlayer(seed=seed).move(board, move))
        orders.add(tuple(type(a).__name__ + chess.square_name(a.square) for a in actions))
    assert orders == {
        ("Lifte4", "Liftd5", "Placed5"),  # mover first, then the captured piece
        ("Liftd5", "Lifte4", "Placed5"),  # captured piece first
        ("Lifte4", "Placed5"),  # mover pushes the captured piece away
    }


def test_castling_king_first_and_rook_first() -> None:
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    firsts = set()
    for seed in range(20):
        for uci in ("e1g1", "e1c1"):
            move = chess.Move.from_uci(uci)
            actions = hands(HumanPlayer(seed=seed).move(board, move))
            physical = PhysicalBoard(board)
            perform(physical, HumanPlayer(seed=seed).move(board, move))
            assert physical.placement == board_after(board.fen(), uci)
            firsts.add(chess.square_name(actions[0].square))
    assert firsts == {"e1", "h1", "a1"}


def test_en_passant_removes_the_captured_pawn_before_or_after() -> None:
    fen = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1"
    board = chess.Board(fen)
    move = chess.Move.from_uci("e5d6")
    assert board.is_en_passant(move)
    firsts = set()
    for seed in range(20):
        schedule = HumanPlayer(seed=seed).move(board, move)
        physical = PhysicalBoard(board)
        perform(physical, schedule)
        assert physical.placement == board_after(fen, "e5d6")
        firsts.add(chess.square_name(hands(schedule)[0].square))
    assert firsts == {"d5", "e5"}


@pytest.mark.parametrize("uci", ["b7b8q", "b7b8n", "b7a8q", "b7a8r"])
def test_promotion_directly_or_pawn_first(uci: str) -> None:
    fen = "r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    pawn_first = set()
    for seed in range(20):
        schedule = HumanPlayer(seed=seed).move(board, move)
        physical = PhysicalBoard(board)
        seen = perform(physical, schedule)
        assert physical.placement == board_after(fen, uci)
        pawn = chess.Piece(chess.PAWN, chess.WHITE)
        pawn_first.add(any(p.piece_at(move.to_square) == pawn for p in seen))
    assert pawn_first == {True, False}


def test_slid_pieces_show_up_on_the_squares_between() -> None:
    board = chess.Board("4k3/8/8/8/8/8/8/2Q1K3 w - - 0 1")
    move = chess.Move.from_uci("c1c4")
    schedule = HumanPlayer(seed=3, noise=1.0).move(board, move)
    placed = [a.square for a in hands(schedule) if isinstance(a, Place)]
    on_file = [s for s in placed if s in (chess.C2, chess.C3, chess.C4)]
    assert on_file[:3] == [chess.C2, chess.C3, chess.C4]
    physical = PhysicalBoard(board)
    perform(physical, schedule)
    assert physical.placement == board_after(board.fen(), "c1c4")


def test_noise_adjusts_and_knocks_pieces_over_but_the_position_survives() -> None:
    game = game_of("1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 *")
    clean = HumanPlayer(seed=5, noise=0.0).play(game)
    noisy = HumanPlayer(seed=5, noise=1.0).play(game)
    assert len(hands(noisy)) > len(hands(clean)) + 16
    for schedule in (clean, noisy):
        board = PhysicalBoard()
        perform(board, schedule)
        assert board.placement == game.end().board()


@pytest.mark.parametrize(
    ("result", "pairs"),
    [
        ("1-0", [{chess.D5, chess.E4}]),
        ("0-1", [{chess.D4, chess.E5}]),
        ("1/2-1/2", [{chess.D5, chess.E5}, {chess.D4, chess.E4}]),
    ],
)
def test_result_is_signalled_with_the_kings(
    result: str, pairs: list[set[chess.Square | None]]
) -> None:
    # A centre pawn stands in the way and is taken off first.
    placement = chess.BaseBoard("4k3/8/8/3P4/4p3/8/8/4K3")
    for seed in range(6):
        board = PhysicalBoard(placement)
        perform(board, HumanPlayer(seed=seed).signal_result(placement, result))
        after = board.placement
        kings = set(after.pieces(chess.KING, chess.WHITE)) | set(
            after.pieces(chess.KING, chess.BLACK)
        )
        assert kings in pairs
        others = {s: p for s, p in after.piece_map().items() if p.piece_type != chess.KING}
        pawns = {s: p for s, p in placement.piece_map().items() if p.piece_type == chess.PAWN}
        assert others == {s: p for s, p in pawns.items() if s not in kings}


def test_kings_are_lifted_before_either_is_put_down() -> None:
    schedule = HumanPlayer(seed=2).signal_result(chess.BaseBoard(), "1-0")
    kinds = [type(a) for a in hands(schedule)]
    assert kinds[:2] == [Lift, Lift]


def test_unknown_result_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\*"):
        HumanPlayer().signal_result(chess.BaseBoard(), "*")


def test_stopping_after_some_plies_and_arriving_late() -> None:
    game = game_of("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *")
    schedule = HumanPlayer(seed=1, speed=100).play(game, plies=3, late_by=30.0)
    assert sum(isinstance(t.action, PressLever) for t in schedule) == 3
    first_hand = next(t for t in schedule if isinstance(t.action, Lift))
    assert first_hand.at >= 30.0
    board = PhysicalBoard()
    perform(board, schedule)
    assert board.placement.board_fen() == "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R"


@pytest.mark.parametrize(("plies", "late_by"), [(0, 0.0), (None, math.inf)])
def test_nobody_turning_up_means_only_the_clock_starts(plies: int | None, late_by: float) -> None:
    schedule = HumanPlayer().play(game_of("1. e4 *"), plies=plies, late_by=late_by)
    assert schedule == [TimedAction(at=0.0, action=StartClock())]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(moves=random_games(), seed=st.integers(0, 2**16), noise=st.floats(0.0, 1.0))
def test_noisy_random_games_end_in_the_games_position(
    moves: list[chess.Move], seed: int, noise: float
) -> None:
    board = chess.Board()
    for move in moves:
        board.push(move)
    physical = PhysicalBoard()
    perform(physical, HumanPlayer(seed=seed, noise=noise).play(moves))
    assert physical.placement == board


def test_a_null_move_is_only_a_lever_press() -> None:
    # PGN "Z0": the player passes; the clock still changes sides.
    board = chess.Board()
    schedule = HumanPlayer(seed=1).move(board, chess.Move.null())
    assert [t.action for t in schedule] == [PressLever(side="left")]


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="speed"):
        HumanPlayer(speed=0)
    with pytest.raises(ValueError, match="probability"):
        HumanPlayer(noise=1.5)
