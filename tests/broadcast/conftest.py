"""Fixtures of the broadcast tests: a recording HTTP server (the broker is in tests/conftest.py)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ssl
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

__all__ = ["Answer", "ReceivedRequest", "RecordingServer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReceivedRequest:
    """One request as the server read it (header names lower-cased)."""

    method: str
    path: str
    version: str
    headers: dict[str, str]
    body: bytes
    at: float = 0.0  # loop time the request was complete


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """How the server answers one request."""

    status: int = 200
    reason: str = "OK"
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    chunked: bool = False

    def encode(self) -> bytes:
        """The reply's bytes."""
        head = [f"HTTP/1.1 {self.status} {self.reason}", "Connection: close"]
        head += [f"{name}: {value}" for name, value in self.headers]
        if self.chunked:
            head.append("Transfer-Encoding: chunked")
            body = b"".join(
                b"%x\r\n%s\r\n" % (len(self.body[i : i + 7]), self.body[i : i + 7])
                for i in range(0, len(self.body), 7)
            )
            body += b"0\r\n\r\n"
        else:
            head.append(f"Content-Length: {len(self.body)}")
            body = self.body
        return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class RecordingServer:
    """A loopback HTTP/1.1 server that records every request and answers from a script.

    ``script`` answers requests in order; once it is empty, ``default`` answers. While
    ``gate`` is clear, replies wait (requests are still recorded), which shows how
    many requests a client keeps in flight. ``answer_delay`` seconds pass before each
    reply (a slow server: it goes on with a request whose client gave up on it), and
    ``in_flight`` counts the requests the server is at work on.
    """

    def __init__(self) -> None:
        self.requests: list[ReceivedRequest] = []
        self.script: collections.deque[Answer] = collections.deque()
        self.default = Answer()
        #: When set, answers every request instead of ``script`` and ``default``.
        self.answer_for: Callable[[ReceivedRequest], Answer] | None = None
        self.gate = asyncio.Event()
        self.gate.set()
        self.answer_delay = 0.0
        self.in_flight = 0
        self.max_in_flight = 0
        self._arrived = asyncio.Condition()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[Any]] = set()
        self.port = 0
        self.scheme = "http"

    def url(self, path: str) -> str:
        """``http(s)://127.0.0.1:<port><path>``."""
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    async def start(self, tls: ssl.SSLContext | None = None) -> None:
        """Listen on a free loopback port (with TLS when ``tls`` is given)."""
        self.scheme = "https" if tls else "http"
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=tls)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening; held replies are released and every connection is finished."""
        self.gate.set()  # let held replies go
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        if self._handlers:
            await asyncio.wait(self._handlers, timeout=5.0)
        for handler in self._handlers:
            handler.cancel()

    async def wait_for_requests(self, count: int, time_limit: float = 10.0) -> None:
        """Wait until at least ``count`` requests arrived."""
        async with asyncio.timeout(time_limit), self._arrived:
            await self._arrived.wait_for(lambda: len(self.requests) >= count)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)
        handler.add_done_callback(self._handlers.discard)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            request = await _read_request(reader)
            async with self._arrived:
                self.requests.append(request)
                self._arrived.notify_all()
            await self.gate.wait()
            await asyncio.sleep(self.answer_delay)
            if self.answer_for is not None:
                answer = self.answer_for(request)
            else:
                answer = self.script.popleft() if self.script else self.default
            writer.write(answer.encode())
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            self.in_flight -= 1
            writer.close()
            with contextlib.suppress(ConnectionError, ssl.SSLError):
                await writer.wait_closed()


async def _read_request(reader: asyncio.StreamReader) -> ReceivedRequest:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    request_line, *lines = head.rstrip("\r\n").split("\r\n")
    method, path, version = request_line.split(" ")
    headers: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    at = asyncio.get_running_loop().time()
    return ReceivedRequest(
        method=method, path=path, version=version, headers=headers, body=body, at=at
    )


@pytest.fixture
async def http_server() -> AsyncIterator[RecordingServer]:
    """A running :class:`RecordingServer`."""
    server = RecordingServer()
    await server.start()
    try:
        yield server
    finally:
        await server.close()
