"""The LiveChess server: the eBoards websocket API and the HTTP resources, on their own port.

livechess-api.md §1: ``ws://HOST:1982/api/v1.0`` for the websocket API, and the same
resources as JSON over ``GET /api/v1.0/...`` with ``Access-Control-Allow-Origin: *`` so a
page from any origin (lichess's DGT page, an overlay) can read them. The pure parts are
:mod:`broadcast.livechess.protocol` (the envelope), :mod:`broadcast.livechess.eboards`
(the boards and their feed) and :mod:`broadcast.livechess.resources` (tournaments).

One hub listener feeds every connection. Each connection has a receiver (calls in,
answers out) and a sender (feed events out). The sender never queues: a change marks
the connection's feeds dirty, and when the socket can take more (``write_limit`` bytes
buffered at most, as for spectators, broadcast/web/server.py) it sends the latest event of
each dirty feed; a subscriber that missed events gets the next one in full. A client
that never reads costs its write buffer and nothing else, and delays no one.
"""

from __future__ import annotations

import asyncio
import http
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from broadcast.feed.events import encode_json
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from broadcast.livechess.eboards import EBoards, FeedGroup
from broadcast.livechess.protocol import (
    MESSAGE_LIMIT,
    Call,
    EboardsCall,
    FlipCall,
    Refusal,
    SetupCall,
    SourcesCall,
    SubscribeCall,
    UnsubscribeCall,
    call_text,
    error_text,
    feed_text,
    parse_call,
)
from broadcast.livechess.resources import Resources, Tournament
from broadcast.web.arbiter_channel import until_either_ends
from broadcast.web.listen import ListenError, listen_error, listening_port

__all__ = ["API_PATH", "LiveChessServer", "LiveChessSettings"]

log = logging.getLogger(__name__)

API_PATH = "/api/v1.0"
_CORS = (
    ("Access-Control-Allow-Origin", "*"),
    ("Cache-Control", "no-cache"),
)
_ROUND = re.compile(r"/round/([^/]+)/([0-9]{1,4})")
_ONE = re.compile(r"/(tournament|game)/([^/]+)")


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveChessSettings:
    """Where the LiveChess API listens, and the event it describes.

    Attributes:
        host / port: like ``[server]``; 1982 is the port LiveChess uses (0: a free one).
        tournaments: the event's sections (for the tournament resources).
        write_limit: bytes buffered per connection before its sender waits.
        max_feeds: subscriptions one connection may hold (a LiveChess client holds
            one per board it shows).
        backlog: listen backlog.
    """

    host: str = "127.0.0.1"
    port: int = 1982
    tournaments: tuple[Tournament, ...] = ()
    write_limit: int = 32 * 1024
    max_feeds: int = 1000
    backlog: int = 1024


@dataclass(eq=False, slots=True)
class _Feed:
    client: _Client
    feed_id: int
    group: FeedGroup
    received: int | None = None  # the group's version last sent


@dataclass(eq=False, slots=True)
class _Client:
    ws: ServerConnection
    feeds: dict[int, _Feed] = field(default_factory=dict)
    dirty: set[int] = field(default_factory=set)
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def mark(self, feed_id: int) -> None:
        self.dirty.add(feed_id)
        self.wake.set()


def _nothing() -> None:
    """A listener remover with nothing left to remove."""


def _now_ms() -> int:
    return round(time.time() * 1000)


def _json_response(status: int, body: Any) -> Response:
    headers = Headers([("Content-Type", "application/json"), *_CORS])
    data = encode_json(body).encode()
    return Response(status, http.HTTPStatus(status).phrase, headers, data)


