"""The public delay through the whole server: spectators and PGN late, arbiters live."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from websockets.asyncio.client import connect

from broadcast.feed.hub import Hub
from broadcast.feed.pgn import game_pgn
from broadcast.web.server import BroadcastServer
from tests.broadcast.feed_client import (
    RecordingHandler,
    http_get,
    recv_json,
    state_after,
)
from tests.hand_clock import HandClock

TOKEN = "t0ken"


@dataclass
class Delayed:
    hub: Hub
    server: BroadcastServer
    clock: HandClock

    def url(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.server.port}{path}"

    def advance(self, seconds: float) -> int:
        """Move the clock; returns how many states that released (the timer may too)."""
        self.clock.now += seconds
        assert self.server.public_delay is not None
        return self.server.public_delay.release_due()


@pytest.fixture
async def delayed() -> AsyncIterator[Delayed]:
    hub = Hub()
    clock = HandClock(5000.0)
    async with BroadcastServer(
        hub, RecordingHandler(), arbiter_token=TOKEN, delay=900.0, clock=clock
    ) as server:
        yield Delayed(hub, server, clock)


async def test_spectators_and_pgn_lag_while_arbiters_are_live(delayed: Delayed) -> None:
    hub, port = delayed.hub, delayed.server.port
    hub.publish_board(state_after(1, 2))
    async with connect(delayed.url("/ws")) as spectator, connect(delayed.url("/ws/arbiter")) as arb:
        await arb.send(json.dumps({"type": "auth", "token": TOKEN}))
        assert [b["board"] for b in (await recv_json(arb))["boards"]] == [1]
        first = await recv_json(spectator)
        assert (first["type"], first["boards"], first["delay"]) == ("snapshot", [], 900.0)
        assert (await http_get(port, "/board/1.pgn")).status == 404

        assert delayed.advance(100.0) == 0
        hub.publish_board(state_after(1, 3))
        move = await recv_json(arb)
        assert (move["type"], move["ply"]) == ("move", 2)  # the arbiter sees it at once

        assert delayed.advance(799.0) == 0
        await spectator.send('{"type":"ping"}')
        assert (await recv_json(spectator))["type"] == "pong"  # and nothing before it
        status = json.loads((await http_get(port, "/status.json")).body)
        assert (status["delay"], status["boards"]) == (900.0, [])

        assert delayed.advance(1.0) == 1  # the first state is now 900 s old, the second 800 s
        announced = await recv_json(spectator)
        assert (announced["type"], len(announced["state"]["moves"])) == ("board", 2)
        pgn = await http_get(port, "/board/1.pgn")
        assert pgn.body.decode() == game_pgn(state_after(1, 2))

        assert delayed.advance(100.0) == 1
        move = await recv_json(spectator)
        assert (move["type"], move["ply"], move["moves"][0]["san"]) == ("move", 2, "Nf3")
        pgn = await http_get(port, "/round.pgn")
        assert pgn.body.decode() == game_pgn(state_after(1, 3))


async def test_delayed_clocks_are_the_readings_of_then(delayed: Delayed) -> None:
    hub = delayed.hub
    hub.publish_board(state_after(1, 2, white_clock=600.0, running="white", clock_at=100.0))
    hub.publish_board(state_after(1, 3, white_clock=590.0, black_clock=600.0, clock_at=110.0))
    assert delayed.advance(900.0) == 2
    async with connect(delayed.url("/ws")) as spectator:
        snapshot = await recv_json(spectator)
    [board] = snapshot["boards"]
    assert (board["white_clock"], board["clock_at"]) == (590.0, 110.0)  # as read, not aged
    public = delayed.server.public_hub.state(1)
    assert public == hub.state(1)


async def test_real_clock_delay_is_never_early() -> None:
    hub = Hub()
    loop = asyncio.get_running_loop()
    async with (
        BroadcastServer(hub, RecordingHandler(), delay=0.1) as server,
        connect(f"ws://127.0.0.1:{server.port}/ws") as spectator,
    ):
        await recv_json(spectator)
        published_at = loop.time()
        hub.publish_board(state_after(1, 1))
        announced = await recv_json(spectator)
        assert loop.time() - published_at >= 0.1
        assert announced["type"] == "board"
