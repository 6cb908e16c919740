"""The arbiter channel: strict command parsing, authentication, commands, live alerts."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from broadcast.feed.alerts import Alert, AlertKind
from broadcast.feed.commands import (
    COMMAND_TYPES,
    AcceptPosition,
    AckAlert,
    ArbiterCommand,
    ChooseLine,
    CommandRejected,
    CommandReply,
    ConfirmResult,
    NextRound,
    RebuildFromMemory,
    SetClocks,
    SetResult,
    command_from_json,
    command_to_json,
)
from broadcast.feed.hub import Hub
from broadcast.feed.messages import NOT_UNICODE
from broadcast.web.arbiter_channel import (
    ARBITER_MESSAGE_LIMIT,
    parse_command,
    until_either_ends,
)
from broadcast.web.server import BroadcastServer
from daemon.round.codec import command_from_payload, command_payload
from tests.broadcast.feed_client import RecordingHandler, recv_json, state_after

TOKEN = "s3cret-token"

COMMANDS: list[tuple[dict[str, Any], ArbiterCommand]] = [
    ({"type": "ack_alert", "id": 7}, AckAlert(id=7)),
    ({"type": "set_result", "board": 3, "result": "1-0"}, SetResult(board=3, result="1-0")),
    ({"type": "set_result", "board": 4, "result": "+-"}, SetResult(board=4, result="+-")),
    ({"type": "confirm_result", "board": 3}, ConfirmResult(board=3)),
    ({"type": "accept_position", "board": 12}, AcceptPosition(board=12)),
    ({"type": "rebuild_from_memory", "board": 12}, RebuildFromMemory(board=12)),
    ({"type": "choose_line", "board": 5, "line": 2}, ChooseLine(board=5, line=2)),
    ({"type": "set_clocks"}, SetClocks()),
    ({"type": "set_clocks", "board": 7}, SetClocks(board=7)),
    ({"type": "set_clocks", "section": "U12"}, SetClocks(section="U12")),
    ({"type": "next_round", "section": "", "force": False}, NextRound()),
    ({"type": "next_round", "section": "U12", "force": True}, NextRound(section="U12", force=True)),
]


# --- Parsing -----------------------------------------------------------------------


@pytest.mark.parametrize(("message", "command"), COMMANDS)
def test_every_command_parses(message: dict[str, Any], command: ArbiterCommand) -> None:
    assert parse_command(json.dumps(message)) == (command, None)
    assert parse_command(json.dumps({**message, "ref": "r-1"})) == (command, "r-1")
    assert parse_command(json.dumps({**message, "ref": 42})) == (command, 42)


@pytest.mark.parametrize(
    ("message", "reason", "ref"),
    [
        ("{", "malformed JSON", None),
        ("[" * 3000, "malformed JSON", None),  # deeper than json's recursion limit
        ("[]", "a message must be a JSON object", None),
        ('"ack_alert"', "a message must be a JSON object", None),
        ('{"id": 7}', "unknown message type: None", None),
        ('{"type": "reboot", "ref": 1}', "unknown message type: 'reboot'", 1),
        ('{"type": 5}', "unknown message type: 5", None),
        ('{"type": "ack_alert"}', "missing field for ack_alert: id", None),
        ('{"type": "ack_alert", "id": 7, "x": 1}', "unexpected field(s) for ack_alert: x", None),
        ('{"type": "set_clocks", "seat": 1}', "unexpected field(s) for set_clocks: seat", None),
        ('{"type": "set_clocks", "board": 0}', "'board' must be a positive integer", None),
        ('{"type": "ack_alert", "id": "7", "ref": "a"}', "'id' must be a positive integer", "a"),
        ('{"type": "confirm_result", "board": true}', "'board' must be a positive integer", None),
        ('{"type": "confirm_result", "board": 0}', "'board' must be a positive integer", None),
        ('{"type": "confirm_result", "board": 1.0}', "'board' must be a positive integer", None),
        ('{"type": "set_result", "board": 1}', "missing field for set_result: result", None),
        ('{"type": "set_result", "board": 1, "result": 1}', "'result' must be a string", None),
        ('{"type": "set_result", "board": 1, "result": "2-0"}', "result must be one of", None),
        ('{"type": "set_clocks", "ref": [1]}', "'ref' must be a string", None),
        (
            '{"type": "next_round", "force": "yes"}',
            "'force': Input should be a valid boolean",
            None,
        ),
        ('{"type": "set_clocks", "ref": true}', "'ref' must be a string", None),
        ('{"type": "set_clocks", "ref": "' + "r" * 101 + '"}', "'ref' must be a string", None),
        ('{"type": "set_clocks", "ref": 1' + "0" * 30 + "}", "'ref' must be a string", None),
        # every field within its range and every string valid Unicode, at parsing
        (
            '{"type": "set_result", "board": 1' + "0" * 30 + ', "result": "1-0"}',
            "'board' must be a positive integer up to 9999",
            None,
        ),
        ('{"type": "accept_position", "board": 10000}', "'board' must be a positive", None),
        ('{"type": "choose_line", "board": 1, "line": 1001}', "'line' must be a positive", None),
        ('{"type": "ack_alert", "id": 9007199254740992}', "'id' must be a positive", None),
        ('{"type": "next_round", "section": "\\ud800"}', NOT_UNICODE, None),
        ('{"type": "next_round", "section": "' + "s" * 201 + '"}', "'section' must be at", None),
        ('{"type": "set_clocks", "ref": "\\udfff"}', NOT_UNICODE, None),
        ('{"type\\ud800": "set_clocks"}', NOT_UNICODE, None),
    ],
)
def test_bad_commands_are_rejected_with_a_reason(message: str, reason: str, ref: Any) -> None:
    with pytest.raises(CommandRejected) as rejected:
        parse_command(message)
    assert rejected.value.reason.startswith(reason)
    assert rejected.value.ref == ref


def test_every_command_has_an_example_and_one_codec() -> None:
    assert {type(command) for _, command in COMMANDS} == set(COMMAND_TYPES.values())
    for message, command in COMMANDS:
        assert command_to_json(command) == message
        assert command_from_json(message) == command
        assert command_from_payload(command_payload(command)) == command


def test_binary_and_oversized_are_rejected() -> None:
    with pytest.raises(CommandRejected, match="text messages"):
        parse_command(b'{"type": "set_clocks"}')
    padded = json.dumps({"type": "set_clocks", "pad": "x" * ARBITER_MESSAGE_LIMIT})
    with pytest.raises(CommandRejected, match="too large"):
        parse_command(padded)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 20) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
_FIELDS = st.sampled_from(["type", "id", "board", "result", "ref", "token", "x"])
_TYPES = st.sampled_from([c[0]["type"] for c in COMMANDS] + ["auth", "nope"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_FIELDS, _JSON | _TYPES, max_size=4) | _JSON)
def test_any_json_parses_or_is_rejected(data: Any) -> None:
    try:
        command, _ = parse_command(json.dumps(data))
    except CommandRejected as rejected:
        reason = rejected.reason
    else:
        reason = ""
    if reason:
        return
    assert isinstance(data, dict)
    assert set(data) - {"type", "ref"} == {
        name for name in ("id", "board", "result") if getattr(command, name, None) is not None
    }


# --- Over a real connection ----------------------------------------------------------


@dataclass
class Channel:
    hub: Hub
    handler: RecordingHandler
    server: BroadcastServer

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.server.port}/ws/arbiter"


@pytest.fixture
async def channel() -> AsyncIterator[Channel]:
    hub = Hub()
    hub.publish_board(state_after(1, 2))
    hub.publish_alert(Alert(id=1, kind=AlertKind.FLAG_FALL, board=1, at=1000.0, action="check"))
    offline = Alert(id=2, kind=AlertKind.BOARD_OFFLINE, board=2, at=1001.0)
    hub.publish_alert(offline)
    hub.publish_alert(offline.resolve(1005.0, "the e-board answers again"))
    handler = RecordingHandler()
    async with BroadcastServer(
        hub, handler, arbiter_token=TOKEN, auth_timeout=0.2, command_timeout=0.2
    ) as server:
        yield Channel(hub, handler, server)


async def _authenticated(channel: Channel) -> AsyncIterator[ClientConnection]:
    async with connect(channel.url) as ws:
        await ws.send(json.dumps({"type": "auth", "token": TOKEN}))
        snapshot = await recv_json(ws)
        assert snapshot["type"] == "snapshot"
        yield ws


async def _refused(ws: ClientConnection, reason: str) -> None:
    assert await recv_json(ws) == {"type": "error", "reason": reason}
    with pytest.raises(ConnectionClosed) as closed:
        await recv_json(ws)
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, reason)


async def test_auth_then_snapshot_of_open_and_resolved_alerts(channel: Channel) -> None:
    async with connect(channel.url) as ws:
        await ws.send(json.dumps({"type": "auth", "token": TOKEN}))
        snapshot = await recv_json(ws)
    assert snapshot["type"] == "snapshot"
    assert snapshot["seq"] == channel.hub.seq
    assert [b["board"] for b in snapshot["boards"]] == [1]
    assert snapshot["alerts"] == [
        {
            "type": "alert",
            "id": 1,
            "kind": "flag_fall",
            "board": 1,
            "at": 1000.0,
            "details": {},
            "action": "check",
            "state": "open",
            "acknowledged": False,
            "history": [],
        }
    ]
    (resolved,) = snapshot["resolved"]
    assert (resolved["type"], resolved["id"], resolved["state"]) == ("alert", 2, "resolved")
    assert resolved["history"] == [
        {"step": "resolved", "at": 1005.0, "by": "dgtcast", "note": "the e-board answers again"}
    ]


@pytest.mark.parametrize(
    ("first", "reason"),
    [
        ({"type": "auth", "token": "wrong"}, "bad token"),
        ({"type": "auth", "token": TOKEN[:-1]}, "bad token"),
        ({"type": "auth", "token": 12}, "bad token"),
        ({"type": "auth"}, "authenticate first"),
        ({"type": "auth", "token": TOKEN, "x": 1}, "authenticate first"),
        ({"type": "set_result", "board": 1, "result": "1-0"}, "authenticate first"),
        ({"type": "set_clocks"}, "authenticate first"),
    ],
)
async def test_wrong_first_message_closes_with_1008(
    channel: Channel, first: dict[str, Any], reason: str
) -> None:
    async with connect(channel.url) as ws:
        await ws.send(json.dumps(first))
        await _refused(ws, reason)
    assert channel.handler.received == []


async def test_malformed_first_message_and_silence(channel: Channel) -> None:
    async with connect(channel.url) as ws:
        await ws.send("{not json")
        await _refused(ws, "authenticate first")
    async with connect(channel.url) as ws:
        await _refused(ws, "auth timeout")  # nothing sent within auth_timeout


async def test_disabled_without_a_token() -> None:
    async with (
        BroadcastServer(Hub(), RecordingHandler()) as server,
        connect(f"ws://127.0.0.1:{server.port}/ws/arbiter") as ws,
    ):
        await ws.send(json.dumps({"type": "auth", "token": ""}))
        await _refused(ws, "arbiter channel disabled")


async def test_every_command_round_trip(channel: Channel) -> None:
    async for ws in _authenticated(channel):
        for ref, (message, _) in enumerate(COMMANDS):
            await ws.send(json.dumps({**message, "ref": ref}))
            reply = await recv_json(ws)
            assert reply == {"type": "ok", "ref": ref, "command": message["type"], "details": {}}
        await ws.send(json.dumps({"type": "set_clocks"}))
        assert await recv_json(ws) == {"type": "ok", "command": "set_clocks", "details": {}}
    assert channel.handler.received == [command for _, command in COMMANDS] + [SetClocks()]


async def test_handler_refusal_is_an_error_reply(channel: Channel) -> None:
    channel.handler.reply = CommandReply(ok=False, reason="no such board", details={"board": 9})
    async for ws in _authenticated(channel):
        await ws.send(json.dumps({"type": "confirm_result", "board": 9, "ref": "c"}))
        assert await recv_json(ws) == {
            "type": "error",
            "ref": "c",
            "reason": "no such board",
            "details": {"board": 9},
        }


@pytest.mark.error_log  # the failing handler is logged with its traceback
async def test_handler_that_hangs_or_fails(
    channel: Channel, caplog: pytest.LogCaptureFixture
) -> None:
    channel.handler.gate = asyncio.Event()  # never set: the handler hangs
    async for ws in _authenticated(channel):
        await ws.send(json.dumps({"type": "set_clocks", "ref": 1}))
        reply = await recv_json(ws)
        assert reply == {"type": "error", "ref": 1, "reason": "the daemon did not answer in time"}

        class Broken:
            async def execute(self, command: ArbiterCommand) -> CommandReply:
                raise RuntimeError("bug")

        channel.server.arbiter.handler = Broken()
        with caplog.at_level(logging.ERROR, logger="broadcast.web.arbiter_channel"):
            await ws.send(json.dumps({"type": "set_clocks", "ref": 2}))
            assert await recv_json(ws) == {"type": "error", "ref": 2, "reason": "internal error"}
        assert "failed" in caplog.text


async def test_bad_commands_change_nothing_and_keep_the_channel(channel: Channel) -> None:
    async for ws in _authenticated(channel):
        for message in (
            "{oops",
            '{"type": "set_result", "board": 1, "result": "3-0", "ref": 5}',
            '{"type": "ack_alert", "id": 1, "extra": true}',
            '{"type": "auth", "token": "again"}',
        ):
            await ws.send(message)
            assert (await recv_json(ws))["type"] == "error"
        await ws.send(b"binary")
        assert (await recv_json(ws))["reason"] == "send text messages, not binary"
        await ws.send(json.dumps({"type": "set_clocks", "pad": "x" * ARBITER_MESSAGE_LIMIT}))
        assert (await recv_json(ws))["reason"].startswith("message too large")
        await ws.send(json.dumps({"type": "set_clocks", "ref": "still here"}))
        assert (await recv_json(ws))["type"] == "ok"
    assert channel.handler.received == [SetClocks()]


async def test_huge_message_closes_with_1009(channel: Channel) -> None:
    async for ws in _authenticated(channel):
        await ws.send(json.dumps({"type": "set_clocks", "pad": "x" * 4 * ARBITER_MESSAGE_LIMIT}))
        with pytest.raises(ConnectionClosed) as closed:
            await recv_json(ws)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1009
    assert channel.handler.received == []


async def test_alerts_and_board_events_arrive_live(channel: Channel) -> None:
    hub = channel.hub
    async for ws in _authenticated(channel):
        hub.publish_alert(Alert(id=3, kind=AlertKind.LATE_ARRIVAL, board=1, at=1002.0))
        alert = await recv_json(ws)
        assert (alert["type"], alert["id"], alert["kind"]) == ("alert", 3, "late_arrival")
        first = hub.alert(1)
        assert first is not None
        hub.publish_alert(first.acknowledge(1003.0))
        acked = await recv_json(ws)
        assert (acked["id"], acked["state"], acked["acknowledged"]) == (1, "open", True)
        hub.publish_alert(first.resolve(1004.0, "an arbiter confirmed the result 1-0", "arbiter"))
        resolved = await recv_json(ws)
        assert (resolved["id"], resolved["state"], resolved["history"][-1]["by"]) == (
            1,
            "resolved",
            "arbiter",
        )
        hub.publish_board(state_after(1, 3))
        move = await recv_json(ws)
        assert (move["type"], move["seq"], move["ply"]) == ("move", hub.seq, 2)


# --- The sender/receiver pair of a connection -------------------------------------------


async def test_until_either_ends_cancels_the_other_and_raises_real_errors() -> None:
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    async def closed() -> None:
        raise ConnectionClosed(None, None)

    async def broken() -> None:
        raise RuntimeError("bug in a sender")

    async def quick() -> None:
        return None

    await until_either_ends(forever(), quick())
    assert cancelled.is_set()
    await until_either_ends(closed(), forever())
    with pytest.raises(RuntimeError, match="bug in a sender"):
        await until_either_ends(forever(), broken())


async def test_text_that_is_no_unicode_is_bad_input_never_a_crash(channel: Channel) -> None:
    async with connect(channel.url) as ws:
        await ws.send('{"type": "auth", "token": "\\ud800"}')
        await _refused(ws, NOT_UNICODE)
    assert channel.server.arbiter.throttle.failures("127.0.0.1") == 1, "counted as a guess"
    async for ws in _authenticated(channel):
        await ws.send('{"type": "next_round", "section": "\\ud800", "ref": 1}')
        assert await recv_json(ws) == {"type": "error", "reason": NOT_UNICODE}  # no ref read
        await ws.send(json.dumps({"type": "set_clocks", "ref": 2}))
        reply = await recv_json(ws)
        assert reply == {"type": "ok", "ref": 2, "command": "set_clocks", "details": {}}
    assert channel.handler.received == [SetClocks()]
    async with connect(f"ws://127.0.0.1:{channel.server.port}/ws") as spectator:
        assert (await recv_json(spectator))["type"] == "snapshot"
        await spectator.send('{"type": "resume", "since": "\\udc00"}')
        assert await recv_json(spectator) == {"type": "error", "reason": NOT_UNICODE}
        await spectator.send(json.dumps({"type": "ping"}))
        assert (await recv_json(spectator))["type"] == "pong"
