"""The three real recordings (../shared/data/dgt-recordings) decode exactly as expected.

Each ``*.inbytes`` line is one complete board → PC message in base64 (docs/protocol.md §13);
the ``*.json`` beside it is another driver's decoding of the same message, line by line.
Every message must decode without a protocol violation and agree with that decoding.

About ``no_clock``: the brief warned that the json's ``no_clock`` is inverted in the driver
that wrote it (docs/protocol.md §7.2, D5). The data says otherwise: in all three recordings
the status byte is only ever 0x08/0x09/0x12/0x13, so D5 is never set, the times tick, and
the json says ``"no_clock": false`` on every reading. The json therefore agrees with the
§7.2 meaning (D5 = 1 ⇒ no clock), which is what ``ClockTimes.no_clock`` implements; the
comparison below is direct, and :func:`test_clock_is_connected_throughout` pins the fact.
"""

from __future__ import annotations

import base64
import itertools
import json
from pathlib import Path
from typing import Any

import chess
import pytest

from drivers.dgt.events import BoardDump, ClockFace, ClockTimes, Event, FieldUpdated
from drivers.dgt.observe import PIECES, clock_observation, square_of_field
from drivers.dgt.protocol import DgtProtocol, decode_message
from drivers.observations import ClockSide

# name → (Fischer increment in seconds, base + increment at the start, side White plays on)
RECORDINGS = {
    "1": (2, 3 * 60 + 2, ClockSide.LEFT),
    "2": (2, 3 * 60 + 2, ClockSide.RIGHT),
    "johan": (5, 5 * 60 + 5, ClockSide.LEFT),
}


def frames_of(recordings_dir: Path, name: str) -> list[bytes]:
    lines = (recordings_dir / f"{name}.inbytes").read_text().split()
    return [base64.b64decode(line) for line in lines]


def expected_of(recordings_dir: Path, name: str) -> list[dict[str, Any]]:
    lines = (recordings_dir / f"{name}.json").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def readings_of(recordings_dir: Path, name: str) -> list[ClockTimes]:
    events = (decode_message(frame) for frame in frames_of(recordings_dir, name))
    return [event for event in events if isinstance(event, ClockTimes)]


def symbol(code: int) -> str:
    piece = PIECES.get(code)
    return "." if piece is None else piece.symbol()


def face_as_json(face: ClockFace) -> dict[str, Any]:
    return {
        "hours": face.hours,
        "minutes": face.minutes,
        "seconds": face.seconds,
        "final_flag": face.flag_fallen,
        "flag": face.flag_shown,
        "time_per_move": face.time_per_move,
    }


def as_json(event: Event) -> dict[str, Any]:
    """Our event in the json's vocabulary (fields named in standard orientation)."""
    if isinstance(event, BoardDump):
        return {"board": [symbol(code) for code in event.squares]}
    if isinstance(event, FieldUpdated):
        field = chess.square_name(square_of_field(event.field))
        return {"piece": symbol(event.piece), "field": field}
    assert isinstance(event, ClockTimes), event
    return {
        "left_clock": face_as_json(event.left),
        "right_clock": face_as_json(event.right),
        "clock_running": event.running,
        "right_high": event.right_high,
        "battery_indicator": event.battery_low,
        "left_turn": event.left_turn,
        "right_turn": event.right_turn,
        "no_clock": event.no_clock,
    }


@pytest.mark.parametrize("name", RECORDINGS)
def test_every_message_agrees_with_the_json(recordings_dir: Path, name: str) -> None:
    frames = frames_of(recordings_dir, name)
    expected = expected_of(recordings_dir, name)
    assert len(frames) == len(expected)
    for index, (frame, wanted) in enumerate(zip(frames, expected, strict=True)):
        assert as_json(decode_message(frame)) == wanted, f"{name} message {index}"


@pytest.mark.parametrize("name", RECORDINGS)
@pytest.mark.parametrize("chunk", [1, 64, 0], ids=["bytewise", "64-byte", "whole"])
def test_stream_decodes_without_violations(recordings_dir: Path, name: str, chunk: int) -> None:
    frames = frames_of(recordings_dir, name)
    stream = b"".join(frames)
    protocol = DgtProtocol()
    for start in range(0, len(stream), chunk or len(stream)):
        protocol.receive_data(stream[start : start + (chunk or len(stream))])
    assert protocol.events_received() == [decode_message(frame) for frame in frames]
    assert (protocol.violations, protocol.messages_received) == (0, len(frames))
    assert (protocol.bytes_received, protocol.bytes_pending) == (len(stream), 0)


@pytest.mark.parametrize("name", RECORDINGS)
def test_clock_is_connected_throughout(recordings_dir: Path, name: str) -> None:
    readings = readings_of(recordings_dir, name)
    assert {reading.status for reading in readings} <= {0x08, 0x09, 0x12, 0x13}
    assert all(clock_observation(reading, 0.0).connected for reading in readings)


@pytest.mark.parametrize("name", RECORDINGS)
def test_turn_bits_follow_the_lever(recordings_dir: Path, name: str) -> None:
    # §7.2: the captures decide the D3/D4 conflict: D3 ↔ left side, D4 ↔ right side.
    for reading in readings_of(recordings_dir, name):
        assert reading.left_turn is not reading.right_high
        assert reading.right_turn is reading.right_high


@pytest.mark.parametrize("name", RECORDINGS)
def test_fischer_clock_starts_at_base_plus_increment(recordings_dir: Path, name: str) -> None:
    _, start, _ = RECORDINGS[name]
    first = readings_of(recordings_dir, name)[0]
    assert (first.left.total_seconds, first.right.total_seconds) == (start, start)
    assert first.left.time_per_move
    assert first.right.time_per_move
    assert first.status in (0x08, 0x12), "stopped before the start (§7.2)"


@pytest.mark.parametrize("name", RECORDINGS)
def test_white_runs_first(recordings_dir: Path, name: str) -> None:
    _, _, white = RECORDINGS[name]
    observed = (clock_observation(reading, 0.0) for reading in readings_of(recordings_dir, name))
    first_running = next(observation for observation in observed if observation.running)
    assert first_running.running is white


@pytest.mark.parametrize("name", RECORDINGS)
def test_running_side_ticks_and_lever_adds_increment(recordings_dir: Path, name: str) -> None:
    # §7.4: in UPDATE_NICE every reading differs by exactly one second on the running side;
    # a lever press gives the mover the increment (less a second if one ticked meanwhile).
    increment, _, _ = RECORDINGS[name]
    readings = [clock_observation(reading, 0.0) for reading in readings_of(recordings_dir, name)]
    for before, after in itertools.pairwise(readings):
        if before.running is None or after.running is None:
            continue
        delta = {
            ClockSide.LEFT: after.left_seconds - before.left_seconds,
            ClockSide.RIGHT: after.right_seconds - before.right_seconds,
        }
        other = ClockSide.RIGHT if before.running is ClockSide.LEFT else ClockSide.LEFT
        assert delta[other] == 0
        if after.running is before.running:
            assert delta[before.running] == -1
        else:
            assert increment - 1 <= delta[before.running] <= increment
