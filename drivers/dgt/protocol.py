"""The DGT board protocol, sans I/O: bytes from the board in, events out; commands to bytes.

Usage (the asyncio link is a short recipe around this)::

    protocol = DgtProtocol()
    transport.write(protocol.send(StartUpdateNice()))
    ...
    protocol.receive_data(chunk)        # whatever the serial port delivered
    for event in protocol.events_received():
        ...

Framing (docs/protocol.md §2.2): every message is ``id`` (MSB set), two 7-bit length bytes
(total length, header included) and a payload whose bytes have MSB 0. The parser trusts
the length bytes; a byte with MSB set inside a header or payload cuts that frame short and
starts a new header; bytes with MSB 0 where an id is expected are skipped up to the next
MSB byte. Each of these faults yields one :class:`~drivers.dgt.events.ProtocolViolation`
event and a counter; peer data never raises. Only misuse raises (ValueError from a bad
constructor argument).
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Callable

from base.drain import drain
from drivers.dgt.commands import Command, encode
from drivers.dgt.events import (
    BatteryStatus,
    BoardDump,
    BusAddress,
    ClockAck,
    ClockFace,
    ClockNull,
    ClockTimes,
    DraughtsDump,
    EEMoves,
    Event,
    FieldUpdated,
    LongSerialNumber,
    ProtocolViolation,
    SerialNumber,
    Trademark,
    UnknownMessage,
    Version,
    ViolationReason,
)

__all__ = [
    "DEFAULT_MAX_LENGTH",
    "DgtProtocol",
    "MessageId",
    "decode_message",
    "decode_payload",
]

#: Longest frame accepted. EE_MOVES is 0x1F03 = 7939 bytes on current boards (§2.2, §4).
DEFAULT_MAX_LENGTH = 8192


class MessageId(enum.IntEnum):
    """Message ids of the board → PC messages, ``0x80 | code`` (docs/protocol.md §4)."""

    BOARD_DUMP = 0x86
    BWTIME = 0x8D
    FIELD_UPDATE = 0x8E
    EE_MOVES = 0x8F
    BUSADRES = 0x90
    SERIALNR = 0x91
    TRADEMARK = 0x92
    VERSION = 0x93
    BOARD_DUMP_50B = 0x94
    BOARD_DUMP_50W = 0x95
    BATTERY_STATUS = 0xA0
    LONG_SERIALNR = 0xA2


_MSB = re.compile(rb"[\x80-\xff]")
_CLOCK_NULL_PAYLOAD = bytes(7)

# Packed BCD byte → value, or -1 for a nibble outside 0-5 / 0-9 (§7.2).
_BCD = tuple(
    (byte >> 4) * 10 + (byte & 0x0F) if byte >> 4 <= 5 and byte & 0x0F <= 9 else -1
    for byte in range(256)
)


# --- payload decoders: payload → event, or None when the payload does not fit its id ---------


def _decode_board_dump(payload: bytes) -> Event | None:
    return BoardDump(squares=tuple(payload)) if len(payload) == 64 else None


# FIELD_UPDATE payloads repeat (64 fields x 128 codes at most): decode each one once.
_FIELD_UPDATES: dict[bytes, FieldUpdated] = {}


def _decode_field_update(payload: bytes) -> Event | None:
    event = _FIELD_UPDATES.get(payload)
    if event is None:
        if len(payload) != 2 or payload[0] > 63:
            return None
        event = _FIELD_UPDATES[payload] = FieldUpdated(field=payload[0], piece=payload[1])
    return event


def _clock_face(first: int, minutes: int, seconds: int) -> ClockFace | None:
    key = first << 16 | minutes << 8 | seconds
    if key in _CLOCK_FACES:
        return _CLOCK_FACES[key]
    hours, minutes, seconds = first & 0x0F, _BCD[minutes], _BCD[seconds]
    face = (
        None
        if hours > 9 or minutes < 0 or seconds < 0
        else ClockFace(
            hours=hours,
            minutes=minutes,
            seconds=seconds,
            flag_fallen=bool(first & 0x10),
            time_per_move=bool(first & 0x20),
            flag_shown=bool(first & 0x40),
        )
    )
    if len(_CLOCK_FACES) < _CLOCK_FACES_KEPT:
        _CLOCK_FACES[key] = face
    return face


#: Faces are frozen: each one decoded is kept (a clock shows each of its times on every
#: board of a round, once a second) and shared, as field updates are, up to a bound.
_CLOCK_FACES: dict[int, ClockFace | None] = {}
_CLOCK_FACES_KEPT = 1 << 16


def _decode_clock_ack(p: bytes) -> ClockAck:
    """Undo the hiding of each ack byte's MSB in bits 4/5 of p0 and p3 (§7.3)."""
    return ClockAck(
        ack0=(p[1] & 0x7F) | (p[3] & 0x10) << 3,
        ack1=(p[2] & 0x7F) | (p[3] & 0x20) << 2,
        ack2=(p[4] & 0x7F) | (p[0] & 0x10) << 3,
        ack3=(p[5] & 0x7F) | (p[0] & 0x20) << 2,
    )


