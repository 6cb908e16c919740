"""The board's side of the wire: events to bytes, PC bytes back to commands."""

from __future__ import annotations

import itertools
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.dgt.boardside import CommandParser, encode_event, frame_message
from drivers.dgt.commands import (
    ClockAscii,
    ClockDisplay,
    ClockEnd,
    Command,
    RequestVersion,
    encode,
)
from drivers.dgt.events import (
    ClockAck,
    ClockFace,
    ClockTimes,
    Event,
    FieldUpdated,
    ProtocolViolation,
)
from drivers.dgt.protocol import decode_message
from tests.dgt.golden import COMMANDS, MESSAGES
from tests.dgt.strategies import commands

PARSED = [(command, bytes.fromhex(wire)) for command, wire in COMMANDS]
IDS = [repr(command) for command, _ in PARSED]
JUNK = bytes.fromhex("00 4e 99")  # no command, the boot loader, a bus-mode byte
JUNK_PARSED = [ProtocolViolation(reason="unknown-command", data=bytes((b,))) for b in JUNK]


def parse(chunks: list[bytes]) -> list[Command | ProtocolViolation]:
    parser = CommandParser()
    parsed: list[Command | ProtocolViolation] = []
    for chunk in chunks:
        parser.receive_data(chunk)
        parsed += parser.commands_received()
    return parsed


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


# --- events → bytes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "event"),
    [g[1:] for g in MESSAGES],
    ids=[g[0] for g in MESSAGES],
)
def test_encode_event_golden(data: bytes, event: Event) -> None:
    assert encode_event(event) == data


def test_every_event_type_has_a_golden_message_and_an_encoder() -> None:
    # A ProtocolViolation is a fault, not a message: it replays the bytes it reported.
    messages = set(get_args(Event)) - {ProtocolViolation}
    assert {type(event) for _, _, event in MESSAGES} == messages
    for _, data, event in MESSAGES:
        assert encode_event(event) == data
        assert decode_message(data) == event


def test_ack_encoding_hides_the_msb_in_bits_4_and_5() -> None:
    # §7.3 inverted: ack0 → p3 bit4, ack1 → p3 bit5, ack2 → p0 bit4, ack3 → p0 bit5.
    ack = ClockAck(ack0=0x90, ack1=0x81, ack2=0xFF, ack3=0x80)
    assert encode_event(ack) == bytes.fromhex("8d000a 3a 10 01 3a 7f 00 00")


def test_all_zero_reading_is_the_null_message() -> None:
    # §7.1: an all-zero BWTIME payload is the "clock null" of BT boards, so a reading of
    # 0:00:00 on both sides with status 0 cannot be told apart from it.
    zero = ClockFace(
        hours=0, minutes=0, seconds=0, flag_fallen=False, time_per_move=False, flag_shown=False
    )
    assert encode_event(ClockTimes(right=zero, left=zero, status=0)) == bytes.fromhex(
        "8d000a 00000000000000"
    )


def test_a_violation_replays_its_bytes() -> None:
    assert encode_event(ProtocolViolation(reason="garbage", data=b"xyz")) == b"xyz"


def test_misuse_raises() -> None:
    with pytest.raises(TypeError):
        encode_event(RequestVersion())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot frame"):
        frame_message(0x8F, bytes(0x3FFD))
    with pytest.raises(ValueError, match="cannot frame"):
        frame_message(0x0E, b"")


# --- bytes → commands ------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "data"), PARSED, ids=IDS)
def test_parse_whole(command: Command, data: bytes) -> None:
    assert parse([data]) == [command]


@pytest.mark.parametrize(("command", "data"), PARSED, ids=IDS)
def test_parse_one_byte_at_a_time(command: Command, data: bytes) -> None:
    parser = CommandParser()
    for chunk in bytewise(data):
        assert parser.commands_received() == []
        parser.receive_data(chunk)
    assert parser.commands_received() == [command]


@pytest.mark.parametrize(("command", "data"), PARSED, ids=IDS)
@pytest.mark.parametrize("split", [False, True], ids=["whole", "bytewise"])
def test_parse_with_junk_around(command: Command, data: bytes, split: bool) -> None:
    stream = JUNK + data + JUNK + b"\x4d"
    parsed = parse(bytewise(stream) if split else [stream])
    assert parsed == [*JUNK_PARSED, command, *JUNK_PARSED, RequestVersion()]


