"""DGT events → vendor-neutral observations for the game layer (drivers/observations.py).

The game layer knows chess, not DGT: this module is the only place where DGT field numbers,
piece codes and clock status bits meet python-chess squares, pieces and clock sides. It is
pure: the caller passes the arrival time ``at``.
"""

from __future__ import annotations

from collections.abc import Mapping

import chess

from drivers.dgt.events import BatteryStatus, BoardDump, ClockTimes, Event, FieldUpdated
from drivers.observations import BatteryObserved, ClockObserved, ClockSide, PlacementObserved

__all__ = [
    "PIECES",
    "SensorBoard",
    "battery_observation",
    "clock_observation",
    "square_of_field",
]

#: DGT piece codes 0x01–0x0C → pieces (docs/protocol.md §5.1; note the order R N B K Q).
PIECES: Mapping[int, chess.Piece] = {
    code: chess.Piece(piece_type, color)
    for color, first in ((chess.WHITE, 0x01), (chess.BLACK, 0x07))
    for code, piece_type in zip(
        range(first, first + 6),
        (chess.PAWN, chess.ROOK, chess.KNIGHT, chess.BISHOP, chess.KING, chess.QUEEN),
        strict=True,
    )
}

_SQUARES = tuple(chess.square(field % 8, 7 - field // 8) for field in range(64))


def square_of_field(field: int) -> chess.Square:
    """The python-chess square of DGT field 0..63 (0 = a8, 63 = h1; docs/protocol.md §5.2)."""
    return _SQUARES[field]


class SensorBoard:
    """The 64 squares as the sensors report them, from BOARD_DUMP and FIELD_UPDATE (§4).

    A FIELD_UPDATE only makes sense on top of a dump, so updates before the first dump are
    counted and dropped. A later dump (a refresh, drivers/dgt/refresh.py) gives a
    placement only when it differs from the sensed board: then an update was lost or
    torn, and the dump puts it right. Magic pieces 0x0D–0x0F (§5.1) and codes no table
    knows are read as an empty square and counted.

    Attributes:
        updates_before_dump: FIELD_UPDATEs dropped because no dump had arrived yet.
        ignored_codes: non-empty piece codes read as empty (magic pieces, unknown codes).
        corrections: later dumps that differed from the sensed board.
    """

    def __init__(self) -> None:
        self._board: chess.BaseBoard | None = None
        self.updates_before_dump = 0
        self.ignored_codes = 0
        self.corrections = 0

    @property
    def placement(self) -> chess.BaseBoard | None:
        """A copy of the current placement, None before the first dump."""
        return None if self._board is None else self._board.copy()

    def receive_event(self, event: Event, at: float) -> PlacementObserved | None:
        """Apply a BoardDump or FieldUpdated; other events are ignored.

        Returns:
            The whole placement after a dump that changed it (or the first), or after
            an update that changed it;
            None otherwise. The caller hands it to the game layer next.
        """
        if isinstance(event, BoardDump):
            board = self._board_of(event.squares)
            if self._board is not None and board == self._board:
                return None  # a refresh that found the sensed board right
            if self._board is not None:
                self.corrections += 1
            self._board = board
            return PlacementObserved(board=board.copy(), at=at)
        if isinstance(event, FieldUpdated):
            return self._apply_update(event, at)
        return None

    def _piece(self, code: int) -> chess.Piece | None:
        piece = PIECES.get(code)
        if piece is None and code:
            self.ignored_codes += 1
        return piece

    def _board_of(self, squares: tuple[int, ...]) -> chess.BaseBoard:
        """The placement of a dump, its bitboards set at once (python-chess would set
        each square: a dump comes every few seconds from every board)."""
        masks = [0] * 7  # by piece type, 1..6
        colors = [0, 0]  # by color
        for field, code in enumerate(squares):
            if code:
                piece = self._piece(code)
                if piece is not None:
                    bit = chess.BB_SQUARES[_SQUARES[field]]
                    masks[piece.piece_type] |= bit
                    colors[piece.color] |= bit
        board = chess.BaseBoard.empty()
        board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings = masks[
            1:
        ]
        board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK] = colors[1], colors[0]
        board.occupied = colors[0] | colors[1]
        return board

    def _apply_update(self, event: FieldUpdated, at: float) -> PlacementObserved | None:
        if self._board is None:
            self.updates_before_dump += 1
            return None
        square, piece = _SQUARES[event.field], self._piece(event.piece)
        if self._board.piece_at(square) == piece:
            return None
        if piece is None:
            self._board.remove_piece_at(square)
        else:
            self._board.set_piece_at(square, piece)
        return PlacementObserved(board=self._board.copy(), at=at)


def clock_observation(times: ClockTimes, at: float) -> ClockObserved:
    """Turn a BWTIME clock reading into a :class:`ClockObserved` (docs/protocol.md §7.2).

    The running side comes from D0 (running) and D1 (lever up on the right: the right
    side's time counts down), not from the conflicting turn bits D3/D4; flags come from
    bit 0x10 (fallen and blocked at zero); D5 means no clock is cabled.
    """
    lever = ClockSide.RIGHT if times.right_high else ClockSide.LEFT
    return ClockObserved(
        left_seconds=times.left.total_seconds,
        right_seconds=times.right.total_seconds,
        left_flag=times.left.flag_fallen,
        right_flag=times.right.flag_fallen,
        running=lever if times.running else None,
        lever=lever,
        connected=not times.no_clock,
        at=at,
    )


def battery_observation(status: BatteryStatus, at: float) -> BatteryObserved:
    """Turn a BATTERY_STATUS into a :class:`BatteryObserved` (docs/protocol.md §4.1).

    Byte 0 is the remaining capacity in %; a value above 100 (the field holds 0..127) is
    read as 100. Status bit 0 means charging.
    """
    return BatteryObserved(percent=min(status.percent, 100), charging=status.charging, at=at)
