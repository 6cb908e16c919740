"""Every kind of move, made the ways people make them (docs/protocol.md §12.1, §12.2)."""

from __future__ import annotations

import chess
import pytest

from daemon.game.events import MoveMade, MovesWithdrawn, OutOfSync
from daemon.game.state import TrackerSettings
from drivers.observations import ClockSide
from tests.game.table import Table

P, N, B, R, Q, K = (chess.Piece(t, chess.WHITE) for t in chess.PIECE_TYPES)
p, n, b, r, q, k = (chess.Piece(t, chess.BLACK) for t in chess.PIECE_TYPES)


def started(moves: str = "") -> Table:
    """A table with the clock started and ``moves`` played the plain way."""
    table = Table()
    table.start_clock()
    for uci in moves.split():
        table.play(uci)
    return table


def from_position(fen: str) -> Table:
    """A table whose game starts from a set-up position, White to move, clock running."""
    board = chess.Board(fen)
    table = Table(placement=board, settings=TrackerSettings(white_side=ClockSide.LEFT))
    table.start_clock()
    assert table.accept()
    # Castling rights come from what stands in place (king and rook at home).
    assert table.tracker.board.board_fen() == board.board_fen()
    assert table.tracker.board.turn == board.turn
    return table


def assert_clean(table: Table) -> None:
    """No move was ever withdrawn and the board never went out of sync."""
    assert table.of_type(MovesWithdrawn) == []
    assert table.of_type(OutOfSync) == []


def test_quiet_moves_carry_san_fen_and_clock() -> None:
    table = started("e2e4 e7e5 g1f3")
    made = table.of_type(MoveMade)
    assert [(m.ply, m.uci, m.san) for m in made] == [
        (1, "e2e4", "e4"),
        (2, "e7e5", "e5"),
        (3, "g1f3", "Nf3"),
    ]
    assert made[-1].fen == "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
    assert all(m.clock is not None and m.clock_before is not None for m in made)
    assert_clean(table)


@pytest.mark.parametrize("order", ["captured first", "mover first", "pushed away"])
def test_capture_in_any_order(order: str) -> None:
    table = started("e2e4 d7d5")
    table.wait(3)
    if order == "captured first":
        table.lift(chess.D5)
        table.wait(0.5)
        table.lift(chess.E4)
    elif order == "mover first":
        table.lift(chess.E4)
        table.wait(0.5)
        table.lift(chess.D5)
    else:
        table.lift(chess.E4)
    table.wait(0.5)
    table.place(chess.D5, P)
    table.wait(0.5)
    table.press(chess.WHITE)
    assert table.moves() == ["e2e4", "d7d5", "e4d5"]
    assert table.of_type(MoveMade)[-1].san == "exd5"
    assert_clean(table)


OPEN_CASTLING = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 1"


@pytest.mark.parametrize(
    ("king", "rook", "uci", "san"),
    [
        ((chess.E1, chess.G1), (chess.H1, chess.F1), "e1g1", "O-O"),
        ((chess.E1, chess.C1), (chess.A1, chess.D1), "e1c1", "O-O-O"),
    ],
)
@pytest.mark.parametrize("rook_first", [False, True])
def test_castling_both_ways_in_both_orders(
    king: tuple[int, int], rook: tuple[int, int], uci: str, san: str, rook_first: bool
) -> None:
    # Rook first, the rook's hop is itself a legal move (Rf1, Rd1): only a stage.
    table = from_position(OPEN_CASTLING)
    hops = [rook, king] if rook_first else [king, rook]
    for origin, target in hops:
        table.wait(0.6)
        table.slide(origin, target)
    table.wait(0.5)
    table.press(chess.WHITE)
    assert table.moves() == [uci]
    assert table.of_type(MoveMade)[-1].san == san
    assert_clean(table)


def test_black_castles_rook_first() -> None:
    table = from_position(OPEN_CASTLING)
    table.play("a2a3")
    table.wait(1)
    table.slide(chess.H8, chess.F8)
    table.wait(0.6)
    table.slide(chess.E8, chess.G8)
    table.wait(0.4)
    table.press(chess.BLACK)
    assert [m.san for m in table.of_type(MoveMade)] == ["a3", "O-O"]
    assert_clean(table)


