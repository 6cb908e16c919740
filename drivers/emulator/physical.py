"""The physical e-board: pieces standing on 64 squares, and what the sensors report.

Players act on *real* squares (python-chess numbering, a1 = 0 … h8 = 63). The sensor grid
numbers its fields 0 = a8 … 63 = h1 with the connector on White's left and never
re-numbers when the board is turned around: on a board rotated by 180° the real square
``s`` lies under field ``(s ^ 56) ^ 63`` (docs/protocol.md §5.2). Piece codes follow §5.1.

The model is pure: lifting and placing return the sensor changes they cause; nothing here
knows about time, modes or bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

__all__ = [
    "EMPTY",
    "PhysicalBoard",
    "SensorChange",
    "code_of",
    "field_of",
    "piece_of",
    "square_of",
]

#: Piece code of an empty field (docs/protocol.md §5.1).
EMPTY = 0

# §5.1: white P R N B K Q = 1..6, black = 7..12 (note the R, N, B, K, Q order).
_ORDER = (chess.PAWN, chess.ROOK, chess.KNIGHT, chess.BISHOP, chess.KING, chess.QUEEN)
_CODES: dict[chess.Piece, int] = {
    chess.Piece(piece_type, color): index + 1 + (0 if color == chess.WHITE else 6)
    for index, piece_type in enumerate(_ORDER)
    for color in chess.COLORS
}
_PIECES: dict[int, chess.Piece] = {code: piece for piece, code in _CODES.items()}


def code_of(piece: chess.Piece | None) -> int:
    """DGT piece code of ``piece`` (0 for an empty square), docs/protocol.md §5.1."""
    return EMPTY if piece is None else _CODES[piece]


def piece_of(code: int) -> chess.Piece | None:
    """The piece a DGT code stands for; ``None`` for empty and the magic pieces 13–15."""
    return _PIECES.get(code)


def field_of(square: chess.Square, *, rotated: bool = False) -> int:
    """Sensor field (0 = a8 … 63 = h1) lying under the real ``square`` (§5.2)."""
    field = square ^ 56
    return field ^ 63 if rotated else field


def square_of(field: int, *, rotated: bool = False) -> chess.Square:
    """Real square lying over the sensor ``field``; the inverse of :func:`field_of`."""
    return (field ^ 63 if rotated else field) ^ 56


@dataclass(frozen=True, slots=True, kw_only=True)
class SensorChange:
    """One sensor field now reads a different piece code (0 = emptied)."""

    field: int
    code: int


class PhysicalBoard:
    """Sixty-four squares with pieces on them, as the hands and the sensors see them.

    Args:
        placement: the pieces standing on the board at first (default: the start position).
        rotated: the board is set up turned by 180° (connector on White's right).
    """

    def __init__(self, placement: chess.BaseBoard | None = None, *, rotated: bool = False) -> None:
        self._board = chess.BaseBoard(None if placement is None else placement.board_fen())
        if placement is None:
            self._board.reset_board()
        self._rotated = rotated
        self._codes = self._read_fields()  # the sensors' reading, kept as pieces move

    @property
    def rotated(self) -> bool:
        """Whether the board stands turned by 180° (sensor fields are XORed with 63)."""
        return self._rotated

    @property
    def placement(self) -> chess.BaseBoard:
        """A copy of the pieces on the real squares."""
        return self._board.copy()

    def piece_at(self, square: chess.Square) -> chess.Piece | None:
        """The piece standing on a real square, if any."""
        return self._board.piece_at(square)

    def fields(self) -> tuple[int, ...]:
        """The 64 piece codes the sensors read, indexed by field (the board dump, §4)."""
        return tuple(self._codes)

    def _read_fields(self) -> list[int]:
        codes = [EMPTY] * 64
        for square, piece in self._board.piece_map().items():
            codes[field_of(square, rotated=self._rotated)] = code_of(piece)
        return codes

    def lift(self, square: chess.Square) -> tuple[chess.Piece, list[SensorChange]]:
        """Take the piece off ``square``; returns it and the field that went empty.

        Raises:
            ValueError: nothing stands on ``square`` (a bug in the caller's script).
        """
        piece = self._board.remove_piece_at(square)
        if piece is None:
            raise ValueError(f"no piece to lift on {chess.square_name(square)}")
        self._codes[self._field(square)] = EMPTY
        return piece, [SensorChange(field=self._field(square), code=EMPTY)]

    def place(self, square: chess.Square, piece: chess.Piece) -> list[SensorChange]:
        """Put ``piece`` on ``square``; a piece already there is pushed off the board.

        Pushing a captured piece away with the capturing one leaves the field occupied
        throughout, so the sensor never reports it empty (docs/protocol.md §12.1).
        """
        before = self._board.piece_at(square)
        self._board.set_piece_at(square, piece)
        self._codes[self._field(square)] = code_of(piece)
        if before == piece:
            return []
        return [SensorChange(field=self._field(square), code=code_of(piece))]

    def set_up(self, placement: chess.BaseBoard) -> list[SensorChange]:
        """Arrange the whole board at once; returns a change per field that differs."""
        before = self.fields()
        self._board = chess.BaseBoard(placement.board_fen())
        self._codes = self._read_fields()
        after = self.fields()
        return [
            SensorChange(field=field, code=code)
            for field, (old, code) in enumerate(zip(before, after, strict=True))
            if old != code
        ]

    def _field(self, square: chess.Square) -> int:
        return field_of(square, rotated=self._rotated)
