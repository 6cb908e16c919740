"""The board's EEPROM stream split into records, and records encoded (docs/protocol.md §6).

The board keeps every field change, lever press and power-up in an 8 kB memory that it
sends as ``EE_MOVES`` (:class:`~drivers.dgt.events.EEMoves`). :func:`parse_ee_records`
splits that stream by each record's first byte; bytes that start no valid record become
one-byte :class:`EEUnknown` records, so the records always re-encode to the stream
exactly. Pure: bytes in, records out.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from itertools import repeat
from typing import Literal

from drivers.dgt.fields import check_7bit, check_range

__all__ = [
    "NOP_RECORD",
    "EEClockTime",
    "EEFieldChange",
    "EERecord",
    "EETag",
    "EETagCode",
    "EEUnknown",
    "parse_ee_records",
]


class EETagCode(enum.IntEnum):
    """Single-byte records of the EEPROM stream (docs/protocol.md §6)."""

    NOP2 = 0x00
    POWERUP = 0x6A
    EOF = 0x6B
    FOUR_ROWS = 0x6C
    EMPTY_BOARD = 0x6D
    DOWNLOADED = 0x6E
    BEGIN_POS = 0x6F
    BEGIN_POS_ROT = 0x7A
    START_TAG = 0x7B
    WATCHDOG_ACTION = 0x7C
    RESERVED_7D = 0x7D
    RESERVED_7E = 0x7E
    NOP = 0x7F


@dataclass(frozen=True, slots=True, kw_only=True)
class EEFieldChange:
    """A 2-byte field record ``010r nnnn, 00ii iiii`` (§6).

    Attributes:
        field: DGT field 0..63.
        piece: the new piece code 0..15 (0 = removed).
        quick: the ``r`` bit, "less than ~250 ms since the previous field tag" (H15).
    """

    field: int
    piece: int
    quick: bool = False

    def __post_init__(self) -> None:
        check_range("field", self.field, 0, 63)
        check_range("piece", self.piece, 0, 15)

    def to_bytes(self) -> bytes:
        """The record as stored in the EEPROM."""
        return bytes((0x40 | (self.quick << 4) | self.piece, self.field))


@dataclass(frozen=True, slots=True, kw_only=True)
class EEClockTime:
    """A 3-byte clock record written at a lever press ``011f hhhh, mm, ss`` (§6).

    Attributes:
        side: ``"left"`` when the f bit is set (left display seen from the front).
        hours / minutes / seconds: the time of that side (minutes, seconds BCD on wire).
    """

    side: Literal["left", "right"]
    hours: int
    minutes: int
    seconds: int

    def __post_init__(self) -> None:
        if self.side not in ("left", "right"):
            raise ValueError(f"side must be 'left' or 'right', got {self.side!r}")
        check_range("hours", self.hours, 0, 9)
        check_range("minutes", self.minutes, 0, 59)
        check_range("seconds", self.seconds, 0, 59)

    def to_bytes(self) -> bytes:
        """The record as stored in the EEPROM."""
        first = 0x60 | (0x10 if self.side == "left" else 0) | self.hours
        return bytes((first, _to_bcd(self.minutes), _to_bcd(self.seconds)))


@dataclass(frozen=True, slots=True, kw_only=True)
class EETag:
    """A single-byte record: power-up, EOF, begin position, … (§6)."""

    tag: EETagCode

    def to_bytes(self) -> bytes:
        """The record as stored in the EEPROM."""
        return bytes((int(self.tag),))


@dataclass(frozen=True, slots=True, kw_only=True)
class EEUnknown:
    """Bytes that form no documented record (or a record cut off at the end)."""

    data: bytes

    def __post_init__(self) -> None:
        if not self.data:
            raise ValueError("an unknown record holds at least one byte")
        check_7bit("data", self.data)

    def to_bytes(self) -> bytes:
        """The bytes as stored in the EEPROM."""
        return self.data


EERecord = EEFieldChange | EEClockTime | EETag | EEUnknown


def _to_bcd(value: int) -> int:
    return (value // 10) << 4 | value % 10


def _from_bcd(byte: int) -> int | None:
    tens, units = byte >> 4, byte & 0x0F
    if tens > 5 or units > 9:
        return None
    return tens * 10 + units


def _parse_field_change(raw: bytes, at: int) -> tuple[EERecord, int]:
    if at + 1 < len(raw) and raw[at + 1] < 64:
        key = raw[at] << 8 | raw[at + 1]
        record = _FIELD_CHANGES.get(key)
        if record is None:
            first = raw[at]
            record = EEFieldChange(field=raw[at + 1], piece=first & 0x0F, quick=bool(first & 0x10))
            _FIELD_CHANGES[key] = record
        return record, at + 2
    return _unknown(raw, at), at + 1


def _parse_clock_time(raw: bytes, at: int) -> tuple[EERecord, int]:
    if at + 2 < len(raw):
        first = raw[at]
        minutes, seconds = _from_bcd(raw[at + 1]), _from_bcd(raw[at + 2])
        if minutes is not None and seconds is not None:
            side: Literal["left", "right"] = "left" if first & 0x10 else "right"
            record = EEClockTime(side=side, hours=first & 0x0F, minutes=minutes, seconds=seconds)
            return record, at + 3
    return _unknown(raw, at), at + 1


def _parse_ee_record(raw: bytes, at: int) -> tuple[EERecord, int]:
    first = raw[at]
    if 0x40 <= first <= 0x5F:
        return _parse_field_change(raw, at)
    tag = _TAG_RECORDS.get(first)
    if tag is not None:
        return tag, at + 1
    if 0x60 <= first <= 0x79:
        return _parse_clock_time(raw, at)
    return _unknown(raw, at), at + 1


def _unknown(raw: bytes, at: int) -> EEUnknown:
    first = raw[at]
    return _UNKNOWN[first] if first < 0x80 else EEUnknown(data=raw[at : at + 1])


#: Records are frozen: the one-byte ones, and the field changes met so far (at most
#: 32 x 64), are shared rather than built anew for each of a dump's ~8,000 bytes.
_TAG_RECORDS = {int(code): EETag(tag=code) for code in EETagCode}
_UNKNOWN = tuple(EEUnknown(data=bytes((value,))) for value in range(0x80))
_FIELD_CHANGES: dict[int, EEFieldChange] = {}
#: The record of each EE_NOP byte :func:`parse_ee_records` reads (one shared object).
NOP_RECORD = _TAG_RECORDS[EETagCode.NOP]
_NOP_BYTE = bytes((EETagCode.NOP,))


def parse_ee_records(raw: bytes) -> tuple[EERecord, ...]:
    """Split an EEPROM stream into records by their first byte (docs/protocol.md §6).

    Bytes that start no valid record become one-byte :class:`EEUnknown` records, so the
    records always re-encode to ``raw`` exactly.
    """
    records: list[EERecord] = []
    at, end = 0, len(raw)
    while at < end:
        if raw[at] == EETagCode.NOP:  # the padding of a dump: thousands at once
            stop = end - len(raw[at:].lstrip(_NOP_BYTE))
            records += repeat(NOP_RECORD, stop - at)
            at = stop
            continue
        record, at = _parse_ee_record(raw, at)
        records.append(record)
    return tuple(records)
