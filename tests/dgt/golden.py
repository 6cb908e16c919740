"""Golden bytes from docs/protocol.md, shared by the protocol and board-side tests.

Messages (board → PC) come from the spec's worked examples: §2.2 headers, §4 examples,
§5.2 the first dump and moves of a real capture, §7.2 clock readings, §7.3 the version ack.
Commands (PC → board) come from §3, §7.5 and §11.
"""

from __future__ import annotations

from drivers.dgt.commands import (
    ClockAscii,
    ClockBeep,
    ClockButton,
    ClockDisplay,
    ClockEnd,
    ClockIcons,
    ClockRev2Ascii,
    ClockSetAndRun,
    ClockVersion,
    Command,
    RequestBattery,
    RequestBoard,
    RequestBusAddress,
    RequestClock,
    RequestEEMoves,
    RequestLongSerialNumber,
    RequestSerialNumber,
    RequestTrademark,
    RequestVersion,
    Reset,
    SetLeds,
    StartUpdate,
    StartUpdateBoard,
    StartUpdateNice,
)
from drivers.dgt.eeprom import EEClockTime, EEFieldChange, EETag, EETagCode
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
    SerialNumber,
    Trademark,
    UnknownMessage,
    Version,
)

__all__ = ["COMMANDS", "MESSAGES", "START"]

START = bytes.fromhex(
    "08090a0c0b0a09080707070707070707" + "00" * 32 + "01010101010101010203040605040302"
)


def face(hms: str, *, fallen: bool = False, per_move: bool = True) -> ClockFace:
    hours, minutes, seconds = (int(part) for part in hms.split(":"))
    return ClockFace(
        hours=hours,
        minutes=minutes,
        seconds=seconds,
        flag_fallen=fallen,
        time_per_move=per_move,
        flag_shown=False,
    )


EE_PAYLOAD = bytes.fromhex("6a6f403451246205097331306b")
EE_RECORDS = (
    EETag(tag=EETagCode.POWERUP),
    EETag(tag=EETagCode.BEGIN_POS),
    EEFieldChange(field=52, piece=0),
    EEFieldChange(field=36, piece=1, quick=True),
    EEClockTime(side="right", hours=2, minutes=5, seconds=9),
    EEClockTime(side="left", hours=3, minutes=31, seconds=30),
    EETag(tag=EETagCode.EOF),
)
# A full-size EEPROM dump: 0x1F00 bytes of log, header 8F 3E 03 (§2.2).
BIG_EE_PAYLOAD = EE_PAYLOAD[:-1] * 600 + b"\x7f" * (0x1F00 - 600 * 12 - 1) + b"\x6b"

MESSAGES: list[tuple[str, bytes, Event]] = [
    ("board-dump", bytes.fromhex("860043") + START, BoardDump(squares=tuple(START))),
    ("field-emptied", bytes.fromhex("8e00053400"), FieldUpdated(field=52, piece=0)),
    ("field-pawn", bytes.fromhex("8e00052401"), FieldUpdated(field=36, piece=1)),
    (
        "clock-running-left",
        bytes.fromhex("8d000a20030220030109"),
        ClockTimes(right=face("0:03:02"), left=face("0:03:01"), status=0x09),
    ),
    (
        "clock-flag-fallen-right",
        bytes.fromhex("8d000a30000020001612"),
        ClockTimes(right=face("0:00:00", fallen=True), left=face("0:00:16"), status=0x12),
    ),
    (
        "clock-all-bits",
        bytes.fromhex("8d000a7959594000003f"),
        ClockTimes(
            right=ClockFace(
                hours=9,
                minutes=59,
                seconds=59,
                flag_fallen=True,
                time_per_move=True,
                flag_shown=True,
            ),
            left=ClockFace(
                hours=0,
                minutes=0,
                seconds=0,
                flag_fallen=False,
                time_per_move=False,
                flag_shown=True,
            ),
            status=0x3F,
        ),
    ),
    (
        "clock-ack-version",
        bytes.fromhex("8d000a0a10090a200000"),
        ClockAck(ack0=0x10, ack1=0x09, ack2=0x20, ack3=0x00),
    ),
    (
        "clock-ack-button-auto",
        bytes.fromhex("8d000a0a10082a053300"),
        ClockAck(ack0=0x10, ack1=0x88, ack2=0x05, ack3=0x33),
    ),
    ("clock-null", bytes.fromhex("8d000a00000000000000"), ClockNull()),
    ("serial", bytes.fromhex("910008") + b"12345", SerialNumber(text="12345")),
    ("serial-1998", bytes.fromhex("91000c") + b"12345 1.0", SerialNumber(text="12345 1.0")),
    ("long-serial", bytes.fromhex("a2000d") + b"3.25000123", LongSerialNumber(text="3.25000123")),
    ("trademark", bytes.fromhex("92000f") + b"Digital Game", Trademark(text="Digital Game")),
    ("bus-address", bytes.fromhex("9000050801"), BusAddress(address=1025)),
    ("version", bytes.fromhex("9300050102"), Version(major=1, minor=2)),
    (
        "battery-12",
        bytes.fromhex("a0000c5a7f7f021000030401"),
        BatteryStatus(
            percent=90,
            time_left_hours=0x7F,
            time_left_minutes=0x7F,
            on_hours=2,
            on_minutes=16,
            standby_days=0,
            standby_hours=3,
            standby_minutes=4,
            status=1,
        ),
    ),
    (
        "battery-7",
        bytes.fromhex("a000075a7f7f02"),
        BatteryStatus(percent=90, time_left_hours=0x7F, time_left_minutes=0x7F, on_hours=2),
    ),
    (
        "ee-moves",
        bytes.fromhex("8f0010") + EE_PAYLOAD,
        EEMoves(records=EE_RECORDS, raw=EE_PAYLOAD),
    ),
    ("ee-moves-full", bytes.fromhex("8f3e03") + BIG_EE_PAYLOAD, EEMoves.from_raw(BIG_EE_PAYLOAD)),
    (
        "draughts-50b",
        bytes.fromhex("940035") + bytes(range(50)),
        DraughtsDump(kind="50B", squares=tuple(range(50))),
    ),
    (
        "draughts-50w",
        bytes.fromhex("950035") + bytes(50),
        DraughtsDump(kind="50W", squares=(0,) * 50),
    ),
    (
        "unknown-bus-ping",
        bytes.fromhex("87000608010a"),
        UnknownMessage(message_id=0x87, payload=bytes.fromhex("08010a")),
    ),
]


