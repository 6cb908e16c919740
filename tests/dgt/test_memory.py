"""The EEPROM records → a vendor-neutral BoardMemory (drivers/dgt/memory.py, §6)."""

from __future__ import annotations

import chess

from drivers.dgt.eeprom import EEClockTime, EEFieldChange, EETag, EETagCode, EEUnknown
from drivers.dgt.memory import board_memory
from drivers.memory import LoggedChange, LoggedPowerUp, LoggedPress
from drivers.observations import ClockSide

WHITE_KING = EEFieldChange(field=60, piece=5)  # e1
BLACK_KING = EEFieldChange(field=4, piece=11)  # e8


def test_records_before_the_oldest_power_up_are_dropped_and_counted() -> None:
    records = (
        EEUnknown(data=b"\x05"),  # the cut tail of a record the buffer overwrote
        EEFieldChange(field=12, piece=0),
        EEClockTime(side="left", hours=0, minutes=1, seconds=2),
        EETag(tag=EETagCode.POWERUP),
        BLACK_KING,
        WHITE_KING,
        EETag(tag=EETagCode.DOWNLOADED),  # an earlier read: nothing to do
        EEFieldChange(field=60, piece=0, quick=True),
        EEFieldChange(field=61, piece=5),
        EEClockTime(side="right", hours=1, minutes=30, seconds=5),
        EETag(tag=EETagCode.EOF),
        EEFieldChange(field=0, piece=8),  # after EE_EOF: not part of the log
    )
    memory = board_memory(records)
    placement = chess.BaseBoard.empty()
    placement.set_piece_at(chess.E8, chess.Piece(chess.KING, chess.BLACK))
    placement.set_piece_at(chess.E1, chess.Piece(chess.KING, chess.WHITE))
    assert memory.dropped == 3
    assert memory.steps == (
        LoggedPowerUp(placement=placement),
        LoggedChange(square=chess.E1, piece=None),
        LoggedChange(square=chess.F1, piece=chess.Piece(chess.KING, chess.WHITE)),
        LoggedPress(side=ClockSide.RIGHT, seconds=5405),
    )


def test_the_power_up_block_ends_where_field_order_breaks() -> None:
    records = (
        EETag(tag=EETagCode.POWERUP),
        BLACK_KING,
        WHITE_KING,
        EEFieldChange(field=10, piece=1),  # a lower field: a change after the block
    )
    memory = board_memory(records)
    assert len(memory.steps) == 2
    assert memory.steps[1] == LoggedChange(square=chess.C7, piece=chess.Piece(chess.PAWN, True))
