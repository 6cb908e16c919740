"""The spectator fast path: one frame for every caught-up spectator, the slow ones apart."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
from collections.abc import Callable

from websockets.asyncio.client import ClientConnection, connect

from broadcast.feed.events import state_to_json
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState, MoveInfo
from broadcast.web.server import BroadcastServer
from tests.broadcast.feed_client import FeedModel, RecordingHandler

READERS = 180
SILENT = 20


def _line(variant: int) -> BoardState:
    """A board whose 200-ply line changes each time: every event is about 10 KB."""
    moves = tuple(MoveInfo(san=f"v{variant}m{k}", uci="e2e4", clock=float(k)) for k in range(200))
    return BoardState(board=1, moves=moves, last_move="e2e4")


async def _silent_spectator(port: int) -> asyncio.StreamWriter:
    """A spectator that completes the handshake and then never reads again."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock, limit=1024)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 101")
    return writer


async def _read(ws: ClientConnection, model: FeedModel, changed: asyncio.Condition) -> None:
    async for text in ws:
        assert isinstance(text, str)
        model.apply(json.loads(text))
        async with changed:
            changed.notify_all()


async def _until(changed: asyncio.Condition, done: Callable[[], bool]) -> None:
    async with changed:
        await asyncio.wait_for(changed.wait_for(done), 10)


async def test_readers_get_every_event_in_order_while_silent_ones_stay_bounded() -> None:
    hub = Hub(ring_size=8)
    hub.publish_board(BoardState(board=1))
    write_limit = 4096
    changed = asyncio.Condition()
    models = [FeedModel() for _ in range(READERS)]
    async with BroadcastServer(hub, RecordingHandler(), write_limit=write_limit) as server:
        url = f"ws://127.0.0.1:{server.port}/ws"
        silent = [await _silent_spectator(server.port) for _ in range(SILENT)]
        readers = [await connect(url) for _ in range(READERS)]
        tasks = [
            asyncio.create_task(_read(ws, model, changed))
            for ws, model in zip(readers, models, strict=True)
        ]
        await _until(changed, lambda: all(m.seq == hub.seq for m in models))
        biggest = 0

        async def publish_one(variant: int) -> None:
            nonlocal biggest
            hub.publish_board(_line(variant))
            biggest = max(biggest, len(hub._ring[-1].text.encode()))
            await _until(changed, lambda: all(m.seq == hub.seq for m in models))

        for conn in server._spectators:  # small kernel buffers: the silent ones fill soon
            conn.transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_SNDBUF, 4096
            )
        published = 0
        # Until the silent spectators' sockets are full and their senders wait ...
        while sum(size > 0 for size in server.spectator_buffers()) < SILENT:
            assert published < 500, "the silent spectators' sockets never filled"
            await publish_one(published)
            published += 1
        # ... and then far beyond the ring.
        for variant in range(published, published + 20):
            await publish_one(variant)
            assert max(server.spectator_buffers()) <= write_limit + biggest
        assert server.spectator_count == READERS + SILENT
        for ws in readers:
            await ws.close()
        await asyncio.gather(*tasks)
        for writer in silent:
            writer.close()
    expected = {1: state_to_json(hub._known[1])}
    for model in models:
        assert model.snapshots == 1
        assert model.seqs == list(range(2, hub.seq + 1))
        assert model.boards == expected


def test_advance_moves_only_a_caught_up_cursor() -> None:
    hub = Hub()
    hub.publish_board(BoardState(board=1))
    fresh = hub.subscribe(alerts=False, boards=False)  # a snapshot is pending
    quiet = hub.subscribe(alerts=False, boards=False)
    elsewhere = hub.subscribe(alerts=False, boards=False)
    quiet.receive_nowait()
    elsewhere.receive_nowait()
    resuming = hub.subscribe(since=0, alerts=False, boards=False)
    before = hub.seq
    hub.publish_board(_line(0))
    assert not fresh.advance(before, hub.seq)
    assert not resuming.advance(before, hub.seq)
    assert not elsewhere.advance(before - 1, hub.seq)  # not where its cursor is
    assert elsewhere.has_pending()
    assert quiet.has_pending()
    assert quiet.advance(before, hub.seq)
    assert not quiet.has_pending()  # handed over: nothing left to receive
