"""Malformed requests on every port dgtcast listens on: the broadcast server, a relay's
and the LiveChess API (issue 34, item 4; docs/faults.md, "Malformed requests").

A header the server reads sent twice gets ``400`` and at most one WARNING line every
10 s (before: ``500`` and an ERROR traceback for each request, 17.9 MB of log in 15 s);
any method but GET gets ``405`` with ``Allow: GET``, a ``HEAD`` no body, a ``POST`` with a
body too (before: dropped without an answer, or served as a GET by the LiveChess API).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from broadcast.feed.hub import Hub
from broadcast.livechess.server import API_PATH, LiveChessServer, LiveChessSettings
from broadcast.outputs.mqtt_client import MqttSettings
from broadcast.relay.server import Relay, RelaySettings
from broadcast.web.connection_limits import ConnectionLimits, ConnectionPolicy
from broadcast.web.server import BroadcastServer
from tests.broadcast.feed_client import RecordingHandler, http_get, http_request, state_after
from tests.mosquitto import Mosquitto
from tests.serving import serving

UPGRADE = (
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
)
#: http_get sends ``Host: 127.0.0.1`` itself: one more Host is the second.
TWICE = {
    "If-None-Match": ('If-None-Match: "a"', 'If-None-Match: "b"'),
    "Host": ("Host: evil.example", *UPGRADE),
    "Origin": ("Origin: http://127.0.0.1", "Origin: https://evil.example", *UPGRADE),
}


@contextlib.asynccontextmanager
async def broadcast_server(limits: bool) -> AsyncIterator[tuple[int, str, str]]:
    hub = Hub()
    hub.publish_board(state_after(1, 2))
    policy = ConnectionLimits(per_client=1000, total=None) if limits else None
    token = "a-long-arbiter-token"
    async with BroadcastServer(hub, RecordingHandler(), arbiter_token=token, limits=policy) as s:
        yield s.port, "/round.pgn", "/ws/arbiter"


@contextlib.asynccontextmanager
async def livechess_server() -> AsyncIterator[tuple[int, str, str]]:
    policy = ConnectionPolicy(limits=None)
    async with LiveChessServer(Hub(), LiveChessSettings(port=0), policy=policy) as live:
        yield live.port, f"{API_PATH}/eboards", API_PATH


@contextlib.asynccontextmanager
async def relay_server(broker: Mosquitto) -> AsyncIterator[tuple[int, str, str]]:
    mqtt = MqttSettings(host="127.0.0.1", port=broker.port, prefix="event", daemon_id="r1")
    settings = RelaySettings(mqtt=mqtt, port=0, arbiter_token="a-long-arbiter-token")
    async with serving(Relay(settings)) as relay:
        yield relay.server.port, "/round.pgn", "/ws/arbiter"


SERVERS: dict[str, Callable[[Any], contextlib.AbstractAsyncContextManager[tuple[int, str, str]]]]
SERVERS = {
    "daemon": lambda _: broadcast_server(limits=False),
    "daemon with limits": lambda _: broadcast_server(limits=True),
    "livechess": lambda _: livechess_server(),
    "relay": relay_server,
}


@pytest.fixture(params=list(SERVERS))
async def listening(
    request: pytest.FixtureRequest, tmp_path: Any
) -> AsyncIterator[tuple[int, str, str]]:
    broker = None
    if request.param == "relay":
        broker = request.getfixturevalue("mosquitto")
    async with SERVERS[request.param](broker) as where:
        yield where


async def test_a_header_sent_twice_is_400_and_one_log_line(
    listening: tuple[int, str, str], caplog: pytest.LogCaptureFixture
) -> None:
    port, page, websocket = listening
    caplog.set_level(logging.INFO)
    for _ in range(30):
        for name, headers in TWICE.items():
            path = page if name == "If-None-Match" else websocket
            answer = await http_get(port, path, *headers)
            assert answer.status == 400, (name, answer)
            assert name.encode() in answer.body
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    lines = [r.getMessage() for r in caplog.records if "sent twice" in r.getMessage()]
    assert len(lines) == 1, lines  # 90 requests within 10 s: one line
    assert (await http_get(port, page)).status == 200  # and the server serves on


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("HEAD", ()),
        ("OPTIONS", ()),
        ("POST", ()),
        ("POST", ("Content-Length: 11", "", "result=1-0")),
        ("PUT", ("Transfer-Encoding: chunked", "", "5\r\nhello\r\n0\r\n")),
    ],
)
async def test_other_methods_are_405_allowing_get(
    listening: tuple[int, str, str], method: str, extra: tuple[str, ...]
) -> None:
    port, page, _ = listening
    lines = [f"{method} {page} HTTP/1.1", "Host: 127.0.0.1", *extra]
    raw = "\r\n".join(lines if extra else [*lines, "", ""]).encode()
    answer = await http_request(port, raw)
    assert answer.status == 405
    assert answer.headers["allow"] == "GET"
    assert answer.body == (b"" if method == "HEAD" else b"method not allowed\n")