def _decode_bwtime(payload: bytes) -> Event | None:
    """BWTIME: an ack if either hours nibble is 0xA (§7.1), all zero = null, else times."""
    if len(payload) != 7:
        return None
    if payload[0] & 0x0F == 0x0A or payload[3] & 0x0F == 0x0A:
        return _decode_clock_ack(payload)
    if payload == _CLOCK_NULL_PAYLOAD:
        return ClockNull()
    right = _clock_face(payload[0], payload[1], payload[2])
    left = _clock_face(payload[3], payload[4], payload[5])
    if right is None or left is None:
        return None
    return ClockTimes(right=right, left=left, status=payload[6])


def _decode_ee_moves(payload: bytes) -> Event | None:
    return EEMoves.from_raw(payload)


def _decode_bus_address(payload: bytes) -> Event | None:
    return BusAddress(address=payload[0] << 7 | payload[1]) if len(payload) == 2 else None


def _decode_serial(payload: bytes) -> Event | None:
    return SerialNumber(text=payload.decode("ascii"))


def _decode_long_serial(payload: bytes) -> Event | None:
    return LongSerialNumber(text=payload.decode("ascii"))


def _decode_trademark(payload: bytes) -> Event | None:
    return Trademark(text=payload.decode("ascii"))


def _decode_version(payload: bytes) -> Event | None:
    return Version(major=payload[0], minor=payload[1]) if len(payload) == 2 else None


def _decode_draughts_black(payload: bytes) -> Event | None:
    return DraughtsDump(kind="50B", squares=tuple(payload)) if len(payload) == 50 else None


def _decode_draughts_white(payload: bytes) -> Event | None:
    return DraughtsDump(kind="50W", squares=tuple(payload)) if len(payload) == 50 else None


def _decode_battery(payload: bytes) -> Event | None:
    """BATTERY_STATUS: as many §4.1 fields as the header's length carries."""
    if not payload:
        return None
    fields = list(payload[:9]) + [None] * (9 - min(len(payload), 9))
    return BatteryStatus(
        percent=payload[0],
        time_left_hours=fields[1],
        time_left_minutes=fields[2],
        on_hours=fields[3],
        on_minutes=fields[4],
        standby_days=fields[5],
        standby_hours=fields[6],
        standby_minutes=fields[7],
        status=fields[8],
        extra=payload[9:],
    )


_DECODERS: dict[int, Callable[[bytes], Event | None]] = {
    MessageId.BOARD_DUMP: _decode_board_dump,
    MessageId.BWTIME: _decode_bwtime,
    MessageId.FIELD_UPDATE: _decode_field_update,
    MessageId.EE_MOVES: _decode_ee_moves,
    MessageId.BUSADRES: _decode_bus_address,
    MessageId.SERIALNR: _decode_serial,
    MessageId.TRADEMARK: _decode_trademark,
    MessageId.VERSION: _decode_version,
    MessageId.BOARD_DUMP_50B: _decode_draughts_black,
    MessageId.BOARD_DUMP_50W: _decode_draughts_white,
    MessageId.BATTERY_STATUS: _decode_battery,
    MessageId.LONG_SERIALNR: _decode_long_serial,
}


def decode_payload(message_id: int, payload: bytes) -> Event | None:
    """Decode the 7-bit payload of a well-framed message (docs/protocol.md §4–§7).

    Returns:
        The event; :class:`UnknownMessage` for an undocumented id; None when the payload
        does not fit the id (wrong size, a field out of range, non-BCD clock digits).
    """
    decoder = _DECODERS.get(message_id)
    if decoder is None:
        return UnknownMessage(message_id=message_id, payload=payload)
    try:
        return decoder(payload)
    except ValueError:  # a field the event refuses: peer data, not our bug
        return None


def decode_message(frame: bytes) -> Event:
    """Decode one whole frame, header included (e.g. one line of a recording).

    Anything that is not exactly one valid frame becomes a :class:`ProtocolViolation`.
    """
    if len(frame) < 3 or frame[0] < 0x80:
        return ProtocolViolation(reason=ViolationReason.GARBAGE, data=frame)
    if _MSB.search(frame, 1) is not None:
        return ProtocolViolation(reason=ViolationReason.TRUNCATED, data=frame)
    if frame[1] << 7 | frame[2] != len(frame):
        return ProtocolViolation(reason=ViolationReason.BAD_LENGTH, data=frame)
    event = decode_payload(frame[0], frame[3:])
    if event is None:
        return ProtocolViolation(reason=ViolationReason.BAD_PAYLOAD, data=frame)
    return event


