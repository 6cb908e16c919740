"""The ticking spectator feed: batched frames, one frame per tick, slow ones dropped."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Subprotocol

from broadcast.feed.hub import Hub
from broadcast.web.fanout import FanOut
from broadcast.web.server import BroadcastServer
from tests.broadcast.feed_client import FeedModel, RecordingHandler, state_after
from tests.waiting import wait_until

BATCH = [Subprotocol("dgtcast.batch")]


async def _frames(ws: ClientConnection, model: FeedModel, frames: list[Any]) -> None:
    """Apply every message of every frame; keep the frames as they came."""
    async for text in ws:
        data = json.loads(text)
        frames.append(data)
        for message in data if isinstance(data, list) else [data]:
            model.apply(message)


async def test_a_batch_of_publishes_reaches_a_batch_client_as_one_array() -> None:
    hub = Hub()
    for board in range(1, 9):
        hub.publish_board(state_after(board, 0))
    async with BroadcastServer(hub, RecordingHandler()) as server:
        url = f"ws://127.0.0.1:{server.port}/ws"
        async with connect(url, subprotocols=BATCH) as batch, connect(url) as plain:
            assert batch.subprotocol == "dgtcast.batch"
            assert plain.subprotocol is None
            models, frames = [FeedModel(), FeedModel()], [[], []]  # type: ignore[var-annotated]
            readers = [
                asyncio.create_task(_frames(ws, model, got))
                for ws, model, got in zip((batch, plain), models, frames, strict=True)
            ]
            await wait_until(lambda: all(m.snapshots == 1 for m in models), what="snapshots")
            before = hub.seq
            with hub.batch():  # a group of publishes (a group commit): one tick
                for board in range(1, 9):
                    hub.publish_board(state_after(board, 3))
            await wait_until(lambda: all(m.seq == hub.seq for m in models), what="the moves")
            for reader in readers:
                reader.cancel()
    [snapshot, array] = frames[0]
    assert snapshot["type"] == "snapshot"
    assert [event["seq"] for event in array] == list(range(before + 1, hub.seq + 1))
    assert all(isinstance(frame, dict) for frame in frames[1])  # one event, one message
    assert len(frames[1]) == 1 + hub.seq - before
    assert models[0].boards == models[1].boards


async def test_a_spectator_gets_at_most_one_frame_per_tick_with_every_change() -> None:
    hub = Hub()
    hub.publish_board(state_after(1, 0))
    server = BroadcastServer(hub, RecordingHandler(), frame_interval=3600.0)
    model, frames = FeedModel(), []  # type: ignore[var-annotated]
    async with server, connect(f"ws://127.0.0.1:{server.port}/ws", subprotocols=BATCH) as ws:
        reader = asyncio.create_task(_frames(ws, model, frames))
        await wait_until(lambda: model.snapshots == 1, what="the snapshot")
        hub.publish_board(state_after(1, 1))  # the first tick comes at once
        await wait_until(lambda: model.seq == hub.seq, what="the first move")
        for plies in range(2, 8):  # the next tick is an hour away: held
            hub.publish_board(state_after(1, plies))
            await asyncio.sleep(0)
        assert server.fanout is not None
        assert len(frames) == 2
        server.fanout.tick()  # the hour has passed
        await wait_until(lambda: model.seq == hub.seq, what="every move since")
        reader.cancel()
    assert len(frames) == 3
    assert len(model.boards[1]["moves"]) == 7


async def test_a_spectator_that_stops_reading_is_dropped_and_resumes_with_every_move() -> None:
    hub = Hub(ring_size=64)
    hub.publish_board(state_after(1, 0))
    server = BroadcastServer(hub, RecordingHandler(), write_limit=1024, slow_timeout=0.2)
    async with server:
        url = f"ws://127.0.0.1:{server.port}/ws"
        model = FeedModel()
        # close_timeout: its closing handshake would wait behind all it never read
        stalled = await connect(url, max_queue=1, close_timeout=0.5)
        model.apply(json.loads(await stalled.recv()))  # the snapshot, then nothing
        stalled.transport.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_RCVBUF, 4096
        )
        for conn in server._spectators:  # small kernel buffers: the stalled one fills soon
            conn.transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_SNDBUF, 4096
            )
        assert server.fanout is not None
        plies = 0
        while server.fanout.dropped == 0:
            plies = plies % 8 + 1
            hub.publish_board(state_after(1, plies, white=f"White {hub.seq}"))
            await asyncio.sleep(0.01)
        await stalled.close()
        async with connect(f"{url}?since={model.seq}") as again:
            while model.seq < hub.seq:  # resumed events, or a snapshot if the ring moved on
                model.apply(json.loads(await asyncio.wait_for(again.recv(), 10)))
    assert model.boards[1]["white"] == f"White {hub.seq - 1}"


class SteppingClock:
    """A monotonic clock that moves ``step`` seconds at each reading."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.step = 0.0

    def __call__(self) -> float:
        now = self.now
        self.now += self.step
        return now


