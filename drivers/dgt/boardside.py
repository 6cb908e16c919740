"""The board's side of the DGT wire: events to bytes, command bytes to commands.

The emulator (drivers/emulator) and the tests play the board with this module; it is the
exact inverse of :mod:`drivers.dgt.protocol` and :mod:`drivers.dgt.commands`:
``decode_message(encode_event(event)) == event`` and parsing ``encode(command)`` with
:class:`CommandParser` gives ``command`` back.

PC → board bytes have no framing marks (docs/protocol.md §2.1): a command is one byte, or
0x60 / 0x2B followed by a size byte counting the bytes after it. Bytes that are no known
command (including bus-mode bytes ≥ 0x80, the boot loader 0x4E and the persistent
draughts scans) become one :class:`ProtocolViolation` each; nothing raises on peer data.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Final, Literal

from base.drain import drain
from drivers.dgt.commands import (
    CLOCK_COMMAND_IDS,
    CLOCK_MESSAGE,
    SINGLE_BYTE_COMMANDS,
    ClockAscii,
    ClockBeep,
    ClockButton,
    ClockCommand,
    ClockDisplay,
    ClockEnd,
    ClockIcons,
    ClockRev2Ascii,
    ClockSetAndRun,
    ClockVersion,
    Command,
    SetLeds,
    SingleByteCommand,
)
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
from drivers.dgt.protocol import MessageId

__all__ = ["CommandParser", "encode_event", "frame_message"]

_SET_LEDS: Final = 0x60
_MAX_CLOCK_SIZE: Final = 0x0F  # REV2 ASCII, the longest clock message (§7.5)


def frame_message(message_id: int, payload: bytes) -> bytes:
    """Prefix ``payload`` with the 3-byte header: id, total length in two 7-bit bytes (§2.2)."""
    length = len(payload) + 3
    if not 0x80 <= message_id <= 0xFF or length > 0x3FFF:
        raise ValueError(f"cannot frame id {message_id:#x} with {len(payload)} payload bytes")
    return bytes((message_id, length >> 7, length & 0x7F)) + payload


# --- events → bytes --------------------------------------------------------------------------


def _to_bcd(value: int) -> int:
    return (value // 10) << 4 | value % 10


def _face_bytes(face: ClockFace) -> tuple[int, int, int]:
    flags = face.flag_fallen << 4 | face.time_per_move << 5 | face.flag_shown << 6
    return face.hours | flags, _to_bcd(face.minutes), _to_bcd(face.seconds)


def _ack_bytes(ack: ClockAck) -> bytes:
    """Hide each ack byte's MSB in bits 4/5 of p0 and p3, whose low nibble is 0xA (§7.3)."""
    p0 = 0x0A | (ack.ack2 & 0x80) >> 3 | (ack.ack3 & 0x80) >> 2
    p3 = 0x0A | (ack.ack0 & 0x80) >> 3 | (ack.ack1 & 0x80) >> 2
    low = (ack.ack0 & 0x7F, ack.ack1 & 0x7F, ack.ack2 & 0x7F, ack.ack3 & 0x7F)
    return bytes((p0, low[0], low[1], p3, low[2], low[3], 0x00))


@functools.singledispatch
def _message(event: Event) -> tuple[int, bytes]:
    raise TypeError(f"not a DGT event: {event!r}")


@_message.register
def _(event: BoardDump) -> tuple[int, bytes]:
    return MessageId.BOARD_DUMP, bytes(event.squares)


@_message.register
def _(event: FieldUpdated) -> tuple[int, bytes]:
    return MessageId.FIELD_UPDATE, bytes((event.field, event.piece))


@_message.register
def _(event: ClockTimes) -> tuple[int, bytes]:
    payload = (*_face_bytes(event.right), *_face_bytes(event.left), event.status)
    return MessageId.BWTIME, bytes(payload)


@_message.register
def _(event: ClockAck) -> tuple[int, bytes]:
    return MessageId.BWTIME, _ack_bytes(event)


@_message.register
def _(event: ClockNull) -> tuple[int, bytes]:
    return MessageId.BWTIME, bytes(7)


@_message.register
def _(event: SerialNumber) -> tuple[int, bytes]:
    return MessageId.SERIALNR, event.text.encode("ascii")