MALFORMED = [
    ("no-start-byte", "2b 03 04 03 00"),
    ("no-end-byte", "2b 03 03 03 01"),
    ("unknown-clock-id", "2b 03 03 07 00"),
    ("data-too-short", "2b 04 03 0a 01 00"),
    ("set-and-run-two-sides", "2b 0a 03 0a 00 03 00 00 03 00 03 00"),
    ("set-and-run-bad-minutes", "2b 0a 03 0a 00 3c 00 00 03 00 01 00"),
    ("set-and-run-ten-hours", "2b 0a 03 0a 0a 00 00 00 03 00 01 00"),
    ("ascii-8-bit", "2b 0c 03 0c 41 42 43 44 45 46 47 c8 00 00"),
    ("ascii-beep-too-long", "2b 0c 03 0c 41 42 43 44 45 46 47 48 10 00"),
    ("led-wrong-size", "60 05 01 00 00 00 00"),
    ("led-no-end-byte", "60 04 01 00 00 01"),
    ("led-bad-pattern", "60 04 07 00 00 00"),
]


@pytest.mark.parametrize("wire", [m[1] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
@pytest.mark.parametrize("split", [False, True], ids=["whole", "bytewise"])
def test_malformed_message_is_one_violation(wire: str, split: bool) -> None:
    data = bytes.fromhex(wire)
    parser = CommandParser()
    for chunk in bytewise(data + b"\x4d") if split else [data + b"\x4d"]:
        parser.receive_data(chunk)
    bad = ProtocolViolation(reason="bad-command", data=data)
    assert parser.commands_received() == [bad, RequestVersion()]
    assert parser.violations == 1
    assert parser.bytes_received == len(data) + 1


@pytest.mark.parametrize("size", [0x00, 0x02, 0x10, 0x7F])
def test_absurd_size_byte_is_skipped(size: int) -> None:
    # Waiting for 127 bytes would stall the board; the longest clock message has 15.
    assert parse([bytes((0x2B, size, 0x4D))]) == [
        ProtocolViolation(reason="bad-command", data=bytes((0x2B, size))),
        RequestVersion(),
    ]


def test_incomplete_clock_message_waits() -> None:
    parser = CommandParser()
    parser.receive_data(bytes.fromhex("2b 03 03 03"))
    assert parser.commands_received() == []
    parser.receive_data(b"\x00")
    assert parser.commands_received() == [ClockEnd()]


def test_display_beep_byte_variants() -> None:
    # 0x03 beeps; H15 sends 0x01 for silence, picochess 0x00 (§7.5).
    silent = bytes.fromhex("2b 0b 03 01 00 00 00 00 00 00 00 00 00")
    assert parse([silent]) == [ClockDisplay(segments=(0,) * 6)]


def test_ascii_text_round_trips_padded() -> None:
    assert parse([encode(ClockAscii(text="e4"))]) == [ClockAscii(text="e4      ")]


@settings(max_examples=200, deadline=None)
@given(st.lists(commands, max_size=10), st.lists(st.integers(min_value=0), max_size=20))
def test_parse_inverts_encode(sent: list[Command], cuts: list[int]) -> None:
    stream = b"".join(encode(command) for command in sent)
    points = sorted({cut % (len(stream) + 1) for cut in cuts})
    bounds = [0, *points, len(stream)]
    chunks = [stream[start:stop] for start, stop in itertools.pairwise(bounds)]
    assert parse(chunks) == sent


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=100))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    parser = CommandParser()
    parser.receive_data(data)
    parsed = parser.commands_received()
    violations = [item for item in parsed if isinstance(item, ProtocolViolation)]
    assert parser.violations == len(violations)
    consumed = sum(
        len(item.data) if isinstance(item, ProtocolViolation) else len(encode(item))
        for item in parsed
    )
    assert consumed <= len(data)


def test_field_update_encoding_matches_the_capture() -> None:
    # §5.2: e2e4 arrives as "e2 emptied" then "e4 white pawn".
    assert encode_event(FieldUpdated(field=52, piece=0)) == bytes.fromhex("8e00053400")
