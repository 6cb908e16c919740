"""Property tests of the framing (docs/protocol.md §2.2): splits, garbage, counters."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.dgt.boardside import encode_event
from drivers.dgt.events import Event, ProtocolViolation
from drivers.dgt.protocol import DgtProtocol, decode_message
from tests.dgt.strategies import events

SETTINGS = settings(max_examples=150, deadline=None)


@st.composite
def _cut_frame(draw: st.DrawFn) -> bytes:
    frame = encode_event(draw(events))
    return frame[: draw(st.integers(1, len(frame) - 1))]


_headers = st.builds(
    lambda message_id, high, low: bytes((message_id, high, low)),
    st.integers(0x80, 0xFF),
    st.integers(0, 0x7F),
    st.integers(0, 0x10),
)
#: Noise a real line produces: random bytes, frames cut short, headers with any length.
garbage = st.lists(st.one_of(st.binary(max_size=8), _cut_frame(), _headers), max_size=3).map(
    b"".join
)


def feed(chunks: list[bytes]) -> tuple[DgtProtocol, list[Event]]:
    protocol = DgtProtocol()
    collected: list[Event] = []
    for chunk in chunks:
        protocol.receive_data(chunk)
        collected += protocol.events_received()
    return protocol, collected


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    bounds = [0, *points, len(data)]
    return [data[start:stop] for start, stop in itertools.pairwise(bounds)]


def is_subsequence(wanted: list[Event], seen: list[Event]) -> bool:
    remaining = iter(seen)
    return all(any(event == candidate for candidate in remaining) for event in wanted)


@SETTINGS
@given(st.lists(events, max_size=12), st.lists(st.integers(min_value=0), max_size=30))
def test_random_splits_give_the_same_events(sent: list[Event], cuts: list[int]) -> None:
    stream = b"".join(encode_event(event) for event in sent)
    protocol, received = feed(split(stream, cuts))
    assert received == sent
    assert protocol.messages_received == len(sent)
    assert (protocol.violations, protocol.bytes_pending) == (0, 0)


@SETTINGS
@given(events)
def test_every_event_decodes_from_its_frame(event: Event) -> None:
    assert decode_message(encode_event(event)) == event


@SETTINGS
@given(
    st.lists(st.tuples(garbage, events), max_size=8),
    garbage,
    st.lists(st.integers(min_value=0), max_size=20),
)
def test_garbage_never_raises_and_frames_survive(
    pieces: list[tuple[bytes, Event]], tail: bytes, cuts: list[int]
) -> None:
    stream = b"".join(garbage + encode_event(event) for garbage, event in pieces) + tail
    protocol, received = feed(split(stream, cuts))
    # Every valid frame starts with an MSB byte, which ends whatever the garbage began.
    assert is_subsequence([event for _, event in pieces], received)
    # The result does not depend on how the bytes were cut.
    assert feed([stream])[1] == received
    # Counters add up: each event accounts for its bytes (a violation for the bytes it
    # reports); what is left waits for more.
    violations = [event for event in received if isinstance(event, ProtocolViolation)]
    assert protocol.violations == len(violations) == sum(protocol.violations_by_reason.values())
    assert protocol.messages_received == len(received) - len(violations)
    consumed = sum(len(encode_event(event)) for event in received)
    assert consumed + protocol.bytes_pending == protocol.bytes_received == len(stream)


@SETTINGS
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    protocol, received = feed([data])
    assert protocol.bytes_received == len(data)
    assert all(decode_message(encode_event(e)) == e for e in received if not _violation(e))


def _violation(event: Event) -> bool:
    return isinstance(event, ProtocolViolation)
