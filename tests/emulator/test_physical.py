"""The physical board: field numbering, rotation, what lifting and placing report."""

from __future__ import annotations

import base64
from pathlib import Path

import chess
import pytest

from drivers.dgt.events import BoardDump
from drivers.dgt.protocol import decode_message
from drivers.emulator.physical import (
    EMPTY,
    PhysicalBoard,
    SensorChange,
    code_of,
    field_of,
    piece_of,
    square_of,
)


def first_message(recording: Path) -> bytes:
    return base64.b64decode(recording.read_text().split()[0])


def test_piece_codes_follow_the_table() -> None:
    # §5.1: white P R N B K Q = 1..6, black = 7..12.
    letters = "PRNBKQprnbkq"
    for code, letter in enumerate(letters, start=1):
        piece = chess.Piece.from_symbol(letter)
        assert code_of(piece) == code
        assert piece_of(code) == piece
    assert code_of(None) == EMPTY
    assert piece_of(EMPTY) is None
    assert piece_of(0x0D) is None  # magic pieces are no chess pieces


@pytest.mark.parametrize(
    ("square", "field", "rotated_field"),
    [(chess.A8, 0, 63), (chess.H8, 7, 56), (chess.A1, 56, 7), (chess.H1, 63, 0), (chess.E1, 60, 3)],
)
def test_fields_number_from_a8_and_rotation_xors_63(
    square: chess.Square, field: int, rotated_field: int
) -> None:
    assert field_of(square) == field
    assert field_of(square, rotated=True) == rotated_field
    assert square_of(field) == square
    assert square_of(rotated_field, rotated=True) == square


def test_start_dump_matches_the_real_board(recordings_dir: Path) -> None:
    board = PhysicalBoard()
    event = decode_message(first_message(recordings_dir / "1.inbytes"))
    assert event == BoardDump(squares=board.fields())


def test_rotated_start_dump_matches_the_real_rotated_board(recordings_dir: Path) -> None:
    board = PhysicalBoard(rotated=True)
    event = decode_message(first_message(recordings_dir / "2.inbytes"))
    assert event == BoardDump(squares=board.fields())


def test_lift_and_place_report_the_changed_field() -> None:
    board = PhysicalBoard()
    piece, changes = board.lift(chess.E2)
    assert piece == chess.Piece(chess.PAWN, chess.WHITE)
    assert changes == [SensorChange(field=52, code=EMPTY)]
    assert board.place(chess.E4, piece) == [SensorChange(field=36, code=1)]
    assert board.placement.board_fen() == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"


def test_rotated_board_reports_fields_xor_63() -> None:
    board = PhysicalBoard(rotated=True)
    _, changes = board.lift(chess.E2)
    assert changes == [SensorChange(field=52 ^ 63, code=EMPTY)]


def test_pushing_a_captured_piece_away_keeps_the_field_occupied() -> None:
    board = PhysicalBoard(chess.BaseBoard("4k3/8/8/3p4/4P3/8/8/4K3"))
    pawn, _ = board.lift(chess.E4)
    changes = board.place(chess.D5, pawn)
    assert changes == [SensorChange(field=field_of(chess.D5), code=1)]
    assert board.piece_at(chess.D5) == pawn


def test_putting_a_piece_back_where_it_is_reports_nothing() -> None:
    board = PhysicalBoard()
    assert board.place(chess.E1, chess.Piece(chess.KING, chess.WHITE)) == []


def test_lifting_from_an_empty_square_is_a_script_bug() -> None:
    with pytest.raises(ValueError, match="e4"):
        PhysicalBoard().lift(chess.E4)


def test_set_up_reports_every_field_that_differs() -> None:
    board = PhysicalBoard()
    changes = board.set_up(chess.BaseBoard("4k3/8/8/8/8/8/8/4K3"))
    assert len(changes) == 30
    assert all(change.code == EMPTY for change in changes)
    assert board.fields().count(EMPTY) == 62
