"""The board's EEPROM log: what it writes as pieces move and levers are pressed (§6).

A cyclic buffer of 0x1F00 bytes, sent oldest first and always ending with EE_EOF in
answer to DGT_SEND_EE_MOVES (docs/protocol.md §3, §6). The records written here:

* at power-up: three EE_NOP, EE_POWERUP, then one field record per piece present;
* a field record per sensor change, with the ``r`` bit set when it follows the previous
  field record by less than 250 ms; a change of the same field as the record just
  written (one piece lifted and put back) overwrites that record instead of appending
  ("if only one piece is changing, the board may overwrite the last field tag");
* a clock record (the mover's time) at each lever press;
* EE_BEGINPOS / EE_BEGINPOS_ROT / EE_EMPTYBOARD when the board reaches the start
  position (normal or rotated) or is cleared, and EE_FOURROWS when the four outer ranks
  are full and nothing else stands (another start position: Chess960), with the
  documented hysteresis: a tag is written again only after more than two fields were
  out of place.

Pure: ``now`` is passed in.
"""

from __future__ import annotations

from drivers.dgt.eeprom import (
    EEClockTime,
    EEFieldChange,
    EERecord,
    EETag,
    EETagCode,
    parse_ee_records,
)
from drivers.emulator.clock import FaceReading, Side
from drivers.emulator.physical import PhysicalBoard, SensorChange

__all__ = ["EEPROM_SIZE", "EepromLog"]

#: Bytes in the board's cyclic EEPROM buffer, EE_EOF included (§2.2, §6).
EEPROM_SIZE = 0x1F00

_QUICK_SECONDS = 0.25
_HYSTERESIS_FIELDS = 2
_EMPTY_FIELDS = (0,) * 64
_TAGGED_POSITIONS = (
    (PhysicalBoard(rotated=False).fields(), EETagCode.BEGIN_POS),
    (PhysicalBoard(rotated=True).fields(), EETagCode.BEGIN_POS_ROT),
    (_EMPTY_FIELDS, EETagCode.EMPTY_BOARD),
)


class EepromLog:
    """The records a board has written, oldest first.

    Args:
        size: bytes of the cyclic buffer; the dump is padded with EE_NOP to this size.
    """

    def __init__(self, *, size: int = EEPROM_SIZE) -> None:
        if size < 1:
            raise ValueError("the EEPROM holds at least the EE_EOF byte")
        self.size = size
        self._data = bytearray()
        self._last_field_at: float | None = None
        self._tagged: tuple[int, ...] | None = None
        self._last_written_field: int | None = None  # the newest bytes are its record

    @property
    def wrapped(self) -> bool:
        """Whether records were written over: the oldest ones are gone from the dump."""
        return len(self._data) > self.size - 1

    def records(self) -> tuple[EERecord, ...]:
        """Every record still in the buffer (the last ``size - 1`` bytes), without EE_EOF."""
        room = self.size - 1
        return parse_ee_records(bytes(self._data[-room:]) if room else b"")

    def dump(self) -> bytes:
        """The EE_MOVES payload: padding, the newest records that fit, EE_EOF (§6)."""
        room = self.size - 1
        kept = bytes(self._data[-room:]) if room else b""
        padding = bytes((EETagCode.NOP,)) * (room - len(kept))
        return padding + kept + bytes((EETagCode.EOF,))

    def record_power_up(self, fields: tuple[int, ...], now: float) -> None:
        """The board got power: NOPs, EE_POWERUP, one record per piece present (§6)."""
        for _ in range(3):
            self._write(EETag(tag=EETagCode.NOP))
        self._write(EETag(tag=EETagCode.POWERUP))
        self._last_field_at = None
        self._tagged = None
        for field, code in enumerate(fields):
            if code:
                self._write(EEFieldChange(field=field, piece=code & 0x0F))
        self._last_field_at = now
        self._tag_position(fields)

    def record_changes(
        self, changes: list[SensorChange], fields: tuple[int, ...], now: float
    ) -> None:
        """Fields changed (``fields`` is the placement after them)."""
        for change in changes:
            last = self._last_field_at
            quick = last is not None and now - last < _QUICK_SECONDS
            record = EEFieldChange(field=change.field, piece=change.code & 0x0F, quick=quick)
            if self._last_written_field == change.field:
                del self._data[-2:]  # a lone piece: the previous tag is overwritten (§6)
            self._write(record)
            self._last_written_field = change.field
            self._last_field_at = now
        if changes:
            self._tag_position(fields)

    def record_clock(self, side: Side, face: FaceReading) -> None:
        """A lever was pressed: the time of the pressing side (§6, clock record)."""
        hours, minutes, seconds = face.hms
        self._write(EEClockTime(side=side, hours=hours, minutes=minutes, seconds=seconds))

    def _tag_position(self, fields: tuple[int, ...]) -> None:
        if self._tagged is not None:
            if _difference(fields, self._tagged) <= _HYSTERESIS_FIELDS:
                return
            self._tagged = None
        for position, tag in _TAGGED_POSITIONS:
            if fields == position:
                self._write(EETag(tag=tag))
                self._tagged = position
                return
        if _four_rows(fields):
            self._write(EETag(tag=EETagCode.FOUR_ROWS))
            self._tagged = fields

    def _write(self, record: EERecord) -> None:
        self._last_written_field = None
        self._data += record.to_bytes()
        overflow = len(self._data) - 4 * self.size
        if overflow > 0:  # keep the buffer bounded; only the newest bytes are ever sent
            del self._data[:overflow]


#: Fields 0-15 and 48-63: ranks 1, 2, 7 and 8 whichever way the board stands (§5.2).
_OUTER_FIELDS = frozenset(range(16)) | frozenset(range(48, 64))


def _four_rows(fields: tuple[int, ...]) -> bool:
    """Every field of the four outer ranks holds a piece, and no other field does (§6)."""
    return all(bool(code) == (field in _OUTER_FIELDS) for field, code in enumerate(fields))


def _difference(fields: tuple[int, ...], other: tuple[int, ...]) -> int:
    return sum(1 for mine, theirs in zip(fields, other, strict=True) if mine != theirs)