COMMANDS: list[tuple[Command, str]] = [
    (Reset(), "40"),
    (RequestClock(), "41"),
    (RequestBoard(), "42"),
    (StartUpdate(), "43"),
    (StartUpdateBoard(), "44"),
    (RequestSerialNumber(), "45"),
    (RequestBusAddress(), "46"),
    (RequestTrademark(), "47"),
    (RequestEEMoves(), "49"),
    (StartUpdateNice(), "4b"),
    (RequestBattery(), "4c"),
    (RequestVersion(), "4d"),
    (RequestLongSerialNumber(), "55"),
    # §11: light a move, clear everything.
    (SetLeds(pattern=1, start=12, end=28), "60 04 01 0c 1c 00"),
    (SetLeds(pattern=0, start=0x40, end=0x40), "60 04 00 40 40 00"),
    # §7.5 example frames.
    (ClockEnd(), "2b 03 03 03 00"),
    (ClockVersion(), "2b 03 03 09 00"),
    (ClockButton(), "2b 03 03 08 00"),
    (
        ClockSetAndRun(left_seconds=5400, right_seconds=5400, run="left"),
        "2b 0a 03 0a 01 1e 00 01 1e 00 01 00",
    ),
    (
        ClockSetAndRun(
            left_seconds=3 * 60 + 2,
            right_seconds=2 * 3600 + 59 * 60 + 7,
            run="paused",
            toggle_on_lever=True,
            right_count_up=True,
        ),
        "2b 0a 03 0a 00 03 02 12 3b 07 0c 00",
    ),
    (
        ClockSetAndRun(left_seconds=0, right_seconds=1, run="right"),
        "2b 0a 03 0a 00000000 00 01 02 00",
    ),
    (ClockBeep(duration_ms=1024), "2b 04 03 0b 10 00"),
    (ClockAscii(text="hello", beep=3), "2b 0c 03 0c 68656c6c6f202020 03 00"),
    (ClockRev2Ascii(text="Round 3"), "2b 0f 03 0d 526f756e642033 20202020 00 00"),
    # Digits A..F = 1..6 travel as C B A F E D; icons left colon + right colon; beep 0x03.
    (
        ClockDisplay.from_text("123456", icons=0x12, beep=True),
        "2b 0b 03 01 4f 5b 06 7d 6d 66 12 03 00",
    ),
    (ClockDisplay(segments=(0, 0, 0, 0, 0, 0x40)), "2b 0b 03 01 00 00 00 40 00 00 00 01 00"),
    (
        ClockIcons(left=0x01, right=0x02, left_period=0x01, right_period=0x21, special=0x04),
        "2b 0b 03 02 01 02 01 21 04 00 00 00 00",
    ),
]
