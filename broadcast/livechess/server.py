"""The LiveChess server: the eBoards websocket API and the HTTP resources, on their own port.

docs/integrations.md, "The websocket API": ``ws://HOST:1982/api/v1.0`` for the websocket
API, and the same resources as JSON over ``GET /api/v1.0/...``. The pure parts are
:mod:`broadcast.livechess.protocol` (the envelope), :mod:`broadcast.livechess.eboards`
(the boards and their feed), :mod:`broadcast.livechess.resources` (tournaments) and
:mod:`broadcast.livechess.origins` (which pages may use it: lichess, this machine's and
``[livechess] allowed_origins``; other browser pages get 403).

The port follows the daemon's one connection policy
(:class:`~broadcast.web.connection_limits.ConnectionPolicy`): the same connection
limits as the broadcast port (one count for both), handshake and close timeouts,
keep-alive pings and write buffer.

Nothing a client does runs in the board pipeline. The server follows the hub with a
:class:`~broadcast.feed.subscriptions.BoardWatch`: publishing a board only marks it, and the
server's own task refreshes the feed groups of the boards that changed (however often
they changed meanwhile), once per change for all its clients. Each connection has a
receiver (calls in, answers out) and a sender (feed events out). The sender never
queues: a change marks the connection's feeds dirty, and when the socket can take more
(``write_limit`` bytes buffered at most, as for spectators) it sends the latest event of
each dirty feed; a subscriber that missed events gets the next one in full. A client
that never reads costs its write buffer and nothing else, and delays no one.

``flip`` is the connection's own: it turns the board in the events of that
connection's feeds and in its ``eboards`` answers, never in another client's.
``setup`` moves one feed to the group of that position.
"""

from __future__ import annotations

