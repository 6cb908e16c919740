"""The spectator feed ``/ws`` with real websocket clients on loopback."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from broadcast.feed.events import state_to_json
from broadcast.feed.hub import Hub
from broadcast.feed.messages import NOT_UNICODE, BoardState, MoveInfo
from broadcast.web.server import BroadcastServer, parse_since
from tests.broadcast.feed_client import FeedModel, RecordingHandler, recv_json, state_after


@dataclasses.dataclass
class Served:
    hub: Hub
    server: BroadcastServer

    def url(self, path: str = "/ws") -> str:
        return f"ws://127.0.0.1:{self.server.port}{path}"


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    hub = Hub(ring_size=8)
    hub.publish_board(state_after(2, 0))
    hub.publish_board(state_after(1, 0))
    async with BroadcastServer(hub, RecordingHandler()) as server:
        yield Served(hub, server)


async def _follow(ws: ClientConnection, model: FeedModel, until_seq: int) -> None:
    while model.seq < until_seq:
        model.apply(await recv_json(ws))


def _expected(hub: Hub) -> dict[int, dict[str, Any]]:
    """What a client should know: the hub's states, clocks as last announced."""
    return {s.board: state_to_json(hub._known[s.board]) for s in hub.states()}


async def test_snapshot_on_connect(served: Served) -> None:
    async with connect(served.url()) as ws:
        snapshot = await recv_json(ws)
    assert snapshot["type"] == "snapshot"
    assert snapshot["seq"] == 2
    assert snapshot["delay"] == 0.0
    assert isinstance(snapshot["server_time"], float)
    assert [b["board"] for b in snapshot["boards"]] == [1, 2]
    assert "pgn" not in snapshot["boards"][0]
    assert snapshot["boards"][0]["white"] == "White 1"


async def test_events_arrive_in_order_and_rebuild_every_board(served: Served) -> None:
    hub = served.hub
    async with connect(served.url()) as ws:
        model = FeedModel()
        model.apply(await recv_json(ws))
        for plies in (1, 2, 5, 3, 4):  # moves, a takeback, more moves
            hub.publish_board(state_after(1, plies))
            hub.publish_board(state_after(2, plies, white_clock=100.0 - plies, running="white"))
            await _follow(ws, model, hub.seq)  # within the ring of 8
        hub.publish_board(state_after(1, 4, result="1-0", result_final=True))
        await _follow(ws, model, hub.seq)
    assert model.seqs == list(range(3, hub.seq + 1))
    assert model.boards == _expected(hub)


async def test_resume_with_since_gets_the_missed_events(served: Served) -> None:
    hub = served.hub
    model = FeedModel()
    async with connect(served.url()) as ws:
        model.apply(await recv_json(ws))
        hub.publish_board(state_after(1, 1))
        await _follow(ws, model, hub.seq)
    hub.publish_board(state_after(1, 2))
    hub.publish_board(state_after(2, 1))
    async with connect(served.url(f"/ws?since={model.seq}")) as ws:
        resumed = await recv_json(ws)
        assert resumed == {"type": "resumed", "since": 3, "seq": 5}
        await _follow(ws, model, hub.seq)
    assert model.snapshots == 1
    assert model.seqs == [3, 4, 5]
    assert model.boards == _expected(hub)


async def test_resume_too_old_gets_a_fresh_snapshot(served: Served) -> None:
    hub = served.hub
    for plies in range(1, 9):
        hub.publish_board(state_after(1, plies))  # the ring of 8 no longer holds seq 1..2
    async with connect(served.url("/ws?since=1")) as ws:
        snapshot = await recv_json(ws)
    assert snapshot["type"] == "snapshot"
    assert snapshot["seq"] == hub.seq == 10
    assert len(snapshot["boards"][0]["moves"]) == 8


async def test_resume_message_on_an_open_connection(served: Served) -> None:
    hub = served.hub
    async with connect(served.url()) as ws:
        await recv_json(ws)
        hub.publish_board(state_after(1, 1))
        hub.publish_board(state_after(1, 2))
        assert [(await recv_json(ws))["seq"] for _ in range(2)] == [3, 4]
        await ws.send(json.dumps({"type": "resume", "since": 2}))
        assert await recv_json(ws) == {"type": "resumed", "since": 2, "seq": 4}
        assert [(await recv_json(ws))["seq"] for _ in range(2)] == [3, 4]
        await ws.send(json.dumps({"type": "resume", "since": 99}))
        assert (await recv_json(ws))["type"] == "snapshot"