@_message.register
def _(event: LongSerialNumber) -> tuple[int, bytes]:
    return MessageId.LONG_SERIALNR, event.text.encode("ascii")


@_message.register
def _(event: Trademark) -> tuple[int, bytes]:
    return MessageId.TRADEMARK, event.text.encode("ascii")


@_message.register
def _(event: BusAddress) -> tuple[int, bytes]:
    return MessageId.BUSADRES, bytes((event.address >> 7, event.address & 0x7F))


@_message.register
def _(event: Version) -> tuple[int, bytes]:
    return MessageId.VERSION, bytes((event.major, event.minor))


@_message.register
def _(event: BatteryStatus) -> tuple[int, bytes]:
    return MessageId.BATTERY_STATUS, bytes(event.values) + event.extra


@_message.register
def _(event: EEMoves) -> tuple[int, bytes]:
    return MessageId.EE_MOVES, event.raw


@_message.register
def _(event: DraughtsDump) -> tuple[int, bytes]:
    message_id = MessageId.BOARD_DUMP_50B if event.kind == "50B" else MessageId.BOARD_DUMP_50W
    return message_id, bytes(event.squares)


@_message.register
def _(event: UnknownMessage) -> tuple[int, bytes]:
    return event.message_id, event.payload


def encode_event(event: Event) -> bytes:
    """The bytes a board sends for ``event`` (docs/protocol.md §2.2, §4, §6, §7).

    A :class:`ProtocolViolation` encodes to the bytes it reported, so a recorded stream of
    events, faults included, replays byte for byte. A :class:`ClockAck` is sent with
    status byte 0x00, as boards do.
    """
    if isinstance(event, ProtocolViolation):
        return event.data
    message_id, payload = _message(event)
    return frame_message(message_id, payload)


# --- command bytes → commands ----------------------------------------------------------------

_SINGLE: Final[Mapping[int, SingleByteCommand]] = {
    byte: command_type() for command_type, byte in SINGLE_BYTE_COMMANDS.items()
}
_RUNS: Final[Mapping[int, Literal["left", "right", "paused"]]] = {
    0x01: "left",
    0x02: "right",
    0x04: "paused",
}


def _seconds(hours: int, minutes: int, seconds: int) -> int:
    if hours & 0x0F > 9 or minutes > 59 or seconds > 59:
        raise ValueError("SetNRun time out of range")
    return (hours & 0x0F) * 3600 + minutes * 60 + seconds


def _parse_set_and_run(data: bytes) -> ClockSetAndRun:
    """Lh Lm Ls Rh Rm Rs flags, binary; exactly one of the run flags 0x01/0x02/0x04 (§7.5)."""
    left_hours, right_hours, flags = data[0], data[3], data[6]
    run = _RUNS.get(flags & 0x07)
    if run is None or flags & ~0x0F or (left_hours | right_hours) & 0xE0:
        raise ValueError(f"unsupported SetNRun flags {flags:#x}")
    return ClockSetAndRun(
        left_seconds=_seconds(left_hours, data[1], data[2]),
        right_seconds=_seconds(right_hours, data[4], data[5]),
        run=run,
        toggle_on_lever=bool(flags & 0x08),
        left_count_up=bool(left_hours & 0x10),
        right_count_up=bool(right_hours & 0x10),
    )


def _parse_display(data: bytes) -> ClockDisplay:
    """Digits arrive in the order C B A F E D, then icons and beep (0x03 = beep, §7.5)."""
    c, b, a, f, e, d, icons, beep = data
    return ClockDisplay(segments=(a, b, c, d, e, f), icons=icons, beep=bool(beep & 0x02))


def _parse_icons(data: bytes) -> ClockIcons:
    left, right, left_period, right_period, special = data[:5]  # 3 reserved bytes follow
    return ClockIcons(
        left=left,
        right=right,
        left_period=left_period,
        right_period=right_period,
        special=special,
    )


def _parse_text(data: bytes) -> tuple[str, int]:
    if not data[:-1].isascii():
        raise ValueError("clock text must be ASCII")
    return data[:-1].decode("ascii"), data[-1]


def _parse_ascii(data: bytes) -> ClockAscii:
    text, beep = _parse_text(data)
    return ClockAscii(text=text, beep=beep)


def _parse_rev2_ascii(data: bytes) -> ClockRev2Ascii:
    text, beep = _parse_text(data)
    return ClockRev2Ascii(text=text, beep=beep)