class LiveChessServer:
    """The LiveChess local API, fed from a hub.

    Use ``async with LiveChessServer(hub, settings) as server:`` (it follows the hub
    while open) or run :meth:`serve` as a task; :attr:`port` is the bound port.
    """

    def __init__(
        self, hub: Hub, settings: LiveChessSettings, *, clock: Callable[[], int] = _now_ms
    ) -> None:
        self.hub = hub
        self.settings = settings
        self.eboards = EBoards()
        self.resources = Resources(settings.tournaments, hub.state, self.eboards.serials_of)
        self._clock = clock
        self._server: Server | None = None
        self._stop_listening: Callable[[], None] = _nothing
        self._members: dict[FeedGroup, set[_Feed]] = {}
        self._clients: set[_Client] = set()
        #: Set once the server listens (:attr:`port` is then known).
        self.listening = asyncio.Event()

    @property
    def port(self) -> int:
        """The TCP port listened on (after :meth:`start`)."""
        return listening_port(self._server, "the LiveChess server")

    @property
    def client_count(self) -> int:
        """How many websocket clients are connected."""
        return len(self._clients)

    def client_buffers(self) -> list[int]:
        """Bytes waiting in each client's write buffer."""
        return [c.ws.transport.get_write_buffer_size() for c in self._clients]

    async def start(self) -> None:
        """Listen, and follow the hub (idempotent).

        Raises:
            ListenError: a busy port (DGT LiveChess itself running?), an unknown host, a
                privileged port: one line, naming ``[livechess]``.
        """
        if self._server is not None:
            return
        host, port = self.settings.host, self.settings.port
        try:
            self._server = await serve(
                self._handle,
                host,
                port,
                process_request=self._process_request,
                compression=None,
                max_size=MESSAGE_LIMIT,
                write_limit=self.settings.write_limit,
                backlog=self.settings.backlog,
            )
        except OSError as exc:
            raise ListenError(f"[livechess] {listen_error(host, port, exc)}") from None
        for state in self.hub.states():
            self.receive_board(state)
        self._stop_listening = self.hub.add_listener(self.receive_board)
        self.listening.set()
        log.info("= LiveChess API on ws://%s:%d%s", self.settings.host, self.port, API_PATH)

    async def close(self) -> None:
        """Close every connection and stop listening."""
        self._stop_listening()
        self._stop_listening = _nothing
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        self.listening.clear()

    async def serve(self) -> None:
        """Serve until cancelled."""
        async with self:
            await asyncio.Event().wait()

    async def __aenter__(self) -> LiveChessServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- the boards ----------------------------------------------------------------------

    def receive_board(self, state: BoardState) -> None:
        """A board changed: wake the subscribers of every feed group with a new event.

        Called by the hub inside ``publish_board`` (a listener): it only marks feeds
        and wakes their senders; events are encoded when a sender asks for them.
        """
        self._wake(self.eboards.receive_board(state))

    def _wake(self, groups: list[FeedGroup]) -> None:
        for group in groups:
            for feed in self._members.get(group, ()):
                feed.client.mark(feed.feed_id)

    def _join(self, client: _Client, feed_id: int, serial: str, setup: str | None) -> None:
        group = self.eboards.join(serial, setup)
        feed = _Feed(client=client, feed_id=feed_id, group=group)
        client.feeds[feed_id] = feed
        self._members.setdefault(group, set()).add(feed)

    def _leave(self, feed: _Feed) -> None:
        del feed.client.feeds[feed.feed_id]
        members = self._members.get(feed.group)
        if members is not None:
            members.discard(feed)
            if not members:
                del self._members[feed.group]
        self.eboards.leave(feed.group)

    # -- HTTP ----------------------------------------------------------------------------

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = urlsplit(request.path).path.rstrip("/")
        if path == API_PATH:
            return None  # the websocket API
        if not path.startswith(API_PATH + "/"):
            return _json_response(404, {"message": f"no resource at {path or '/'}"})
        found = self.resource(path[len(API_PATH) :])
        if found is None:
            return _json_response(404, {"message": f"no resource at {path}"})
        return _json_response(200, found)

    def resource(self, path: str) -> Any | None:
        """The JSON of a resource below ``/api/v1.0`` (``/eboards``, ...); None if none."""
        if path == "/eboards":
            return self.eboards.eboards()
        if path == "/sources":
            return self.eboards.sources()
        if path == "/tournaments":
            return self.resources.tournaments()
        if match := _ROUND.fullmatch(path):
            return self.resources.round(match.group(1), int(match.group(2)))
        if match := _ONE.fullmatch(path):
            kind, key = match.groups()
            if kind == "tournament":
                return self.resources.tournament(key)
            return self.resources.game(key)
        return None

    # -- websocket clients ----------------------------------------------------------------

    async def _handle(self, ws: ServerConnection) -> None:
        client = _Client(ws=ws)
        self._clients.add(client)
        try:
            await until_either_ends(self._send_feeds(client), self._receive_calls(client))
        finally:
            for feed in list(client.feeds.values()):
                self._leave(feed)
            self._clients.discard(client)

    async def _receive_calls(self, client: _Client) -> None:
        async for message in client.ws:
            call = parse_call(message)
            if isinstance(call, Refusal):
                log.info("< livechess refused: %s", call.message)
                await client.ws.send(error_text(call, self._clock()))
                continue
            answer = self._answer(client, call)
            if isinstance(answer, Refusal):
                await client.ws.send(error_text(answer, self._clock()))
                continue
            await client.ws.send(call_text(call.id, answer, self._clock()))
            if isinstance(call, SubscribeCall | SetupCall):
                client.mark(call.feed_id)  # the full state follows the answer at once

    def _answer(self, client: _Client, call: Call) -> Any:
        """The ``param`` of the answer to ``call``, or a :class:`Refusal`."""
        match call:
            case EboardsCall():
                return self.eboards.eboards()
            case SourcesCall():
                return self.eboards.sources()
            case SubscribeCall():
                return self._subscribe(client, call)
        feed = client.feeds.get(call.feed_id)
        if feed is None:
            return Refusal(id=call.id, message=f"no feed with id {call.feed_id}")
        match call:
            case UnsubscribeCall():
                self._leave(feed)
            case SetupCall(fen=fen):
                self._leave(feed)
                self._join(client, call.feed_id, feed.group.serial, fen)
            case FlipCall(flip=flip):
                self._wake(self.eboards.flip(feed.group.serial, flip))
        return None

    def _subscribe(self, client: _Client, call: SubscribeCall) -> Refusal | None:
        if call.feed_id in client.feeds:
            return Refusal(id=call.id, message=f"feed id {call.feed_id} is in use")
        if len(client.feeds) >= self.settings.max_feeds:
            limit = self.settings.max_feeds
            return Refusal(id=call.id, message=f"at most {limit} feeds per connection")
        if not self.eboards.knows(call.serial):
            return Refusal(id=call.id, message=f"no e-board with serial number {call.serial}")
        self._join(client, call.feed_id, call.serial, None)
        return None

    async def _send_feeds(self, client: _Client) -> None:
        while True:
            await client.wake.wait()
            client.wake.clear()
            dirty, client.dirty = client.dirty, set()
            for feed_id in sorted(dirty):
                feed = client.feeds.get(feed_id)
                if feed is None:
                    continue
                text = feed.group.text_for(feed.received)
                feed.received = feed.group.version
                await client.ws.send(feed_text(feed_id, text, self._clock()))