def test_castling_rook_first_slowly_without_clock_is_corrected() -> None:
    """No lever: the rook's hop stands past the settle time, so it is published, then
    the king's hop shows it was castling: one correction, never a wrong move left."""
    table = Table(clock=None, placement=chess.Board(OPEN_CASTLING))
    assert table.accept()
    table.slide(chess.H1, chess.F1)
    table.wait(3)
    table.slide(chess.E1, chess.G1)
    table.wait(3)
    withdrawn = table.of_type(MovesWithdrawn)
    assert [(w.from_ply, w.reason) for w in withdrawn] == [(1, "correction")]
    assert [m.uci for m in table.of_type(MoveMade)] == ["h1f1", "e1g1"]
    assert table.moves() == ["e1g1"]


@pytest.mark.parametrize("captured_first", [True, False])
def test_en_passant_with_the_pawn_taken_before_or_after(captured_first: bool) -> None:
    table = started("e2e4 a7a6 e4e5 d7d5")
    table.wait(2)
    if captured_first:
        table.lift(chess.D5)
        table.wait(0.4)
    table.slide(chess.E5, chess.D6)
    if not captured_first:
        table.wait(0.4)
        table.lift(chess.D5)
    table.wait(0.4)
    table.press(chess.WHITE)
    assert table.moves()[-1] == "e5d6"
    assert table.of_type(MoveMade)[-1].san == "exd6"
    assert_clean(table)


PROMOTION = "r3k3/1P6/8/8/8/8/6p1/4K3 w - - 0 1"


@pytest.mark.parametrize(
    ("target", "piece", "uci", "san"),
    [
        (chess.B8, Q, "b7b8q", "b8=Q+"),
        (chess.B8, N, "b7b8n", "b8=N"),
        (chess.B8, R, "b7b8r", "b8=R+"),
        (chess.A8, Q, "b7a8q", "bxa8=Q+"),
        (chess.A8, B, "b7a8b", "bxa8=B"),
    ],
)
@pytest.mark.parametrize("pawn_first", [False, True])
def test_promotion_and_under_promotion(
    target: int, piece: chess.Piece, uci: str, san: str, pawn_first: bool
) -> None:
    """The pawn may first be put on the last rank: that matches nothing, then the new
    piece replaces it."""
    table = from_position(PROMOTION)
    table.wait(1)
    pawn = table.lift(chess.B7)
    table.wait(0.4)
    if pawn_first:
        table.place(target, pawn)
        table.wait(1.5)
        table.lift(target)
        table.wait(1.0)
    table.place(target, piece)
    table.wait(0.5)
    table.press(chess.WHITE)
    assert table.moves() == [uci]
    assert table.of_type(MoveMade)[-1].san == san
    assert_clean(table)


def test_black_under_promotes_with_capture() -> None:
    table = from_position("4k3/8/8/8/8/8/6p1/4K2R w - - 0 1")
    table.play("e1e2")
    table.wait(1)
    table.lift(chess.H1)
    table.lift(chess.G2)
    table.wait(0.5)
    table.place(chess.H1, n)
    table.wait(0.5)
    table.press(chess.BLACK)
    assert table.moves() == ["e1e2", "g2h1n"]
    assert_clean(table)


def test_j_adoube_is_nothing() -> None:
    table = started("e2e4")
    table.wait(1)
    knight = table.lift(chess.G8)
    table.wait(0.5)
    table.place(chess.G8, knight)
    table.wait(10)
    assert table.moves() == ["e2e4"]
    assert_clean(table)


def test_a_knocked_over_piece_put_back_is_nothing() -> None:
    # After Black's move, a white rook is knocked to a free square (a legal-looking
    # spot for a moment), then put back; the lever press completes Black's move only.
    table = started("e2e4 e7e5 g1f3")
    table.wait(1)
    table.slide(chess.B8, chess.C6)
    table.wait(0.2)
    table.slide(chess.F1, chess.E2)
    table.wait(0.8)
    table.slide(chess.E2, chess.F1)
    table.wait(0.3)
    table.press(chess.BLACK)
    table.wait(6)
    assert table.moves() == ["e2e4", "e7e5", "g1f3", "b8c6"]
    assert_clean(table)


@pytest.mark.parametrize("path", [(chess.D1, chess.E1, chess.F1), (chess.B1, chess.C1, chess.F1)])
def test_a_rook_slid_through_legal_squares_is_one_move(path: tuple[int, ...]) -> None:
    table = from_position("4k3/8/8/8/8/8/8/R5K1 w - - 0 1")
    table.slide(chess.A1, *path, pause=0.4)
    table.wait(0.5)
    table.press(chess.WHITE)
    assert table.moves() == ["a1f1"]
    assert_clean(table)
