"""Golden bytes of every board → PC message, fed whole, byte by byte and with junk around.

The golden messages (tests/dgt/golden.py) are the worked examples of docs/protocol.md; the
framing faults follow §2.2.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from drivers.dgt.commands import RequestVersion, StartUpdateNice
from drivers.dgt.events import Event, FieldUpdated, ProtocolViolation, ViolationReason
from drivers.dgt.protocol import DgtProtocol, decode_message
from tests.dgt.golden import MESSAGES

JUNK = b"\x00junk\x7f"
LAST = bytes.fromhex("8e00052401")


def feed(chunks: Iterable[bytes]) -> tuple[DgtProtocol, list[Event]]:
    protocol = DgtProtocol()
    events: list[Event] = []
    for chunk in chunks:
        protocol.receive_data(chunk)
        events += protocol.events_received()
    return protocol, events


def one_by_one(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


@pytest.mark.parametrize(("data", "event"), [g[1:] for g in MESSAGES], ids=[g[0] for g in MESSAGES])
def test_decode_message(data: bytes, event: Event) -> None:
    assert decode_message(data) == event


@pytest.mark.parametrize(("data", "event"), [g[1:] for g in MESSAGES], ids=[g[0] for g in MESSAGES])
def test_fed_whole(data: bytes, event: Event) -> None:
    protocol, events = feed([data])
    assert events == [event]
    assert (protocol.messages_received, protocol.violations) == (1, 0)
    assert (protocol.bytes_received, protocol.bytes_pending) == (len(data), 0)


@pytest.mark.parametrize(("data", "event"), [g[1:] for g in MESSAGES], ids=[g[0] for g in MESSAGES])
def test_fed_one_byte_at_a_time(data: bytes, event: Event) -> None:
    protocol = DgtProtocol()
    for index, chunk in enumerate(one_by_one(data)):
        assert protocol.events_received() == [], f"event before byte {index}"
        protocol.receive_data(chunk)
    assert protocol.events_received() == [event]
    assert protocol.bytes_pending == 0


@pytest.mark.parametrize(("data", "event"), [g[1:] for g in MESSAGES], ids=[g[0] for g in MESSAGES])
@pytest.mark.parametrize("split", [False, True], ids=["whole", "bytewise"])
def test_with_junk_around(data: bytes, event: Event, split: bool) -> None:
    stream = JUNK + data + JUNK + LAST
    protocol, events = feed(one_by_one(stream) if split else [stream])
    garbage = ProtocolViolation(reason=ViolationReason.GARBAGE, data=JUNK)
    assert events == [garbage, event, garbage, FieldUpdated(field=36, piece=1)]
    assert protocol.violations_by_reason == {"garbage": 2}
    assert (protocol.messages_received, protocol.violations) == (2, 2)


def test_events_received_drains() -> None:
    protocol = DgtProtocol()
    protocol.receive_data(LAST + LAST)
    assert len(protocol.events_received()) == 2
    assert protocol.events_received() == []


# --- framing faults (§2.2): data, never exceptions -------------------------------------------

FAULTS: list[tuple[str, bytes, list[Event]]] = [
    (
        "payload-cut-by-header",
        bytes.fromhex("8e000534") + LAST,
        [ProtocolViolation(reason="truncated", data=bytes.fromhex("8e000534"))],
    ),
    (
        "header-cut-by-header",
        bytes.fromhex("8d") + LAST,
        [ProtocolViolation(reason="truncated", data=bytes.fromhex("8d"))],
    ),
    (
        "length-byte-cut-by-header",
        bytes.fromhex("8d00") + LAST,
        [ProtocolViolation(reason="truncated", data=bytes.fromhex("8d00"))],
    ),
    (
        "length-too-small",
        bytes.fromhex("8e0002") + LAST,
        [ProtocolViolation(reason="bad-length", data=bytes.fromhex("8e0002"))],
    ),
    (
        "length-absurd",
        bytes.fromhex("8f7f7f") + LAST,
        [ProtocolViolation(reason="bad-length", data=bytes.fromhex("8f7f7f"))],
    ),
    (
        "field-out-of-range",
        bytes.fromhex("8e00054001") + LAST,
        [ProtocolViolation(reason="bad-payload", data=bytes.fromhex("8e00054001"))],
    ),
    (
        "dump-too-short",
        bytes.fromhex("86000400") + LAST,
        [ProtocolViolation(reason="bad-payload", data=bytes.fromhex("86000400"))],
    ),
    (
        "clock-not-bcd",
        bytes.fromhex("8d000a205a0220030109") + LAST,
        [ProtocolViolation(reason="bad-payload", data=bytes.fromhex("8d000a205a0220030109"))],
    ),
    (
        "clock-hours-nibble-b",
        bytes.fromhex("8d000a2b030220030109") + LAST,
        [ProtocolViolation(reason="bad-payload", data=bytes.fromhex("8d000a2b030220030109"))],
    ),
    (
        "clock-wrong-size",
        bytes.fromhex("8d0009200302200301") + LAST,
        [ProtocolViolation(reason="bad-payload", data=bytes.fromhex("8d0009200302200301"))],
    ),
    (
        "version-wrong-size",
        bytes.fromhex("93000401") + LAST,
        [ProtocolViolation(reason="bad-payload", data=bytes.fromhex("93000401"))],
    ),
    (
        "battery-empty",
        bytes.fromhex("a00003") + LAST,
        [ProtocolViolation(reason="bad-payload", data=bytes.fromhex("a00003"))],
    ),
    (
        "msb-garbage-then-frame",
        bytes.fromhex("ff00ff") + LAST,
        [
            ProtocolViolation(reason="truncated", data=bytes.fromhex("ff00")),
            ProtocolViolation(reason="truncated", data=bytes.fromhex("ff")),
        ],
    ),
]


@pytest.mark.parametrize(("data", "faults"), [f[1:] for f in FAULTS], ids=[f[0] for f in FAULTS])
@pytest.mark.parametrize("split", [False, True], ids=["whole", "bytewise"])
def test_framing_fault(data: bytes, faults: list[Event], split: bool) -> None:
    protocol, events = feed(one_by_one(data) if split else [data])
    assert events == [*faults, FieldUpdated(field=36, piece=1)], "the next frame survives"
    assert protocol.violations == len(faults)
    assert sum(protocol.violations_by_reason.values()) == len(faults)


def test_incomplete_frame_waits() -> None:
    protocol = DgtProtocol()
    protocol.receive_data(bytes.fromhex("8d000a200302"))
    assert protocol.events_received() == []
    assert protocol.bytes_pending == 6
    protocol.receive_data(bytes.fromhex("20030109"))
    assert len(protocol.events_received()) == 1


def test_garbage_waits_for_the_next_header() -> None:
    protocol = DgtProtocol()
    protocol.receive_data(b"abc")
    protocol.receive_data(b"def")
    assert protocol.events_received() == []
    assert protocol.bytes_pending == 6
    protocol.receive_data(LAST)
    assert protocol.events_received()[0] == ProtocolViolation(reason="garbage", data=b"abcdef")


def test_endless_garbage_is_reported_at_max_length() -> None:
    protocol = DgtProtocol(max_length=16)
    protocol.receive_data(b"x" * 10)
    assert protocol.events_received() == []
    protocol.receive_data(b"x" * 10)
    assert protocol.events_received() == [ProtocolViolation(reason="garbage", data=b"x" * 20)]
    assert protocol.bytes_pending == 0


def test_frame_longer_than_max_length_is_refused() -> None:
    _, events = feed([bytes.fromhex("8f3e03")])
    assert events == []  # 7939 bytes are fine by default
    small = DgtProtocol(max_length=67)
    small.receive_data(bytes.fromhex("8f3e03") + LAST)
    assert small.events_received() == [
        ProtocolViolation(reason="bad-length", data=bytes.fromhex("8f3e03")),
        FieldUpdated(field=36, piece=1),
    ]


@pytest.mark.parametrize("max_length", [2, 0x4000])
def test_max_length_is_checked(max_length: int) -> None:
    with pytest.raises(ValueError, match="max_length"):
        DgtProtocol(max_length=max_length)


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (b"", "garbage"),
        (b"\x0e\x00\x05\x34\x00", "garbage"),
        (LAST + LAST, "truncated"),
        (LAST + b"\x00", "bad-length"),
        (LAST[:-1], "bad-length"),
        (bytes.fromhex("8e00054001"), "bad-payload"),
    ],
)
def test_decode_message_refuses_anything_but_one_frame(frame: bytes, reason: str) -> None:
    assert decode_message(frame) == ProtocolViolation(reason=reason, data=frame)


def test_send_encodes_and_counts() -> None:
    protocol = DgtProtocol()
    assert protocol.send(StartUpdateNice()) == b"\x4b"
    assert protocol.send(RequestVersion()) == b"\x4d"
    assert protocol.bytes_sent == 2