import asyncio
import contextlib
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
from broadcast.feed.subscriptions import BoardWatch
from broadcast.livechess.eboards import EBoards, FeedGroup
from broadcast.livechess.origins import origin_problem
from broadcast.livechess.protocol import (
    MESSAGE_LIMIT,
    Call,
    EboardsCall,
    Encoded,
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
from broadcast.web.connection_limits import ConnectionPolicy
from broadcast.web.listen import ListenError, listen_error, listening_port
from broadcast.web.log_limit import LogLimit
from broadcast.web.request_check import repeated_header

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
    """Where the LiveChess API listens, the event it describes, and its bounds.

    Attributes:
        host / port: like ``[server]``; 1982 is the port LiveChess uses (0: a free one).
        tournaments: the event's sections (for the tournament resources).
        allowed_origins: web origins whose pages may use the API besides lichess.org
            and this machine's (broadcast/livechess/origins.py).
        max_feeds: subscriptions one connection may hold (a LiveChess client holds
            one per board it shows).
        max_subscribers: subscriptions one e-board may have, from all connections.
        max_setups: distinct ``setup`` positions one e-board's subscribers may ask for.
        calls_per_second: calls and HTTP resources answered per second from all
            connections together (in bursts of as many); more wait their turn, and their
            connections are read no further meanwhile, so a flood costs a bounded share
            of the daemon's time whatever the number of connections.
    """

    host: str = "127.0.0.1"
    port: int = 1982
    tournaments: tuple[Tournament, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    max_feeds: int = 256
    max_subscribers: int = 1000
    max_setups: int = 16
    calls_per_second: float = 300.0


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
    flipped: set[str] = field(default_factory=set)  # serial numbers this connection turned
    dirty: set[int] = field(default_factory=set)
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def mark(self, feed_id: int) -> None:
        self.dirty.add(feed_id)
        self.wake.set()


def _now_ms() -> int:
    return round(time.time() * 1000)


class _Pace:
    """At most ``rate`` turns a second in all, in bursts of ``rate``; every turn yields.

    A turn not free at once is reserved (the count goes below zero) and waited for, so
    waiters go in about the order they came; each connection waits for one turn at a
    time, so the reservations are bounded by the connections.
    """

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._rate = rate
        self._clock = clock
        self._tokens = rate
        self._at = clock()

    async def turn(self) -> None:
        now = self._clock()
        self._tokens = min(self._rate, self._tokens + (now - self._at) * self._rate)
        self._at = now
        self._tokens -= 1
        wait = -self._tokens / self._rate if self._tokens < 0 else 0.0
        await asyncio.sleep(wait)  # a turn of the loop at least: others go between calls


def _json_response(status: int, body: Any) -> Response:
    headers = Headers([("Content-Type", "application/json"), *_CORS])
    data = (body.text if isinstance(body, Encoded) else encode_json(body)).encode()
    return Response(status, http.HTTPStatus(status).phrase, headers, data)


class LiveChessServer:
    """The LiveChess local API, fed from a hub.

    Use ``async with LiveChessServer(hub, settings) as server:`` (it follows the hub
    while open) or run :meth:`serve` as a task; :attr:`port` is the bound port.

    Args:
        hub: the hub whose boards it shows (the public one).
        settings: address, event and bounds.
        policy: the daemon's connection policy (the broadcast server's, so both ports
            share one count of connections per address).
        clock: epoch milliseconds for the envelopes' ``time``.
    """

    def __init__(
        self,
        hub: Hub,
        settings: LiveChessSettings,
        *,
        policy: ConnectionPolicy | None = None,
        clock: Callable[[], int] = _now_ms,
    ) -> None:
        self.hub = hub
        self.settings = settings
        self.policy = policy or ConnectionPolicy()
        self.eboards = EBoards(
            max_subscribers=settings.max_subscribers, max_setups=settings.max_setups
        )
        self.resources = Resources(settings.tournaments, hub.state, self.eboards.serials_of)
        self._clock = clock
        self._server: Server | None = None
        self._watch: BoardWatch | None = None
        self._follower: asyncio.Task[None] | None = None
        self._members: dict[FeedGroup, set[_Feed]] = {}
        self._clients: set[_Client] = set()
        self._refused_pages = LogLimit()
        self._refused_calls = LogLimit()
        self._pace = _Pace(settings.calls_per_second)
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
                **self.policy.serve_options(MESSAGE_LIMIT),
            )
        except OSError as exc:
            raise ListenError(f"[livechess] {listen_error(host, port, exc)}") from None
        for state in self.hub.states():
            self.receive_board(state)
        self._watch = self.hub.watch()
        self._follower = asyncio.create_task(self._follow(self._watch))
        self.listening.set()
        log.info("= LiveChess API on ws://%s:%d%s", self.settings.host, self.port, API_PATH)

    async def close(self) -> None:
        """Close every connection and stop listening."""
        if self._follower is not None:
            self._follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follower
            self._follower = None
        if self._watch is not None:
            self._watch.close()
            self._watch = None
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

    async def _follow(self, watch: BoardWatch) -> None:
        """Refresh the feed groups of the boards published since the last look."""
        while True:
            for state in await watch.changed():
                self.receive_board(state)
                await asyncio.sleep(0)  # one board at a time: the pipeline goes first

    def receive_board(self, state: BoardState) -> None:
        """A board changed: wake the subscribers of every feed group with a new event.

        It only marks feeds and wakes their senders; events are encoded when a sender
        asks for them.
        """
        self._wake(self.eboards.receive_board(state))

    def _wake(self, groups: list[FeedGroup]) -> None:
        for group in groups:
            for feed in self._members.get(group, ()):
                feed.client.mark(feed.feed_id)

    def _join(self, client: _Client, feed_id: int, serial: str, setup: str | None) -> str | None:
        """Add a feed to its group; why not, when a bound refuses it."""
        group = self.eboards.join(serial, setup, serial in client.flipped)
        if isinstance(group, str):
            return group
        feed = _Feed(client=client, feed_id=feed_id, group=group)
        client.feeds[feed_id] = feed
        self._members.setdefault(group, set()).add(feed)
        return None

    def _leave(self, feed: _Feed) -> None:
        del feed.client.feeds[feed.feed_id]
        members = self._members.get(feed.group)
        if members is not None:
            members.discard(feed)
            if not members:
                del self._members[feed.group]
        self.eboards.leave(feed.group)

    def _regroup(self, feed: _Feed, setup: str | None) -> str | None:
        """Move ``feed`` to the group of ``setup`` and its connection's flip; where a
        bound refuses, it stays where it was."""
        client, group = feed.client, feed.group
        self._leave(feed)
        refused = self._join(client, feed.feed_id, group.serial, setup)
        if refused is not None:  # the place it just left is free: the bounds admit it
            self._join(client, feed.feed_id, group.serial, group.setup)
        return refused

    # -- HTTP ----------------------------------------------------------------------------

    async def _process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        if (repeated := repeated_header(request.headers)) is not None:
            if (count := self._refused_pages.due()) is not None:
                log.warning(
                    "= LiveChess API refused: %s sent twice (%d since the last line)",
                    repeated,
                    count,
                )
            return _json_response(400, {"message": f"{repeated} sent twice"})
        refused = origin_problem(request.headers.get("Origin"), self.settings.allowed_origins)
        if refused is not None:
            count = self._refused_pages.due()
            if count is not None:
                log.warning("= LiveChess API refused: %s (%d since the last line)", refused, count)
            return _json_response(403, {"message": refused})
        path = urlsplit(request.path).path.rstrip("/")
        if path == API_PATH:
            return None  # the websocket API
        if not path.startswith(API_PATH + "/"):
            return _json_response(404, {"message": f"no resource at {path[:200] or '/'}"})
        await self._pace.turn()  # resources are paced with the calls
        found = self.resource(path[len(API_PATH) :])
        if found is None:
            return _json_response(404, {"message": f"no resource at {path[:200]}"})
        return _json_response(200, found)

    def resource(self, path: str) -> Any | None:
        """The JSON of a resource below ``/api/v1.0`` (``/eboards``, ...), as data or as
        :class:`Encoded` text; None if none."""
        if path == "/eboards":
            return Encoded(self.eboards.eboards_text())
        if path == "/sources":
            return Encoded(self.eboards.sources_text())
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
            await self._pace.turn()
            call = parse_call(message)
            answer = call if isinstance(call, Refusal) else self._answer(client, call)
            if isinstance(answer, Refusal):
                if (count := self._refused_calls.due()) is not None:
                    log.info(
                        "< livechess refused: %s (%d since the last line)", answer.message, count
                    )
                await client.ws.send(error_text(answer, self._clock()))
                continue
            assert not isinstance(call, Refusal)
            await client.ws.send(call_text(call.id, answer, self._clock()))
            if isinstance(call, SubscribeCall | SetupCall):
                client.mark(call.feed_id)  # the full state follows the answer at once
            elif isinstance(call, FlipCall):
                self._mark_board_of(client, call.feed_id)

    def _answer(self, client: _Client, call: Call) -> Any:
        """The ``param`` of the answer to ``call``, or a :class:`Refusal`."""
        match call:
            case EboardsCall():
                return Encoded(self.eboards.eboards_text(client.flipped))
            case SourcesCall():
                return Encoded(self.eboards.sources_text())
            case SubscribeCall():
                return self._subscribe(client, call)
        feed = client.feeds.get(call.feed_id)
        if feed is None:
            return Refusal(id=call.id, message=f"no feed with id {call.feed_id}")
        match call:
            case UnsubscribeCall():
                self._leave(feed)
            case SetupCall(fen=fen):
                refused = self._regroup(feed, fen)
                return None if refused is None else Refusal(id=call.id, message=refused)
            case FlipCall(flip=flip):
                self._flip(client, feed.group.serial, flip)
        return None

    def _flip(self, client: _Client, serial: str, flip: bool) -> None:
        """Turn ``serial`` for this connection alone: its feeds of it move group."""
        if flip == (serial in client.flipped):
            return
        if flip:
            client.flipped.add(serial)
        else:
            client.flipped.discard(serial)
        for feed in [f for f in client.feeds.values() if f.group.serial == serial]:
            self._regroup(feed, feed.group.setup)

    def _subscribe(self, client: _Client, call: SubscribeCall) -> Refusal | None:
        if call.feed_id in client.feeds:
            return Refusal(id=call.id, message=f"feed id {call.feed_id} is in use")
        if len(client.feeds) >= self.settings.max_feeds:
            limit = self.settings.max_feeds
            return Refusal(id=call.id, message=f"at most {limit} feeds per connection")
        if not self.eboards.knows(call.serial):
            return Refusal(id=call.id, message=f"no e-board with serial number {call.serial}")
        refused = self._join(client, call.feed_id, call.serial, None)
        return None if refused is None else Refusal(id=call.id, message=refused)

    def _mark_board_of(self, client: _Client, feed_id: int) -> None:
        """Mark every feed of this connection on the board of ``feed_id``."""
        feed = client.feeds.get(feed_id)
        if feed is not None:
            for other in client.feeds.values():
                if other.group.serial == feed.group.serial:
                    client.mark(other.feed_id)

    async def _send_feeds(self, client: _Client) -> None:
        while True:
            await client.wake.wait()
            client.wake.clear()
            dirty, client.dirty = client.dirty, set()
            for feed_id in sorted(dirty):
                feed = client.feeds.get(feed_id)
                if feed is None or feed.received == feed.group.version:
                    continue
                text = feed.group.text_for(feed.received)
                feed.received = feed.group.version
                await client.ws.send(feed_text(feed_id, text, self._clock()))
