"""Hypothesis strategies for DGT events and commands, shared by the property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from drivers.dgt.commands import (
    SINGLE_BYTE_COMMANDS,
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
    SetLeds,
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
    SerialNumber,
    Trademark,
    UnknownMessage,
    Version,
)
from drivers.dgt.protocol import MessageId

__all__ = ["commands", "events", "seven_bit_bytes"]

_seven_bit = st.integers(0, 0x7F)


def seven_bit_bytes(min_size: int = 0, max_size: int = 40) -> st.SearchStrategy[bytes]:
    """Payload bytes: every byte has MSB 0 (docs/protocol.md §2.2)."""
    return st.lists(_seven_bit, min_size=min_size, max_size=max_size).map(bytes)


def _squares(size: int) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(_seven_bit, min_size=size, max_size=size).map(tuple)


def _ascii(max_size: int) -> st.SearchStrategy[str]:
    return seven_bit_bytes(max_size=max_size).map(lambda data: data.decode("ascii"))


_faces = st.builds(
    ClockFace,
    hours=st.integers(0, 9),
    minutes=st.integers(0, 59),
    seconds=st.integers(0, 59),
    flag_fallen=st.booleans(),
    time_per_move=st.booleans(),
    flag_shown=st.booleans(),
)


def _is_all_zero(times: ClockTimes) -> bool:
    # An all-zero reading is indistinguishable from the null BWTIME (§7.1).
    blank = ClockFace(
        hours=0, minutes=0, seconds=0, flag_fallen=False, time_per_move=False, flag_shown=False
    )
    return times.right == blank and times.left == blank and times.status == 0


@st.composite
def _battery(draw: st.DrawFn) -> BatteryStatus:
    count = draw(st.integers(1, 9))
    values: list[int | None] = [*draw(st.lists(_seven_bit, min_size=count, max_size=count))]
    values += [None] * (9 - count)
    extra = draw(seven_bit_bytes(max_size=4)) if count == 9 else b""
    return BatteryStatus(
        percent=values[0] or 0,
        time_left_hours=values[1],
        time_left_minutes=values[2],
        on_hours=values[3],
        on_minutes=values[4],
        standby_days=values[5],
        standby_hours=values[6],
        standby_minutes=values[7],
        status=values[8],
        extra=extra,
    )


_unknown_ids = st.integers(0x80, 0xFF).filter(lambda value: value not in set(MessageId))

events: st.SearchStrategy[Event] = st.one_of(
    st.builds(BoardDump, squares=_squares(64)),
    st.builds(FieldUpdated, field=st.integers(0, 63), piece=_seven_bit),
    st.builds(ClockTimes, right=_faces, left=_faces, status=_seven_bit).filter(
        lambda times: not _is_all_zero(times)
    ),
    st.builds(
        ClockAck,
        ack0=st.integers(0, 0xFF),
        ack1=st.integers(0, 0xFF),
        ack2=st.integers(0, 0xFF),
        ack3=st.integers(0, 0xFF),
    ),
    st.just(ClockNull()),
    st.builds(SerialNumber, text=_ascii(12)),
    st.builds(LongSerialNumber, text=_ascii(12)),
    st.builds(Trademark, text=_ascii(80)),
    st.builds(BusAddress, address=st.integers(0, 0x3FFF)),
    st.builds(Version, major=_seven_bit, minor=_seven_bit),
    _battery(),
    seven_bit_bytes(max_size=300).map(EEMoves.from_raw),
    st.builds(DraughtsDump, kind=st.sampled_from(["50B", "50W"]), squares=_squares(50)),
    st.builds(UnknownMessage, message_id=_unknown_ids, payload=seven_bit_bytes()),
)

_printable = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=11)
_clock_seconds = st.integers(0, 10 * 3600 - 1)

commands: st.SearchStrategy[Command] = st.one_of(
    st.sampled_from([command_type() for command_type in SINGLE_BYTE_COMMANDS]),
    st.builds(SetLeds, pattern=st.integers(0, 2), start=st.integers(0, 64), end=st.integers(0, 64)),
    st.builds(
        ClockDisplay,
        segments=st.tuples(*[_seven_bit] * 6),
        icons=st.integers(0, 0x3F),
        beep=st.booleans(),
    ),
    st.builds(
        ClockIcons,
        left=_seven_bit,
        right=_seven_bit,
        left_period=st.integers(0, 0x3F),
        right_period=st.integers(0, 0x3F),
        special=_seven_bit,
    ),
    st.sampled_from([ClockEnd(), ClockButton(), ClockVersion()]),
    st.builds(
        ClockSetAndRun,
        left_seconds=_clock_seconds,
        right_seconds=_clock_seconds,
        run=st.sampled_from(["left", "right", "paused"]),
        toggle_on_lever=st.booleans(),
        left_count_up=st.booleans(),
        right_count_up=st.booleans(),
    ),
    st.integers(0, 127).map(lambda units: ClockBeep(duration_ms=units * 64)),
    st.builds(ClockAscii, text=_printable.map(lambda text: text[:8]), beep=st.integers(0, 15)),
    st.builds(ClockRev2Ascii, text=_printable, beep=st.integers(0, 15)),
)
