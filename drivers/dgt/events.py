"""Board → PC messages of the DGT protocol, as typed events (docs/protocol.md §4, §6, §7).

Every message the board sends becomes one of these frozen, keyword-only dataclasses. They
validate their fields when constructed, so an event that exists is well formed.

Errors of the DGT package, drawn once here::

    peer faults (bytes from the board)  → ProtocolViolation events + counters, never raised
    our own misuse                      → raised
        ValueError   a field out of its wire range, e.g. ``FieldUpdated(field=64, ...)``
        TypeError    encoding something that is no event or command

Sides of the clock are the clock's physical ``right`` (message bytes 3–5) and ``left``
(bytes 6–8), never colours (docs/protocol.md §7.2).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal

from drivers.dgt.eeprom import EERecord, parse_ee_records
from drivers.dgt.fields import check_7bit, check_range, check_text

__all__ = [
    "BatteryStatus",
    "BoardDump",
    "BusAddress",
    "ClockAck",
    "ClockFace",
    "ClockNull",
    "ClockTimes",
    "DraughtsDump",
    "EEMoves",
    "Event",
    "FieldUpdated",
    "LongSerialNumber",
    "ProtocolViolation",
    "SerialNumber",
    "TimedEvent",
    "Trademark",
    "UnknownMessage",
    "Version",
    "ViolationReason",
]


# --- board ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardDump:
    """BOARD_DUMP 0x86: the piece code of all 64 fields (docs/protocol.md §4, §5).

    Attributes:
        squares: 64 piece codes (§5.1) in DGT field order, 0 = a8, 7 = h8, … 63 = h1
            with the connector on White's left (§5.2). Codes are kept raw (0x00–0x7F),
            including the magic pieces 0x0D–0x0F and codes no table knows.
    """

    squares: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.squares) != 64:
            raise ValueError(f"a board dump has 64 squares, got {len(self.squares)}")
        if not all(0 <= code <= 0x7F for code in self.squares):
            raise ValueError("piece codes are 7-bit values")


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldUpdated:
    """FIELD_UPDATE 0x8E: one field changed (docs/protocol.md §4).

    Attributes:
        field: DGT field 0..63 (0 = a8, 63 = h1, §5.2).
        piece: the new piece code (§5.1); 0 means the field was emptied.
    """

    field: int
    piece: int

    def __post_init__(self) -> None:
        check_range("field", self.field, 0, 63)
        check_range("piece", self.piece, 0, 0x7F)


@dataclass(frozen=True, slots=True, kw_only=True)
class DraughtsDump:
    """BOARD_DUMP_50B 0x94 / BOARD_DUMP_50W 0x95: a draughts board's 50 fields (§4).

    Attributes:
        kind: ``"50B"`` (black squares, 0x94) or ``"50W"`` (0x95).
        squares: 50 raw piece codes.
    """

    kind: Literal["50B", "50W"]
    squares: tuple[int, ...]

    def __post_init__(self) -> None:
        if self.kind not in ("50B", "50W"):
            raise ValueError(f"kind must be '50B' or '50W', got {self.kind!r}")
        if len(self.squares) != 50:
            raise ValueError(f"a draughts dump has 50 squares, got {len(self.squares)}")
        if not all(0 <= code <= 0x7F for code in self.squares):
            raise ValueError("piece codes are 7-bit values")


# --- clock ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockFace:
    """One side of a BWTIME clock reading (docs/protocol.md §7.2, bytes 3–5 or 6–8).

    Attributes:
        hours: 0–9 (low nibble of the first byte).
        minutes / seconds: 0–59 (packed BCD on the wire).
        flag_fallen: bit 0x10, the flag fell and the clock is blocked at zero.
        time_per_move: bit 0x20, a Fischer/Bronstein increment or delay is active.
        flag_shown: bit 0x40, the flag is on the display but the clock may still run.
    """

    hours: int
    minutes: int
    seconds: int
    flag_fallen: bool
    time_per_move: bool
    flag_shown: bool

    def __post_init__(self) -> None:
        if not (0 <= self.hours <= 9 and 0 <= self.minutes <= 59 and 0 <= self.seconds <= 59):
            raise ValueError(f"no clock shows {self.hours}:{self.minutes:02}:{self.seconds:02}")

    @property
    def total_seconds(self) -> int:
        """The time shown, in whole seconds."""
        return self.hours * 3600 + self.minutes * 60 + self.seconds


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockTimes:
    """BWTIME 0x8D in its clock-times form (docs/protocol.md §7.1, §7.2).

    Attributes:
        right: the side in message bytes 3–5.
        left: the side in message bytes 6–8.
        status: the status byte (byte 9), decoded by the properties below.
    """

    right: ClockFace
    left: ClockFace
    status: int

    def __post_init__(self) -> None:
        check_range("status", self.status, 0, 0x7F)

    @property
    def running(self) -> bool:
        """D0: the clock is running (0 = stopped, or blocked after a flag fall)."""
        return bool(self.status & 0x01)

    @property
    def right_high(self) -> bool:
        """D1: the lever is up on the right side (else on the left)."""
        return bool(self.status & 0x02)

    @property
    def battery_low(self) -> bool:
        """D2: the clock shows its battery-low indicator."""
        return bool(self.status & 0x04)

    @property
    def left_turn(self) -> bool:
        """D3: turn bit of the left side (bytes 6–8), as the real recordings show (§7.2)."""
        return bool(self.status & 0x08)

    @property
    def right_turn(self) -> bool:
        """D4: turn bit of the right side (bytes 3–5), as the real recordings show (§7.2)."""
        return bool(self.status & 0x10)

    @property
    def no_clock(self) -> bool:
        """D5: no clock is cabled to the board; the times are invalid (§7.2)."""
        return bool(self.status & 0x20)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockAck:
    """BWTIME 0x8D in its clock-ack form: four ack bytes (docs/protocol.md §7.1, §7.3).

    Attributes:
        ack0: 0x10 normal ack, 0x40 error, anything else treated as error.
        ack1: id of the acked clock command (< 0x80) or an auto-generated ack (≥ 0x80).
        ack2: for a version ack, major version in the high nibble, minor in the low.
        ack3: for a button ack (ack1 = 0x88), the button code 0x31–0x35.
    """

    ack0: int
    ack1: int
    ack2: int
    ack3: int

    def __post_init__(self) -> None:
        for name in ("ack0", "ack1", "ack2", "ack3"):
            check_range(name, getattr(self, name), 0, 0xFF)

    @property
    def is_error(self) -> bool:
        """The clock refused the command: ack0 is not the normal 0x10 (§7.3)."""
        return self.ack0 != 0x10

    @property
    def is_auto(self) -> bool:
        """Generated by the clock itself (ack1 ≥ 0x80), not a reply to a command."""
        return self.ack1 >= 0x80

    @property
    def command(self) -> int | None:
        """The id of the acked clock command (e.g. 0x0A SetNRun), None for auto acks."""
        return None if self.is_auto else self.ack1

    @property
    def version(self) -> tuple[int, int] | None:
        """(major, minor) of the clock firmware for a version ack (ack1 = 0x09)."""
        if self.ack1 != 0x09:
            return None
        return self.ack2 >> 4, self.ack2 & 0x0F

    @property
    def button(self) -> int | None:
        """The pressed button code for a button ack (ack1 = 0x88), else None."""
        return self.ack3 if self.ack1 == 0x88 else None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockNull:
    """An all-zero BWTIME payload, sent by Bluetooth boards after a clock command (§7.1).

    It carries no reading; users should ignore it.
    """


# --- identity and status -------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SerialNumber:
    """SERIALNR 0x91: the serial number as sent (5 digits, maybe more; §4)."""

    text: str

    def __post_init__(self) -> None:
        check_text("text", self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class LongSerialNumber:
    """LONG_SERIALNR 0xA2: 10 ASCII characters, last is least significant (§4)."""

    text: str

    def __post_init__(self) -> None:
        check_text("text", self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class Trademark:
    """TRADEMARK 0x92: the board's trademark text (§4)."""

    text: str

    def __post_init__(self) -> None:
        check_text("text", self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class BusAddress:
    """BUSADRES 0x90: the 14-bit bus address (binary value of the decimal serial, §4)."""

    address: int

    def __post_init__(self) -> None:
        check_range("address", self.address, 0, 0x3FFF)


@dataclass(frozen=True, slots=True, kw_only=True)
class Version:
    """VERSION 0x93: board firmware version, e.g. major 1, minor 2 = "1.02" (§4)."""

    major: int
    minor: int

    def __post_init__(self) -> None:
        check_range("major", self.major, 0, 0x7F)
        check_range("minor", self.minor, 0, 0x7F)


_BATTERY_FIELDS = (
    "time_left_hours",
    "time_left_minutes",
    "on_hours",
    "on_minutes",
    "standby_days",
    "standby_hours",
    "standby_minutes",
    "status",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class BatteryStatus:
    """BATTERY_STATUS 0xA0 of Bluetooth boards (docs/protocol.md §4.1).

    The documented length is inconsistent (7 or 12 bytes), so the payload length comes
    from the header: fields the board did not send are None, bytes beyond the nine
    documented ones are kept in ``extra``. 0x7F in a time field means "not available".
    """

    percent: int
    time_left_hours: int | None = None
    time_left_minutes: int | None = None
    on_hours: int | None = None
    on_minutes: int | None = None
    standby_days: int | None = None
    standby_hours: int | None = None
    standby_minutes: int | None = None
    status: int | None = None
    extra: bytes = b""

    def __post_init__(self) -> None:
        check_range("percent", self.percent, 0, 0x7F)
        missing = False
        for name in _BATTERY_FIELDS:
            value = getattr(self, name)
            if value is None:
                missing = True
            elif missing:
                raise ValueError(f"{name} given after a missing field: fields come in order")
            else:
                check_range(name, value, 0, 0x7F)
        if self.extra and missing:
            raise ValueError("extra bytes follow the nine documented fields")
        check_7bit("extra", self.extra)

    @property
    def values(self) -> tuple[int, ...]:
        """The fields the board sent, in wire order (percent first)."""
        fields = (getattr(self, name) for name in _BATTERY_FIELDS)
        return (self.percent, *(value for value in fields if value is not None))

    @property
    def charging(self) -> bool:
        """Status bit 0: the battery is charging."""
        return bool((self.status or 0) & 0x01)

    @property
    def discharging(self) -> bool:
        """Status bit 1: the battery is discharging."""
        return bool((self.status or 0) & 0x02)


# --- EEPROM stream (§6) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class EEMoves:
    """EE_MOVES 0x8F: the board's EEPROM log, oldest first, ending with EE_EOF (§6).

    Build it with :meth:`from_raw` or :meth:`from_records`; the two fields always agree.

    Attributes:
        records: the parsed records.
        raw: the payload as received (about 7936 bytes on current boards).
    """

    records: tuple[EERecord, ...]
    raw: bytes

    def __post_init__(self) -> None:
        check_7bit("raw", self.raw)
        if b"".join(record.to_bytes() for record in self.records) != self.raw:
            raise ValueError("records do not re-encode to raw")

    @classmethod
    def from_raw(cls, raw: bytes) -> EEMoves:
        """Parse an EEPROM stream (its records re-encode to ``raw`` by construction:
        not checked again, a read's ~8,000 bytes)."""
        check_7bit("raw", raw)
        moves = object.__new__(cls)
        object.__setattr__(moves, "records", parse_ee_records(raw))
        object.__setattr__(moves, "raw", raw)
        return moves

    @classmethod
    def from_records(cls, records: tuple[EERecord, ...]) -> EEMoves:
        """Assemble an EEPROM stream from records."""
        return cls(records=records, raw=b"".join(record.to_bytes() for record in records))


# --- anything else -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownMessage:
    """A well-framed message whose id no table documents (e.g. bus-mode replies)."""

    message_id: int
    payload: bytes

    def __post_init__(self) -> None:
        check_range("message_id", self.message_id, 0x80, 0xFF)
        check_7bit("payload", self.payload)


class ViolationReason(enum.StrEnum):
    """Why bytes could not become an event or a command (docs/protocol.md §2)."""

    # board → PC (§2.2)
    GARBAGE = "garbage"  # bytes with MSB 0 where a message id was expected
    TRUNCATED = "truncated"  # a frame cut short by a byte with MSB set
    BAD_LENGTH = "bad-length"  # a header whose length is < 3 or absurdly large
    BAD_PAYLOAD = "bad-payload"  # a whole frame whose content does not fit its id
    # PC → board, seen by the board's side (§3, §7.5)
    UNKNOWN_COMMAND = "unknown-command"  # a byte that is no command we know
    BAD_COMMAND = "bad-command"  # a 0x2B / 0x60 message with a wrong layout or value


@dataclass(frozen=True, slots=True, kw_only=True)
class ProtocolViolation:
    """Bytes that broke the framing or the message layout; data, never an exception.

    Attributes:
        reason: a :class:`ViolationReason` value (a plain string).
        data: the offending bytes (skipped garbage, the cut-off frame, the bad header).
    """

    reason: str
    data: bytes

    def __post_init__(self) -> None:
        if not self.reason:
            raise ValueError("a violation needs a reason")


Event = (
    BoardDump
    | FieldUpdated
    | ClockTimes
    | ClockAck
    | ClockNull
    | SerialNumber
    | LongSerialNumber
    | BusAddress
    | Trademark
    | Version
    | BatteryStatus
    | EEMoves
    | DraughtsDump
    | UnknownMessage
    | ProtocolViolation
)

#: An event and the loop time its last byte arrived at.
TimedEvent = tuple[float, Event]