async def test_ping_gets_pong(served: Served) -> None:
    async with connect(served.url()) as ws:
        await recv_json(ws)
        await ws.send('{"type":"ping"}')
        pong = await recv_json(ws)
    assert pong["type"] == "pong"
    assert isinstance(pong["server_time"], float)


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("not json", "malformed JSON"),
        ("[" * 3000, "malformed JSON"),  # nested deeper than json's recursion limit
        ("[1, 2]", "spectators may only send resume and ping"),
        ('{"type": "set_result", "board": 1, "result": "1-0"}', "spectators may only send"),
        ('{"type": "ping", "extra": 1}', "spectators may only send"),
        ('{"type": "resume"}', "spectators may only send"),
        ('{"type": "resume", "since": -1}', "since must be a non-negative integer"),
        ('{"type": "resume", "since": true}', "since must be a non-negative integer"),
        ('{"type": "resume", "since": "3"}', "since must be a non-negative integer"),
        ('{"type": "resume", "since": 9007199254740992}', "since must be a non-negative integer"),
        ('{"type": "resume", "since": "\\ud800"}', NOT_UNICODE),
        (b"\x00binary", "send text messages, not binary"),
    ],
)
async def test_bad_messages_get_an_error_and_change_nothing(
    served: Served, message: str | bytes, reason: str
) -> None:
    async with connect(served.url()) as ws:
        await recv_json(ws)
        await ws.send(message)
        error = await recv_json(ws)
        assert error["type"] == "error"
        assert error["reason"].startswith(reason)
        await ws.send('{"type":"ping"}')
        assert (await recv_json(ws))["type"] == "pong"  # still connected, no snapshot


async def test_oversized_message_closes_with_1009(served: Served) -> None:
    async with connect(served.url()) as ws:
        await recv_json(ws)
        await ws.send(json.dumps({"type": "ping", "pad": "x" * 4096}))
        with pytest.raises(ConnectionClosed) as closed:
            await recv_json(ws)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1009


async def test_bad_since_is_refused_at_the_handshake(served: Served) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(served.url("/ws?since=abc")):
            pass
    assert refused.value.response.status_code == 400


def test_parse_since() -> None:
    assert parse_since("/ws") is None
    assert parse_since("/ws?since=0") == 0
    assert parse_since("/ws?x=1&since=17") == 17
    assert parse_since("/ws?since=9007199254740991") == 2**53 - 1
    too_far = ("/ws?since=9007199254740992", "/ws?since=" + "9" * 5000)
    for bad in ("/ws?since=", "/ws?since=-1", "/ws?since=1&since=2", "/ws?since=١", *too_far):
        with pytest.raises(ValueError, match="since"):
            parse_since(bad)


async def test_a_leaving_spectator_is_forgotten(served: Served) -> None:
    async with connect(served.url()) as ws:
        await recv_json(ws)
        assert served.server.spectator_count == 1
        assert served.hub.subscriber_count == 1
    await served.server.close()  # waits for every connection handler to finish
    assert served.server.spectator_count == 0
    assert served.hub.subscriber_count == 0


async def test_closing_the_server_says_going_away(served: Served) -> None:
    async with connect(served.url()) as ws:
        await recv_json(ws)
        await served.server.close()
        with pytest.raises(ConnectionClosed) as closed:
            await recv_json(ws)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1001


# --- A spectator that never reads -------------------------------------------------------


def _long_line(variant: int) -> BoardState:
    """A board whose whole 1000-ply line changes each time: every event is ~50 KB."""
    moves = tuple(MoveInfo(san=f"v{variant}m{k}", uci="e2e4", clock=float(k)) for k in range(1000))
    return BoardState(board=1, moves=moves, last_move="e2e4")


async def test_slow_spectator_is_bounded_and_never_slows_the_others() -> None:
    hub = Hub(ring_size=8)
    hub.publish_board(BoardState(board=1))
    write_limit = 4096
    async with (
        BroadcastServer(hub, RecordingHandler(), write_limit=write_limit) as server,
        connect(f"ws://127.0.0.1:{server.port}/ws", max_queue=1) as slow,
        connect(f"ws://127.0.0.1:{server.port}/ws") as fast,
    ):
        await recv_json(fast)
        biggest = 0
        published = 0

        async def publish_one() -> None:
            nonlocal biggest, published
            hub.publish_board(_long_line(published))
            published += 1
            message = await recv_json(fast)  # the fast one gets each event, in order
            assert message["seq"] == hub.seq
            biggest = max(biggest, len(json.dumps(message)))

        # Until the kernel's socket buffers are full and the slow sender waits ...
        while max(server.spectator_buffers()) == 0:
            assert published < 1000, "the slow spectator's socket never filled"
            await publish_one()
        stalled_at = hub.seq
        # ... and then far beyond the ring.
        for _ in range(20):
            await publish_one()
            assert max(server.spectator_buffers()) <= write_limit + biggest

        model = FeedModel()
        received = 0
        while model.seq < hub.seq:
            model.apply(await recv_json(slow))
            received += 1
    assert model.snapshots == 2  # the first, and one instead of the lost backlog
    assert received < hub.seq - 1  # fewer messages than events: not the whole backlog
    assert received < stalled_at + 20
    assert model.boards == _expected(hub)
