"""Chess960: every start position starts a game; castling from placements, in every order.

The start positions below were chosen so that between them every kind of Chess960
castling is played, short and long: the king and the rook both moving, the king staying
on its square, the rook staying on its square, the king landing on the rook's start
square, and king and rook swapping squares. Each is castled by both sides in each order
hands use (:mod:`drivers.emulator.castling`), with a clock and without one, and on a
board set up turned round.
"""

from __future__ import annotations

import chess
import pytest

from daemon.game.events import GameStarted, MoveMade, OutOfSync
from daemon.game.matching import placement_key, rotated
from daemon.game.record import GameRecord
from daemon.game.starts import find_start
from daemon.game.state import TrackerSettings
from drivers.emulator.castling import CASTLING_ORDERS, CastlingOrder
from drivers.emulator.player import HumanPlayer
from tests.game.table import BLITZ, Table

CHESS960 = TrackerSettings(chess960=True)

#: (start position, moves in SAN): each ends with both sides castling.
LINES = {
    12: "Nb3 Nb6 Nc3 Nc6 O-O-O O-O-O",  # QBNNRKBR: both move
    682: "Nc3 Nc6 O-O-O O-O-O",  # QRKNBBNR: the king stays on c1
    482: "Nc3 Nc6 O-O-O O-O-O",  # BQRNKBNR: the king lands on the rook's c1
    74: "O-O-O O-O-O",  # NNRKBBQR: king and rook swap c1/d1
    194: "Nb3 Nb6 O-O-O O-O-O",  # BQNRKBNR: the rook stays on d1
    490: "Nb3 Nb6 O-O-O O-O-O",  # QRNKBBNR: the rook lands on the king's d1
    672: "Ne3 Ne6 Nf3 Nf6 O-O O-O",  # BBQRKNNR: both move
    100: "Nc3 Nc6 Ne3 Ne6 O-O O-O",  # QBBNRNKR: the king stays on g1
    768: "Ne3 Ne6 O-O O-O",  # BBQRKNRN: the king lands on the rook's g1
    3: "O-O O-O",  # BQNNRKRB: king and rook swap f1/g1
    864: "Nf3 Nf6 O-O O-O",  # BBQRKRNN: the rook stays on f1
    196: "Nc3 Nc6 Nf3 Nf6 O-O O-O",  # QBBNRKNR: the rook lands on the king's f1
}


def _moves(number: int) -> list[chess.Move]:
    board = chess.Board.from_chess960_pos(number)
    moves = []
    for san in LINES[number].split():
        moves.append(board.parse_san(san))
        board.push(moves[-1])
    return moves


def _play(number: int, order: CastlingOrder, *, clock: bool, turned: bool) -> Table:
    start = chess.Board.from_chess960_pos(number)
    table = Table(
        settings=CHESS960,
        clock=BLITZ if clock else None,
        rotated=turned,
        placement=chess.BaseBoard(start.board_fen()),
    )
    player = HumanPlayer(seed=number, castling=order)
    table.start_clock()
    for move in _moves(number):
        table.wait(2.0)
        table.apply(player.move(table.tracker.board, move, at=table.now))
    table.wait(6.0)
    return table


def test_every_start_position_is_found_either_way_round() -> None:
    for number in range(960):
        board = chess.Board.from_chess960_pos(number)
        for turned in (False, True):
            raw = rotated(board) if turned else chess.BaseBoard(board.board_fen())
            start = find_start(raw, placement_key(raw), chess960=True)
            assert start is not None
            assert (start.number, start.rotated) == (number, turned)
    standard = chess.BaseBoard()
    assert find_start(standard, placement_key(standard), chess960=False) is not None
    other = chess.Board.from_chess960_pos(0)
    assert find_start(other, placement_key(other), chess960=False) is None


@pytest.mark.parametrize("order", CASTLING_ORDERS)
@pytest.mark.parametrize("number", sorted(LINES))
def test_castling_in_every_order_from_every_kind_of_start(
    number: int, order: CastlingOrder
) -> None:
    table = _play(number, order, clock=True, turned=number % 2 == 1)
    (started,) = table.of_type(GameStarted)
    assert (started.chess960, started.rotated) == (number, number % 2 == 1)
    assert table.moves() == [m.uci() for m in _moves(number)]
    sans = [m.san for m in table.of_type(MoveMade)][-2:]
    assert sans == LINES[number].split()[-2:]
    assert table.of_type(OutOfSync) == []


@pytest.mark.parametrize("order", CASTLING_ORDERS)
def test_castling_without_a_clock(order: CastlingOrder) -> None:
    for number in (74, 100, 196, 482, 864):
        table = _play(number, order, clock=False, turned=False)
        assert table.moves() == [m.uci() for m in _moves(number)], (number, order)


def test_the_record_carries_the_variant_the_start_and_its_number() -> None:
    table = _play(768, "both", clock=True, turned=False)
    record = GameRecord()
    for event in table.events:
        record.receive_event(event)
    game = record.game()
    start = chess.Board.from_chess960_pos(768)
    assert game.headers["Variant"] == "Chess960"
    assert game.headers["SetUp"] == "1"
    assert game.headers["FEN"] == start.fen()
    assert game.comment == "Chess960 start position 768"
    text = record.pgn_text()
    assert "{ Chess960 start position 768 }" in text
    assert "2. O-O { [%clk" in text
    assert "2... O-O { [%clk" in text
    assert [m.uci() for m in game.mainline_moves()] == [m.uci() for m in _moves(768)]


def test_the_standard_position_in_a_chess960_section_is_number_518() -> None:
    table = Table(settings=CHESS960)
    (started,) = table.of_type(GameStarted)
    assert started.chess960 == 518
    table.start_clock()
    table.play("e2e4")
    record = GameRecord()
    for event in table.events:
        record.receive_event(event)
    headers = record.game().headers
    assert (headers["Variant"], headers["SetUp"]) == ("Chess960", "1")
    assert headers["FEN"] == chess.STARTING_FEN


def test_another_start_position_during_a_game_is_a_new_game() -> None:
    table = _play(3, "king", clock=True, turned=False)
    table.set_up(chess.BaseBoard(chess.Board.from_chess960_pos(959).board_fen()))
    started = table.of_type(GameStarted)
    assert [s.chess960 for s in started] == [3, 959]


def test_the_kings_gesture_means_the_same_in_chess960() -> None:
    table = _play(864, "rook", clock=True, turned=False)
    table.apply(HumanPlayer(seed=1).signal_result(table.physical.placement, "0-1", at=table.now))
    table.wait(5.0)
    assert table.tracker.result == "0-1"
