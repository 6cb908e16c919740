"""The board's EEPROM log → a vendor-neutral :class:`~drivers.memory.BoardMemory` (§6).

Rules of docs/protocol.md §6 applied here:

* The buffer is cyclic, oldest first: its first record may be cut and everything before
  the oldest ``EE_POWERUP`` still held lies on a board nobody knows (the start was
  overwritten). Those records are dropped and counted; the log starts at that power-up.
* ``EE_POWERUP`` is followed by one field record per piece present, in field order:
  that block is the placement at power-up, not a series of changes.
* Earlier games and power-ups precede the current one: they are kept (the game layer
  finds the point where the game it knows stands).
* ``EE_DOWNLOADED`` only marks an earlier read; the begin-position, four-rows
  (``EE_FOURROWS``: a Chess960 start) and empty-board tags repeat what the field records
  already say (with hysteresis); ``EE_NOP`` pads. All are skipped: the game layer knows a
  start from its placement. The ``r`` bit (a change less than ~250 ms after the previous
  one) carries no information whole placements need.
* A lone piece may overwrite the previous field record instead of appending: the
  placements stay right, only an intermediate stage of a hand is missing.
* Clock records name the physical left/right display (not swapped on a rotated board)
  and are written at lever presses only: the time of the side that pressed.
"""

from __future__ import annotations

from collections.abc import Sequence

import chess

from drivers.dgt.eeprom import NOP_RECORD, EEClockTime, EEFieldChange, EERecord, EETag, EETagCode
from drivers.dgt.observe import PIECES, square_of_field
from drivers.memory import BoardMemory, LoggedChange, LoggedPowerUp, LoggedPress, LoggedStep
from drivers.observations import ClockSide

__all__ = ["board_memory"]


def board_memory(records: Sequence[EERecord]) -> BoardMemory:
    """Read an EE_MOVES record list (oldest first) into a :class:`BoardMemory`."""
    steps: list[LoggedStep] = []
    dropped = 0
    known = False  # a power-up has been seen: the placement is known from here on
    index = 0
    end = len(records)
    while index < end:
        record = records[index]
        index += 1
        if record is NOP_RECORD:  # a dump's padding: thousands of them
            continue
        if isinstance(record, EETag):
            if record.tag is EETagCode.EOF:
                break
            if record.tag is EETagCode.POWERUP:
                placement, index = _power_up_block(records, index)
                steps.append(LoggedPowerUp(placement=placement))
                known = True
            continue
        step = _step(record)
        if step is None or not known:
            dropped += 1
            continue
        steps.append(step)
    return BoardMemory(steps=tuple(steps), dropped=dropped)


def _step(record: EERecord) -> LoggedStep | None:
    if isinstance(record, EEFieldChange):
        return LoggedChange(square=square_of_field(record.field), piece=PIECES.get(record.piece))
    if isinstance(record, EEClockTime):
        side = ClockSide.LEFT if record.side == "left" else ClockSide.RIGHT
        seconds = record.hours * 3600 + record.minutes * 60 + record.seconds
        return LoggedPress(side=side, seconds=seconds)
    return None


def _power_up_block(records: Sequence[EERecord], index: int) -> tuple[chess.BaseBoard, int]:
    """The placement the field records after EE_POWERUP list (one per piece, field order)."""
    board = chess.BaseBoard.empty()
    last_field = -1
    while index < len(records):
        record = records[index]
        if not isinstance(record, EEFieldChange) or record.piece == 0:
            break
        if record.field <= last_field:
            break
        piece = PIECES.get(record.piece)
        if piece is not None:
            board.set_piece_at(square_of_field(record.field), piece)
        last_field = record.field
        index += 1
    return board, index
