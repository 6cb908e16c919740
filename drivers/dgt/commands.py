"""PC → board commands of the DGT protocol, and their encoding (docs/protocol.md §3, §7.5).

Board commands are one byte in 0x40–0x55 (§2.1); the Revelation II LED command 0x60 and the
clock message 0x2B carry more bytes. Clock commands travel wrapped in DGT_CLOCK_MESSAGE::

    2B <size> 03 <clock command id> <data…> 00        size = bytes after the size byte

Deliberately absent: 0x4A (bus mode), 0x4E (jumps to the boot loader) and the persistent
draughts scan modes 0x51/0x53/0x54, none of which a chess broadcast may ever send (§3).
Constructors validate their arguments and raise ValueError on misuse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from drivers.dgt.fields import check_range

__all__ = [
    "CLOCK_COMMAND_IDS",
    "CLOCK_MESSAGE",
    "SEGMENT_FONT",
    "SINGLE_BYTE_COMMANDS",
    "ClockAscii",
    "ClockBeep",
    "ClockButton",
    "ClockCommand",
    "ClockDisplay",
    "ClockEnd",
    "ClockIcons",
    "ClockRev2Ascii",
    "ClockSetAndRun",
    "ClockVersion",
    "Command",
    "RequestBattery",
    "RequestBoard",
    "RequestBusAddress",
    "RequestClock",
    "RequestEEMoves",
    "RequestLongSerialNumber",
    "RequestSerialNumber",
    "RequestTrademark",
    "RequestVersion",
    "Reset",
    "SetLeds",
    "SingleByteCommand",
    "StartUpdate",
    "StartUpdateBoard",
    "StartUpdateNice",
    "encode",
]

#: DGT_CLOCK_MESSAGE, the wrapper byte of every clock command (§7.5).
CLOCK_MESSAGE: Final = 0x2B
_CLOCK_START: Final = 0x03
_CLOCK_END: Final = 0x00
_SET_LEDS: Final = 0x60


# --- single-byte board commands (§3) ---------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Reset:
    """DGT_SEND_RESET 0x40: back to IDLE mode, no automatic updates; no reply."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestClock:
    """DGT_SEND_CLK 0x41: one BWTIME; the mode does not change."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestBoard:
    """DGT_SEND_BRD 0x42: one BOARD_DUMP; the mode does not change."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StartUpdate:
    """DGT_SEND_UPDATE 0x43: FIELD_UPDATEs, and BWTIME at least every second."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StartUpdateBoard:
    """DGT_SEND_UPDATE_BRD 0x44: FIELD_UPDATEs only, no clock."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestSerialNumber:
    """DGT_RETURN_SERIALNR 0x45: SERIALNR (also a handy liveness probe, §12.3)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestBusAddress:
    """DGT_RETURN_BUSADRES 0x46: BUSADRES."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestTrademark:
    """DGT_SEND_TRADEMARK 0x47: TRADEMARK."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestEEMoves:
    """DGT_SEND_EE_MOVES 0x49: EE_MOVES, ~7.9 kB, about 8 s at 9600 baud."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StartUpdateNice:
    """DGT_SEND_UPDATE_NICE 0x4B: FIELD_UPDATEs, and BWTIME only when the clock changed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestBattery:
    """DGT_SEND_BATTERY_STATUS 0x4C: BATTERY_STATUS (Bluetooth boards)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestVersion:
    """DGT_SEND_VERSION 0x4D: VERSION."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestLongSerialNumber:
    """DGT_RETURN_LONG_SERIALNR 0x55: LONG_SERIALNR."""


SingleByteCommand = (
    Reset
    | RequestClock
    | RequestBoard
    | StartUpdate
    | StartUpdateBoard
    | RequestSerialNumber
    | RequestBusAddress
    | RequestTrademark
    | RequestEEMoves
    | StartUpdateNice
    | RequestBattery
    | RequestVersion
    | RequestLongSerialNumber
)

#: The byte of each single-byte command (docs/protocol.md §3).
SINGLE_BYTE_COMMANDS: Final[Mapping[type[SingleByteCommand], int]] = {
    Reset: 0x40,
    RequestClock: 0x41,
    RequestBoard: 0x42,
    StartUpdate: 0x43,
    StartUpdateBoard: 0x44,
    RequestSerialNumber: 0x45,
    RequestBusAddress: 0x46,
    RequestTrademark: 0x47,
    RequestEEMoves: 0x49,
    StartUpdateNice: 0x4B,
    RequestBattery: 0x4C,
    RequestVersion: 0x4D,
    RequestLongSerialNumber: 0x55,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SetLeds:
    """DGT_SET_LEDS 0x60 of the Revelation II: ``60 04 pattern start end 00`` (§11).

    Sending it to another board stalled that board (§11): only use it on a Revelation II.

    Attributes:
        pattern: 0 off, 1 on, 2 auto flags / configuration.
        start / end: DGT fields 0..63; 0x40 with pattern 0 clears every LED.
    """

    pattern: int
    start: int
    end: int

    def __post_init__(self) -> None:
        check_range("pattern", self.pattern, 0, 2)
        check_range("start", self.start, 0, 0x40)
        check_range("end", self.end, 0, 0x40)


# --- clock commands (§7.5) -------------------------------------------------------------------

#: Seven-segment glyphs for :meth:`ClockDisplay.from_text`; bits 0x01 top, 0x02 upper
#: right, 0x04 lower right, 0x08 bottom, 0x10 lower left, 0x20 upper left, 0x40 middle.
SEGMENT_FONT: Final[Mapping[str, int]] = {
    " ": 0x00,
    "-": 0x40,
    "_": 0x08,
    "0": 0x3F,
    "1": 0x06,
    "2": 0x5B,
    "3": 0x4F,
    "4": 0x66,
    "5": 0x6D,
    "6": 0x7D,
    "7": 0x07,
    "8": 0x7F,
    "9": 0x6F,
    "a": 0x77,
    "b": 0x7C,
    "c": 0x39,
    "d": 0x5E,
    "e": 0x79,
    "f": 0x71,
    "g": 0x3D,
    "h": 0x76,
    "i": 0x30,
    "j": 0x1E,
    "l": 0x38,
    "n": 0x54,
    "o": 0x5C,
    "p": 0x73,
    "q": 0x67,
    "r": 0x50,
    "s": 0x6D,
    "t": 0x78,
    "u": 0x3E,
    "y": 0x6E,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockDisplay:
    """DISPLAY 0x01: drive the DGT XL's seven-segment digits (§7.5).

    The XL shows ``1A:BC 1D:EF``; the wire sends the digits in the order C B A F E D.

    Attributes:
        segments: six segment bytes for the digits A, B, C, D, E, F (left to right).
        icons: 0x01 right dot, 0x02 right colon, 0x04 right "1", 0x08 left dot,
            0x10 left colon, 0x20 left "1".
        beep: sound a beep (beep byte 0x03, else 0x01).
    """

    segments: tuple[int, int, int, int, int, int]
    icons: int = 0
    beep: bool = False

    def __post_init__(self) -> None:
        if len(self.segments) != 6:
            raise ValueError("the XL display has six digits")
        for segment in self.segments:
            check_range("segment", segment, 0, 0x7F)
        check_range("icons", self.icons, 0, 0x3F)

    @classmethod
    def from_text(cls, text: str, *, icons: int = 0, beep: bool = False) -> ClockDisplay:
        """Spell up to six characters of :data:`SEGMENT_FONT` (case-insensitive)."""
        if len(text) > 6:
            raise ValueError(f"the XL display has six digits, got {text!r}")
        try:
            glyphs = [SEGMENT_FONT[char] for char in text.lower().ljust(6)]
        except KeyError as error:
            raise ValueError(f"no seven-segment glyph for {error.args[0]!r}") from None
        a, b, c, d, e, f = glyphs
        return cls(segments=(a, b, c, d, e, f), icons=icons, beep=beep)

    def clock_data(self) -> bytes:
        """The bytes between the command id and the end byte."""
        a, b, c, d, e, f = self.segments
        return bytes((c, b, a, f, e, d, self.icons, 0x03 if self.beep else 0x01))


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockIcons:
    """ICONS 0x02: set the XL's mode icons and period marks (§7.5, H15 only).

    Attributes:
        left / right: TIME, FISCH, DELAY, HGLASS, UPCNT, BYO, END in bits 0–6.
        left_period / right_period: period 1–5 in bits 0–4, flag in bit 5.
        special: bit0 clear all, bit1 sound, bit2 black-white, bit3 white-black,
            bit4 BAT, bit5 sound, bit6 keep icons after a time change.
    """

    left: int = 0
    right: int = 0
    left_period: int = 0
    right_period: int = 0
    special: int = 0

    def __post_init__(self) -> None:
        check_range("left", self.left, 0, 0x7F)
        check_range("right", self.right, 0, 0x7F)
        check_range("left_period", self.left_period, 0, 0x3F)
        check_range("right_period", self.right_period, 0, 0x3F)
        check_range("special", self.special, 0, 0x7F)

    def clock_data(self) -> bytes:
        """The bytes between the command id and the end byte (3 reserved zeros last)."""
        fields = (self.left, self.right, self.left_period, self.right_period, self.special)
        return bytes((*fields, 0, 0, 0))


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockEnd:
    """END 0x03: back to the normal time display (also sent after SetNRun, §7.5)."""

    def clock_data(self) -> bytes:
        """No data."""
        return b""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockButton:
    """BUTTON 0x08: request the button state (the ack carries none, per H15)."""

    def clock_data(self) -> bytes:
        """No data."""
        return b""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockVersion:
    """VERSION 0x09: the ack carries the clock firmware version in ack2 (§7.3)."""

    def clock_data(self) -> bytes:
        """No data."""
        return b""


_RUN_FLAGS: Final[Mapping[str, int]] = {"left": 0x01, "right": 0x02, "paused": 0x04}
_MAX_CLOCK_SECONDS: Final = 10 * 3600 - 1  # one hours digit on the display


def _hms(seconds: int, count_up: bool) -> tuple[int, int, int]:
    hours, rest = divmod(seconds, 3600)
    return hours | (0x10 if count_up else 0), rest // 60, rest % 60


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockSetAndRun:
    """SETNRUN 0x0A: set both times and start or pause the clock (§7.5, §8).

    Only executed when the clock is in mode 23 (else the ack has ack0 = 0x40). Times
    travel as plain binary hours, minutes, seconds (not BCD).

    Attributes:
        left_seconds / right_seconds: the times to set, 0..35999 (one hours digit).
        run: which side counts (flag 0x01 left, 0x02 right) or 0x04 paused.
        toggle_on_lever: flag 0x08, the lever switches the running side.
        left_count_up / right_count_up: hours byte ORed with 0x10 (not on XL ≤ 1.14).
    """

    left_seconds: int
    right_seconds: int
    run: Literal["left", "right", "paused"]
    toggle_on_lever: bool = False
    left_count_up: bool = False
    right_count_up: bool = False

    def __post_init__(self) -> None:
        check_range("left_seconds", self.left_seconds, 0, _MAX_CLOCK_SECONDS)
        check_range("right_seconds", self.right_seconds, 0, _MAX_CLOCK_SECONDS)
        if self.run not in _RUN_FLAGS:
            raise ValueError(f"run must be 'left', 'right' or 'paused', got {self.run!r}")

    def clock_data(self) -> bytes:
        """Lh Lm Ls Rh Rm Rs flags."""
        flags = _RUN_FLAGS[self.run] | (0x08 if self.toggle_on_lever else 0)
        left = _hms(self.left_seconds, self.left_count_up)
        right = _hms(self.right_seconds, self.right_count_up)
        return bytes((*left, *right, flags))


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockBeep:
    """BEEP 0x0B: beep for a while; the clock counts in 64 ms units (§7.5).

    Attributes:
        duration_ms: a multiple of 64 ms, up to 127 × 64 = 8128 ms.
    """

    duration_ms: int

    def __post_init__(self) -> None:
        check_range("duration_ms", self.duration_ms, 0, 127 * 64)
        if self.duration_ms % 64:
            raise ValueError(f"duration_ms={self.duration_ms} is not a multiple of 64 ms")

    def clock_data(self) -> bytes:
        """The duration in 64 ms units."""
        return bytes((self.duration_ms // 64,))


def _pad_text(command: ClockAscii | ClockRev2Ascii, width: int) -> None:
    if len(command.text) > width or not all(" " <= char <= "~" for char in command.text):
        raise ValueError(f"text must be at most {width} printable ASCII characters")
    check_range("beep", command.beep, 0, 15)
    object.__setattr__(command, "text", command.text.ljust(width))


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockAscii:
    """ASCII 0x0C: show text on a DGT 3000 (§7.5).

    Attributes:
        text: up to 8 printable characters; padded with spaces to 8 on construction.
        beep: 0 none, else a beep of 62.5 ms + beep/16 s (0–15).
    """

    text: str
    beep: int = 0

    def __post_init__(self) -> None:
        _pad_text(self, 8)

    def clock_data(self) -> bytes:
        """Eight characters, then the beep byte."""
        return self.text.encode("ascii") + bytes((self.beep,))


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockRev2Ascii:
    """REV2 ASCII 0x0D: show text on a Revelation II ≥ fw 3.24 (§7.5, unconfirmed).

    Attributes:
        text: up to 11 printable characters; padded with spaces to 11 on construction.
        beep: as for :class:`ClockAscii`.
    """

    text: str
    beep: int = 0

    def __post_init__(self) -> None:
        _pad_text(self, 11)

    def clock_data(self) -> bytes:
        """Eleven characters, then the beep byte."""
        return self.text.encode("ascii") + bytes((self.beep,))


ClockCommand = (
    ClockDisplay
    | ClockIcons
    | ClockEnd
    | ClockButton
    | ClockVersion
    | ClockSetAndRun
    | ClockBeep
    | ClockAscii
    | ClockRev2Ascii
)

#: The clock command id of each clock command; a :class:`ClockAck` names it in ack1.
CLOCK_COMMAND_IDS: Final[Mapping[type[ClockCommand], int]] = {
    ClockDisplay: 0x01,
    ClockIcons: 0x02,
    ClockEnd: 0x03,
    ClockButton: 0x08,
    ClockVersion: 0x09,
    ClockSetAndRun: 0x0A,
    ClockBeep: 0x0B,
    ClockAscii: 0x0C,
    ClockRev2Ascii: 0x0D,
}

_CLOCK_COMMAND_TYPES = (
    ClockDisplay,
    ClockIcons,
    ClockEnd,
    ClockButton,
    ClockVersion,
    ClockSetAndRun,
    ClockBeep,
    ClockAscii,
    ClockRev2Ascii,
)

Command = SingleByteCommand | SetLeds | ClockCommand


def encode(command: Command) -> bytes:
    """The bytes that make the board (or its clock) execute ``command`` (§3, §7.5, §11)."""
    if isinstance(command, SetLeds):
        return bytes((_SET_LEDS, 0x04, command.pattern, command.start, command.end, 0x00))
    if isinstance(command, _CLOCK_COMMAND_TYPES):
        data = command.clock_data()
        clock_id = CLOCK_COMMAND_IDS[type(command)]
        return bytes((CLOCK_MESSAGE, len(data) + 3, _CLOCK_START, clock_id, *data, _CLOCK_END))
    byte = SINGLE_BYTE_COMMANDS.get(type(command))
    if byte is None:
        raise TypeError(f"not a DGT command: {command!r}")
    return bytes((byte,))
