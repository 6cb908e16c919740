"""The arbiter channel against hostile clients, through the real daemon (issue 17.9).

Pages of other sites (``Origin``), DNS rebinding (``Host``), token guessing (slowed
down per client address and logged), and a short token on loopback (refused at start,
except in the demo).
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from daemon.shell.app import Daemon
from tests.daemon.conftest import Serve
from tests.daemon.support import BoardSpec, refused_start, wait_for, write_config

TOKEN = "arbiter-secret"  # write_config's default


async def _auth(url: str, token: str, **options: object) -> dict[str, object]:
    async with connect(url, **options) as ws:  # type: ignore[arg-type]
        await ws.send(json.dumps({"type": "auth", "token": token}))
        async with asyncio.timeout(30):
            answer: dict[str, object] = json.loads(await ws.recv())
        return answer


def _url(daemon: Daemon) -> str:
    return f"ws://127.0.0.1:{daemon.server.port}/ws/arbiter"


async def test_pages_of_other_origins_are_refused(serve: Serve) -> None:
    origins = {"allowed_origins": ["https://arbiters.example.org"]}
    async with serve(BoardSpec(1, None), server=origins) as daemon:
        own = f"http://127.0.0.1:{daemon.server.port}"
        with pytest.raises(InvalidStatus) as refused:
            await _auth(_url(daemon), TOKEN, origin="http://evil.example")
        assert refused.value.response.status_code == 403
        assert b"may not use the arbiter channel" in refused.value.response.body
        for origin in (own, "https://arbiters.example.org", None):
            answer = await _auth(_url(daemon), TOKEN, origin=origin)
            assert answer["type"] == "snapshot", origin


async def test_a_rebound_host_name_is_refused(serve: Serve) -> None:
    async with serve(BoardSpec(1, None)) as daemon:
        port = daemon.server.port
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            f"GET /ws/arbiter HTTP/1.1\r\nHost: rebind.evil.example:{port}\r\n"
            f"Origin: http://rebind.evil.example:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        async with asyncio.timeout(30):
            status = await reader.readline()
        writer.close()
        assert status.startswith(b"HTTP/1.1 403"), status
        answer = await _auth(f"ws://localhost:{port}/ws/arbiter", TOKEN)
        assert answer["type"] == "snapshot", "localhost is ours"


async def test_wrong_tokens_are_slowed_down_and_logged_but_never_hold_the_right_one(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    async with serve(BoardSpec(1, None)) as daemon:
        url = _url(daemon)
        throttle = daemon.server.arbiter.throttle
        with caplog.at_level(logging.WARNING, logger="broadcast.web.arbiter_guard"):
            first = await _auth(url, "guess-1")
            assert first == {"type": "error", "reason": "bad token"}
            second = asyncio.create_task(_auth(url, "guess-2"))
            await wait_for(lambda: throttle.held == 1, 10, "the second wrong answer held")
            assert not second.done(), "a second wrong token from the same address waits"
            rotated = asyncio.create_task(_auth(url, "guess-3", local_addr=("127.0.0.9", 0)))
            await wait_for(lambda: throttle.held == 2, 10, "another loopback address held too")
            assert throttle.failures("127.0.0.1") == 3, "loopback addresses count as one"
            mine = await _auth(url, TOKEN)
            assert mine["type"] == "snapshot", "the right token is not held back"
            assert throttle.failures("127.0.0.1") == 0, "a right token clears the record"
            assert await second == {"type": "error", "reason": "bad token"}
            assert await rotated == {"type": "error", "reason": "bad token"}
        lines = [r.getMessage() for r in caplog.records]
        lines = [line for line in lines if "wrong arbiter token" in line]
        assert len(lines) == 1, "at most one line every 10 s"
        assert lines[0].startswith("wrong arbiter token from 127.0.0.1 (1 since the last line")


def test_a_short_token_on_loopback_is_refused_at_start(tmp_path: Path) -> None:
    config = write_config(tmp_path, [BoardSpec(1, None)], token="sesame")
    assert refused_start(config).splitlines() == [
        f'{config}: server.arbiter_token: too short, also on "127.0.0.1":'
        " use at least 12 random characters"
    ]