class DgtProtocol:
    """Board → PC framing and decoding, PC → board encoding (docs/protocol.md §2).

    Attributes:
        bytes_received: every byte passed to :meth:`receive_data`.
        bytes_sent: every byte returned by :meth:`send`.
        messages_received: frames decoded into events (violations not included).
        violations: :class:`ProtocolViolation` events produced.
        violations_by_reason: the same, counted per reason.
    """

    def __init__(self, *, max_length: int = DEFAULT_MAX_LENGTH) -> None:
        """Create a parser.

        Args:
            max_length: longest frame accepted; a header announcing more is a violation,
                and pending garbage is reported once it grows that long.
        """
        if not 3 <= max_length <= 0x3FFF:
            raise ValueError("max_length must be within 3..16383 (14-bit length field)")
        self._max_length = max_length
        self._buffer = bytearray()
        self._scanned = 0  # buffer[:_scanned] of the pending frame/garbage holds no MSB byte
        self._events: list[Event] = []
        self.bytes_received = 0
        self.bytes_sent = 0
        self.messages_received = 0
        self.violations = 0
        self.violations_by_reason: Counter[str] = Counter()

    @property
    def bytes_pending(self) -> int:
        """Bytes held back: an incomplete frame, or garbage not yet ended by an MSB byte."""
        return len(self._buffer)

    def receive_data(self, data: bytes) -> None:
        """Feed bytes read from the board, in chunks of any size.

        Call :meth:`events_received` next to collect what they completed.
        """
        self.bytes_received += len(data)
        self._buffer += data
        buffer = self._buffer
        end = len(buffer)
        pos = 0
        while pos < end:
            step = self._step(buffer, pos, end)
            if step is None:
                break
            pos = step
        if pos:
            del buffer[:pos]
            self._scanned = max(0, self._scanned - pos)

    def events_received(self) -> list[Event]:
        """Return and forget the events decoded so far, oldest first."""
        return drain(self._events)

    def send(self, command: Command) -> bytes:
        """Return the bytes to write to the board for ``command`` (docs/protocol.md §3)."""
        data = encode(command)
        self.bytes_sent += len(data)
        return data

    # --- framing ------------------------------------------------------------------------

    def _violation(self, reason: ViolationReason, data: bytes) -> None:
        self._events.append(ProtocolViolation(reason=reason, data=data))
        self.violations += 1
        self.violations_by_reason[reason] += 1

    def _step(self, buffer: bytearray, pos: int, end: int) -> int | None:
        """Consume what starts at ``pos``; return where to go on, None to wait for bytes."""
        if buffer[pos] < 0x80:
            return self._skip_garbage(buffer, pos, end)
        if end - pos < 3:
            return self._cut_or_wait(buffer, pos, pos + 1, end)
        high, low = buffer[pos + 1], buffer[pos + 2]
        if (high | low) & 0x80:
            return self._cut_or_wait(buffer, pos, pos + 1, pos + 3)
        length = high << 7 | low
        if length < 3 or length > self._max_length:
            self._violation(ViolationReason.BAD_LENGTH, bytes(buffer[pos : pos + 3]))
            return pos + 3
        stop = pos + length
        if stop > end:
            return self._cut_or_wait(buffer, pos, pos + 3, end)
        cut = _MSB.search(buffer, max(pos + 3, self._scanned), stop)
        self._scanned = 0
        if cut is not None:
            self._violation(ViolationReason.TRUNCATED, bytes(buffer[pos : cut.start()]))
            return cut.start()
        event = decode_payload(buffer[pos], bytes(buffer[pos + 3 : stop]))
        if event is None:
            self._violation(ViolationReason.BAD_PAYLOAD, bytes(buffer[pos:stop]))
        else:
            self._events.append(event)
            self.messages_received += 1
        return stop

    def _cut_or_wait(self, buffer: bytearray, pos: int, start: int, end: int) -> int | None:
        """An incomplete frame at ``pos``: cut it at an MSB byte in ``start:end``, or wait."""
        cut = _MSB.search(buffer, max(start, self._scanned), end)
        if cut is None:
            self._scanned = end
            return None
        self._scanned = 0
        self._violation(ViolationReason.TRUNCATED, bytes(buffer[pos : cut.start()]))
        return cut.start()

    def _skip_garbage(self, buffer: bytearray, pos: int, end: int) -> int | None:
        """Bytes with MSB 0 at ``pos``: report them up to the next MSB byte (§2.2)."""
        found = _MSB.search(buffer, max(pos, self._scanned), end)
        if found is None and end - pos < self._max_length:
            self._scanned = end
            return None
        stop = end if found is None else found.start()
        self._scanned = 0
        self._violation(ViolationReason.GARBAGE, bytes(buffer[pos:stop]))
        return stop