async def test_a_costly_tick_spaces_the_next_one_and_a_cheap_one_brings_them_back() -> None:
    hub = Hub()
    clock = SteppingClock()
    fanout = FanOut(hub, interval=0.05, write_limit=65536, tick_share=0.5, clock=clock)
    try:
        clock.step = 30.0  # a tick that took 30 s
        fanout.tick()
        assert fanout.spacing == 60.0  # half the time at most: the next one in 60 s
        clock.now, clock.step = 1030.0, 0.0  # as the tick ended
        ticks = fanout.ticks
        hub.publish_board(state_after(1, 1))
        await asyncio.sleep(0.3)  # six intervals: still waiting for the 60 s
        assert fanout.ticks == ticks
        clock.step = 0.001  # a tick of a millisecond: back to the interval
        fanout.tick()
        assert fanout.spacing == 0.05
        hub.publish_board(state_after(1, 2))
        await wait_until(lambda: fanout.ticks == ticks + 2, what="the next tick")
    finally:
        fanout.close()


async def test_ticks_without_a_share_keep_the_interval_whatever_they_cost() -> None:
    hub = Hub()
    clock = SteppingClock()
    fanout = FanOut(hub, interval=0.05, write_limit=65536, tick_share=None, clock=clock)
    clock.step = 30.0
    fanout.tick()
    fanout.close()
    assert fanout.spacing == 0.05


async def test_a_tick_written_a_few_spectators_at_a_time_reaches_every_one_once() -> None:
    hub = Hub()
    for board in range(1, 4):
        hub.publish_board(state_after(board, 0))
    server = BroadcastServer(hub, RecordingHandler(), frame_interval=0.05)
    server.fanout.slice_size = 2  # five spectators: three iterations of the loop a tick
    async with server:
        url = f"ws://127.0.0.1:{server.port}/ws"
        clients = [await connect(url, subprotocols=BATCH) for _ in range(5)]
        models = [FeedModel() for _ in clients]
        frames: list[list[Any]] = [[] for _ in clients]
        readers = [
            asyncio.create_task(_frames(ws, model, got))
            for ws, model, got in zip(clients, models, frames, strict=True)
        ]
        await wait_until(lambda: all(m.snapshots == 1 for m in models), what="snapshots")
        ticks = server.fanout.ticks
        for plies in range(1, 13):
            hub.publish_board(state_after(plies % 3 + 1, (plies + 2) // 3))
            await asyncio.sleep(0.01)
        await wait_until(lambda: all(m.seq == hub.seq for m in models), what="every move")
        for reader in readers:
            reader.cancel()
        for ws in clients:
            await ws.close()
    ticked = server.fanout.ticks - ticks
    for model, got in zip(models, frames, strict=True):
        assert model.boards == models[0].boards
        assert got[0]["type"] == "snapshot"
        events = [event for frame in got[1:] for event in frame]
        assert [event["seq"] for event in events] == list(range(got[0]["seq"] + 1, hub.seq + 1))
        assert len(got) - 1 <= ticked  # a frame per tick at most
    assert [len(models[0].boards[b]["moves"]) for b in (1, 2, 3)] == [4, 4, 4]