# clock command id → (data length, parser), the inverse of ``clock_data()`` (§7.5).
_CLOCK_PARSERS: Final[Mapping[int, tuple[int, Callable[[bytes], ClockCommand]]]] = {
    CLOCK_COMMAND_IDS[ClockDisplay]: (8, _parse_display),
    CLOCK_COMMAND_IDS[ClockIcons]: (8, _parse_icons),
    CLOCK_COMMAND_IDS[ClockEnd]: (0, lambda _: ClockEnd()),
    CLOCK_COMMAND_IDS[ClockButton]: (0, lambda _: ClockButton()),
    CLOCK_COMMAND_IDS[ClockVersion]: (0, lambda _: ClockVersion()),
    CLOCK_COMMAND_IDS[ClockSetAndRun]: (7, _parse_set_and_run),
    CLOCK_COMMAND_IDS[ClockBeep]: (1, lambda data: ClockBeep(duration_ms=data[0] * 64)),
    CLOCK_COMMAND_IDS[ClockAscii]: (9, _parse_ascii),
    CLOCK_COMMAND_IDS[ClockRev2Ascii]: (12, _parse_rev2_ascii),
}


def _parse_clock_message(message: bytes) -> ClockCommand | None:
    """``2B size 03 id data… 00`` → a clock command, None if anything does not fit."""
    if len(message) < 5 or message[2] != 0x03 or message[-1] != 0x00:
        return None
    entry = _CLOCK_PARSERS.get(message[3])
    data = message[4:-1]
    if entry is None or entry[0] != len(data):
        return None
    try:
        return entry[1](data)
    except ValueError:
        return None


def _parse_set_leds(message: bytes) -> SetLeds | None:
    """``60 04 pattern start end 00`` (§11)."""
    if len(message) != 6 or message[-1] != 0x00:
        return None
    try:
        return SetLeds(pattern=message[2], start=message[3], end=message[4])
    except ValueError:
        return None


class CommandParser:
    """Parse the bytes a PC sends to a board into commands (docs/protocol.md §3, §7.5, §11).

    Attributes:
        bytes_received: every byte passed to :meth:`receive_data`.
        violations: :class:`ProtocolViolation` values produced.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._commands: list[Command | ProtocolViolation] = []
        self.bytes_received = 0
        self.violations = 0

    def receive_data(self, data: bytes) -> None:
        """Feed bytes written by the PC; call :meth:`commands_received` next."""
        self.bytes_received += len(data)
        self._buffer += data
        pos = 0
        while pos < len(self._buffer):
            step = self._step(pos)
            if step is None:
                break
            pos = step
        del self._buffer[:pos]

    def commands_received(self) -> list[Command | ProtocolViolation]:
        """Return and forget the commands (and faults) parsed so far, oldest first."""
        return drain(self._commands)

    def _violation(self, reason: ViolationReason, data: bytes) -> None:
        self._commands.append(ProtocolViolation(reason=reason, data=data))
        self.violations += 1

    def _step(self, pos: int) -> int | None:
        """Consume the command at ``pos``; return where to go on, None to wait for bytes."""
        byte = self._buffer[pos]
        single = _SINGLE.get(byte)
        if single is not None:
            self._commands.append(single)
            return pos + 1
        if byte in (CLOCK_MESSAGE, _SET_LEDS):
            return self._sized(pos)
        self._violation(ViolationReason.UNKNOWN_COMMAND, bytes((byte,)))
        return pos + 1

    def _sized(self, pos: int) -> int | None:
        """0x2B / 0x60: a size byte counts the bytes after it."""
        if pos + 2 > len(self._buffer):
            return None
        size = self._buffer[pos + 1]
        if not 3 <= size <= _MAX_CLOCK_SIZE:
            self._violation(ViolationReason.BAD_COMMAND, bytes(self._buffer[pos : pos + 2]))
            return pos + 2
        stop = pos + 2 + size
        if stop > len(self._buffer):
            return None
        message = bytes(self._buffer[pos:stop])
        is_clock = message[0] == CLOCK_MESSAGE
        command = _parse_clock_message(message) if is_clock else _parse_set_leds(message)
        if command is None:
            self._violation(ViolationReason.BAD_COMMAND, message)
        else:
            self._commands.append(command)
        return stop
