"""The LiveChess API against hostile clients, over real websocket clients and raw HTTP:
pages of other origins, floods of subscriptions and setups, too many connections, and
text that is no valid Unicode (docs/faults.md, "Hostile clients on the LiveChess API")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import chess
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidMessage, InvalidStatus

from broadcast.feed.hub import Hub
from broadcast.livechess.server import LiveChessServer, LiveChessSettings
from broadcast.web.connection_limits import ConnectionLimits, ConnectionPolicy
from tests.broadcast.feed_client import http_get
from tests.livechess.client import LiveChessClient, board_state
from tests.waiting import wait_until

SERIAL = "10001"


@pytest.fixture
async def server() -> AsyncIterator[LiveChessServer]:
    hub = Hub()
    hub.publish_board(board_state(1, ["e4", "e5"]))
    settings = LiveChessSettings(
        port=0,
        allowed_origins=("https://overlay.example.org",),
        max_feeds=50,
        max_subscribers=60,
        max_setups=4,
    )
    policy = ConnectionPolicy(limits=ConnectionLimits(per_client=5, total=None))
    async with LiveChessServer(hub, settings, policy=policy) as live:
        yield live


def _url(server: LiveChessServer) -> str:
    return f"ws://127.0.0.1:{server.port}/api/v1.0"


async def _client(server: LiveChessServer, **options: object) -> LiveChessClient:
    ws = await connect(_url(server), open_timeout=10, **options)  # type: ignore[arg-type]
    return LiveChessClient(ws)


def _subscribe(feed: int) -> dict[str, object]:
    return {"feed": "eboardevent", "id": feed, "param": {"serialnr": SERIAL}}


@pytest.mark.parametrize(
    "origin",
    [
        None,  # a tool, not a browser
        "https://lichess.org",
        "http://localhost:8000",
        "http://127.0.0.1",
        "http://[::1]:3000",
        "https://overlay.example.org",
    ],
)
async def test_lichess_this_machine_and_allowed_pages_are_served(
    server: LiveChessServer, origin: str | None
) -> None:
    client = await _client(server, origin=origin)
    assert (await client.call("eboards"))["param"][0]["serialnr"] == SERIAL
    await client.ws.close()
    headers = () if origin is None else (f"Origin: {origin}",)
    assert (await http_get(server.port, "/api/v1.0/eboards", *headers)).status == 200


@pytest.mark.parametrize(
    "origin",
    ["https://evil.example", "null", "http://lichess.org", "https://lichess.org.evil.example"],
)
async def test_pages_of_other_origins_are_refused(server: LiveChessServer, origin: str) -> None:
    with pytest.raises(InvalidStatus) as refused:
        await connect(_url(server), origin=origin, open_timeout=10)  # type: ignore[arg-type]
    assert refused.value.response.status_code == 403
    assert b"may not use the LiveChess API" in refused.value.response.body
    answer = await http_get(server.port, "/api/v1.0/eboards", f"Origin: {origin}")
    assert answer.status == 403


async def test_a_board_change_is_taken_outside_the_publishing_call(
    server: LiveChessServer,
) -> None:
    client = await _client(server)
    await client.call("subscribe", _subscribe(1))
    await client.feed_until(1, lambda e: True)
    group = next(iter(server._members))
    version = group.version
    server.hub.publish_board(board_state(1, ["e4", "e5", "Nf3"]))
    assert group.version == version, "publish_board did not run the LiveChess server's work"
    event = await client.feed_until(1, lambda e: e["san"] == ["e4", "e5", "Nf3"])
    assert group.version == version + 1
    assert event["serialnr"] == SERIAL
    await client.ws.close()


async def test_setups_and_subscriptions_are_bounded_per_board_and_connection(
    server: LiveChessServer,
) -> None:
    first, second = await _client(server), await _client(server)
    answers = [await first.call("subscribe", _subscribe(feed)) for feed in range(51)]
    assert [a["response"] for a in answers].count("error") == 1
    assert answers[-1]["param"]["message"] == "at most 50 feeds per connection"
    answers = [await second.call("subscribe", _subscribe(feed)) for feed in range(11)]
    assert answers[-1]["param"]["message"] == "at most 60 subscriptions to one e-board"
    board = chess.Board()
    fens = []
    for move in ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]:
        board.push_san(move)
        fens.append(board.fen())
    setups = []
    for feed, fen in enumerate(fens):
        param = {"id": feed, "method": "setup", "param": {"fen": fen}}
        setups.append(await first.call("call", param))
    assert [a["response"] for a in setups] == ["call"] * 4 + ["error"] * 2
    assert setups[-1]["param"]["message"] == "at most 4 setup positions on one e-board"
    shared = {"id": 20, "method": "setup", "param": {"fen": fens[0]}}
    assert (await first.call("call", shared))["response"] == "call", "a setup in use is shared"
    groups = [g for g in server._members if g.serial == SERIAL]
    assert len({g.setup for g in groups}) == 5  # four setups and the board's own start
    refused = await first.feed_until(5, lambda e: True)
    assert refused["start"] == chess.STARTING_FEN, "a refused setup leaves the feed as it was"
    await first.ws.close()
    await second.ws.close()


async def test_one_address_holds_the_policy_s_share_of_connections(
    server: LiveChessServer,
) -> None:
    clients = [await _client(server) for _ in range(5)]
    with pytest.raises(InvalidMessage):  # closed at once, before any answer
        await connect(_url(server), open_timeout=10)
    other = await _client(server, local_addr=("127.0.0.2", 0))
    assert (await other.call("eboards"))["response"] == "call", "other addresses are served"
    for client in [*clients, other]:
        await client.ws.close()
    await wait_until(lambda: server.client_count == 0, 10, "connections released")
    again = await _client(server)
    assert (await again.call("sources"))["response"] == "call"
    await again.ws.close()


@pytest.mark.parametrize(
    "frame",
    [
        '{"call": "subscribe", "id": 5, "param": {"feed": "eboardevent", "id": 1,'
        ' "param": {"serialnr": "\\ud800"}}}',
        '{"call": "eboards\\udfff", "id": 5}',
        '{"call": "eboards", "id": 100000000000000000000000000000}',
        '{"call": "subscribe", "id": 5, "param": {"feed": "eboardevent", "id": 1,'
        f' "param": {{"serialnr": "{"9" * 200}"}}}}}}',
    ],
)
async def test_unsafe_text_and_numbers_out_of_range_are_answered_as_bad_calls(
    server: LiveChessServer, frame: str
) -> None:
    client = await _client(server)
    await client.send_raw(frame)
    answer = await client.receive()
    assert answer["response"] == "error"
    assert len(answer["param"]["message"]) < 300
    assert (await client.call("eboards"))["response"] == "call", "the connection goes on"
    await client.ws.close()


async def test_a_frame_over_the_limit_closes_with_1009(server: LiveChessServer) -> None:
    client = await _client(server)
    await client.send_raw(json.dumps({"call": "eboards", "id": 1, "x": "y" * 20_000}))
    with pytest.raises(ConnectionClosed) as closed:
        await client.receive()
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1009


async def test_a_client_that_never_finishes_its_handshake_is_closed() -> None:
    hub = Hub()
    policy = ConnectionPolicy(open_timeout=0.3)
    async with LiveChessServer(hub, LiveChessSettings(port=0), policy=policy) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /api/v1.0 HTTP/1.1\r\n")  # and never the rest
        async with asyncio.timeout(30):
            assert await reader.read() == b"", "closed by the server"
        writer.close()
