"""The broadcast server: the spectator feed, the arbiter channel and HTTP, on one port.

One websockets server answers everything: ``process_request`` serves the plain HTTP
GETs (:mod:`broadcast.web.http`) and lets ``/ws`` and ``/ws/arbiter`` through to the
websocket handshake.

Spectator feed ``ws://…/ws`` (docs/broadcast.md has every message)::

    server  {"type": "snapshot", "seq": n, "server_time": t, "delay": d, "boards": [...]}
    server  {"type": "move", "seq": n+1, "board": 3, ...}        then every feed event
    client  {"type": "resume", "since": n}    → {"type": "resumed", ...} + missed events,
                                                 or a fresh snapshot if they are gone
    client  {"type": "ping"}                  → {"type": "pong", "server_time": t}

``ws://…/ws?since=n`` resumes at connection time; a client offering the websocket
subprotocol ``dgtcast.batch`` gets the events of a frame as one JSON array (the viewer
does). Each spectator has its own sender
task and a hub cursor (no queue). The fan-out (:mod:`broadcast.web.fanout`) ticks at
most every ``frame_interval`` seconds (less often when so many spectators make a tick
costly: ``tick_share``): it writes the events since the last tick, framed
once, to every idle caught-up spectator, and wakes the senders of the others: a slow
one waits on its write buffer (``write_limit`` bytes) and then gets the events it missed
if the ring still holds them, else one snapshot of the latest state; one that does not
read for ``slow_timeout`` seconds is dropped. A slow spectator never delays another.
Spectator messages over 4 KiB close the connection with code 1009.
"""

from __future__ import annotations

import http
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

from broadcast.feed.commands import CommandHandler
from broadcast.feed.delay import PublicDelay
from broadcast.feed.events import encode_json
from broadcast.feed.hub import Hub
from broadcast.feed.messages import MAX_ID, decode_untrusted_json, to_json_dict
from broadcast.feed.public_results import PublicResults, ResultsPolicy
from broadcast.feed.subscriptions import Subscription, Update
from broadcast.web.arbiter_channel import ARBITER_MESSAGE_LIMIT, ArbiterChannel, until_either_ends
from broadcast.web.arbiter_guard import OriginPolicy
from broadcast.web.connection_limits import ConnectionLimits, ConnectionPolicy
from broadcast.web.fanout import BATCH_SUBPROTOCOL, TICK_SHARE, FanOut, Spectator
from broadcast.web.http import (
    ARBITER_PATH,
    CHESSGROUND_ROOT,
    STATIC_ROOT,
    ExtraRoutes,
    HttpReply,
    HttpRoutes,
)
from broadcast.web.listen import listen_error, listening_port
from broadcast.web.log_limit import LogLimit
from broadcast.web.request_check import repeated_header

__all__ = ["SPECTATOR_MESSAGE_LIMIT", "BroadcastServer", "parse_since", "snapshot_text"]

logger = logging.getLogger(__name__)

#: Spectator messages larger than this close the connection (1009, message too big).
SPECTATOR_MESSAGE_LIMIT = 4 * 1024


def parse_since(target: str) -> int | None:
    """The ``since`` query parameter of a feed URL; None when absent.

    Raises:
        ValueError: ``since`` is given but is not one non-negative integer.
    """
    values = parse_qs(urlsplit(target).query, keep_blank_values=True).get("since")
    if values is None:
        return None
    if len(values) != 1 or not values[0].isdigit() or not values[0].isascii():
        raise ValueError("since must be a non-negative integer")
    if len(values[0]) > len(str(MAX_ID)) or int(values[0]) > MAX_ID:
        raise ValueError(f"since must be at most {MAX_ID}")
    return int(values[0])


def _select_subprotocol(
    connection: ServerConnection, offered: Sequence[Subprotocol]
) -> Subprotocol | None:
    """``dgtcast.batch`` when offered (batched spectator frames); else none."""
    return BATCH_SUBPROTOCOL if BATCH_SUBPROTOCOL in offered else None


def snapshot_text(hub: Hub, *, delay: float, server_time: float) -> str:
    """``{"type": "snapshot", ...}`` of every board, built from the hub's cached texts;
    with ``"evaluations"`` (the latest of each board) once the hub has any."""
    head = encode_json(
        {"type": "snapshot", "seq": hub.seq, "server_time": server_time, "delay": delay}
    )
    boards = ",".join(hub.state_text(state.board) for state in hub.states())
    evaluations = hub.evaluations()
    more = f',"evaluations":{encode_json(to_json_dict(evaluations))}' if evaluations else ""
    return f'{head[:-1]},"boards":[{boards}]{more}}}'


def _nothing() -> None:
    """A listener remover that has nothing left to remove."""


def _to_response(reply: HttpReply) -> Response:
    reason = http.HTTPStatus(reply.status).phrase
    return Response(reply.status, reason, Headers(reply.headers), reply.body)


def _spectator_reply(message: str | bytes, sub: Subscription) -> str | None:
    """The answer to one spectator message (None: the sender answers a resume)."""
    if isinstance(message, bytes):
        return encode_json({"type": "error", "reason": "send text messages, not binary"})
    try:
        data = decode_untrusted_json(message)
    except ValueError as exc:
        return encode_json({"type": "error", "reason": str(exc)})
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "ping" and set(data) == {"type"}:
        return encode_json({"type": "pong", "server_time": time.time()})
    if kind == "resume" and set(data) == {"type", "since"}:
        since = data["since"]
        if isinstance(since, int) and not isinstance(since, bool) and 0 <= since <= MAX_ID:
            sub.resume(since)
            return None
        reason = f"since must be a non-negative integer up to {MAX_ID}"
        return encode_json({"type": "error", "reason": reason})
    reason = "spectators may only send resume and ping"
    return encode_json({"type": "error", "reason": reason})


async def _receive_feed(
    ws: ServerConnection, sub: Subscription, resumed: Callable[[], None]
) -> None:
    async for message in ws:
        reply = _spectator_reply(message, sub)
        if reply is None:
            resumed()
        else:
            await ws.send(reply)


class BroadcastServer:
    """The spectator feed, the arbiter channel, PGN and static files on one port.

    Use ``async with BroadcastServer(hub, handler, port=0) as server:`` (or ``start()``
    and ``close()``) and read the bound port from :attr:`port`.

    Args:
        hub: the live hub the daemon publishes to.
        handler: executes arbiter commands.
        host: interface to listen on.
        port: TCP port; 0 picks a free one.
        arbiter_token: the arbiters' shared secret; None disables ``/ws/arbiter``.
        delay: public delay in seconds: the spectator feed and the PGN and status
            endpoints show every board as it was ``delay`` seconds ago; the arbiter
            channel stays live. 0 means live, with no delay line at all.
        results: which results the public sees (broadcast/feed/public_results.py).
        public_hub: the hub spectators follow, fed from ``hub`` even without a delay (the
            engine's evaluations go there, never to the arbiter channel's ``hub``);
            None: a new one when needed, else ``hub`` itself.
        clock: time source of the delay line (tests move it by hand).
        write_limit: bytes buffered per connection before its sender waits.
        frame_interval: seconds between two frames to a spectator at most (0: a frame
            per publish or :meth:`~broadcast.feed.hub.Hub.batch` of them).
        tick_share: the share of the process's time the spectator feed's ticks may
            take: a costly tick delays the next (broadcast/web/fanout.py; None: never).
        slow_timeout: seconds a spectator may leave its write buffer full before it
            is dropped.
        auth_timeout: seconds an arbiter has to authenticate.
        command_timeout: seconds the handler has to answer a command.
        allowed_origins: origins besides the server's own whose pages may use the
            arbiter channel (broadcast/web/arbiter_guard.py).
        limits: connections per client address and in all (None: no limits;
            broadcast/web/connection_limits.py).
        open_timeout: seconds a client has to send its HTTP request or finish the
            websocket handshake.
        backlog: listen backlog (many spectators may connect at once).
        static_root: folder served at ``/``.
        vendor_root: folder served at ``/vendor/chessground/``.
        extra_routes: given the public hub, the routes answered besides a round's boards
            (past rounds, standings, prizes), asked in order.
    """

    def __init__(
        self,
        hub: Hub,
        handler: CommandHandler,
        host: str = "127.0.0.1",
        port: int = 0,
        arbiter_token: str | None = None,
        delay: float = 0.0,
        *,
        results: ResultsPolicy = "provisional",
        public_hub: Hub | None = None,
        clock: Callable[[], float] | None = None,
        write_limit: int = 32 * 1024,
        frame_interval: float = 0.0,
        tick_share: float | None = TICK_SHARE,
        slow_timeout: float = 30.0,
        auth_timeout: float = 5.0,
        command_timeout: float = 10.0,
        allowed_origins: tuple[str, ...] = (),
        limits: ConnectionLimits | None = None,
        open_timeout: float = 5.0,
        backlog: int = 1024,
        static_root: Path = STATIC_ROOT,
        vendor_root: Path = CHESSGROUND_ROOT,
        extra_routes: Callable[[Hub], Sequence[ExtraRoutes]] | None = None,
    ) -> None:
        if delay < 0:
            raise ValueError("delay cannot be negative")
        self.hub = hub
        self.host = host
        self.delay = delay
        self.public_delay: PublicDelay | None = None
        self.public_results: PublicResults | None = None
        self.public_hub = hub
        if delay > 0:
            self.public_delay = PublicDelay(
                hub, delay, public=public_hub, clock=clock, results=results
            )
            self.public_hub = self.public_delay.public
        elif results == "confirmed" or public_hub is not None:
            self.public_results = PublicResults(hub, results, public=public_hub)
            self.public_hub = self.public_results.public
        self.arbiter = ArbiterChannel(
            hub,
            handler,
            arbiter_token,
            auth_timeout=auth_timeout,
            command_timeout=command_timeout,
        )
        self.origins = OriginPolicy(host, allowed_origins)
        self._refused_pages = LogLimit()
        self._malformed = LogLimit()
        self.routes = HttpRoutes(
            self.public_hub,
            delay=delay,
            static_root=static_root,
            vendor_root=vendor_root,
            extra=() if extra_routes is None else extra_routes(self.public_hub),
        )
        self._requested_port = port
        self.limits = limits
        #: The connection policy of every port this process opens (the LiveChess API's too).
        self.policy = ConnectionPolicy(
            limits=limits, open_timeout=open_timeout, write_limit=write_limit, backlog=backlog
        )
        self._server: Server | None = None
        self._spectators: set[ServerConnection] = set()
        self._snapshot_cache: tuple[int, float, str] = (-1, 0.0, "")
        self.fanout = FanOut(
            self.public_hub,
            interval=frame_interval,
            write_limit=write_limit,
            slow_timeout=slow_timeout,
            tick_share=tick_share,
        )
        self._remove_listener = self.fanout.close

    @property
    def port(self) -> int:
        """The TCP port the server listens on (after :meth:`start`)."""
        return listening_port(self._server, "the server")

    @property
    def spectator_count(self) -> int:
        """How many spectators are connected."""
        return len(self._spectators)

    def spectator_buffers(self) -> list[int]:
        """Bytes waiting in each spectator's write buffer (the memory a slow one holds)."""
        return [ws.transport.get_write_buffer_size() for ws in self._spectators]

    async def start(self) -> None:
        """Start listening (and the delay line, if any).

        Raises:
            ListenError: a busy port, an unknown host, a privileged port (one line).
        """
        if self._server is not None:
            return
        try:
            self._server = await serve(
                self._handle,
                self.host,
                self._requested_port,
                process_request=self._process_request,
                **self.policy.serve_options(4 * ARBITER_MESSAGE_LIMIT),
                select_subprotocol=_select_subprotocol,
            )
        except OSError as exc:
            raise listen_error(self.host, self._requested_port, exc) from None
        if self.public_delay is not None:
            self.public_delay.start()
        if self.public_results is not None:
            self.public_results.start()
        logger.info("= broadcast server listening on %s:%d", self.host, self.port)

    async def close(self) -> None:
        """Close every connection (1001, going away) and stop listening."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        self._remove_listener()
        self._remove_listener = _nothing
        if self.public_delay is not None:
            await self.public_delay.close()
        if self.public_results is not None:
            self.public_results.close()

    async def __aenter__(self) -> BroadcastServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if (repeated := repeated_header(request.headers)) is not None:
            if (count := self._malformed.due()) is not None:
                logger.warning(
                    "= bad request from %s: %s sent twice (%d since the last line)",
                    connection.remote_address[0] if connection.remote_address else "?",
                    repeated,
                    count,
                )
            return connection.respond(http.HTTPStatus.BAD_REQUEST, f"{repeated} sent twice\n")
        reply = self.routes.route(request.method, request.path, request.headers)
        if reply is not None:
            return _to_response(reply)
        path = urlsplit(request.path).path
        if path == ARBITER_PATH:
            refused = self.origins.problem(
                request.headers.get("Host"), request.headers.get("Origin")
            )
            if refused is not None:
                if (count := self._refused_pages.due()) is not None:
                    logger.warning(
                        "= arbiter channel refused: %s (%d since the last line)", refused, count
                    )
                return connection.respond(http.HTTPStatus.FORBIDDEN, f"{refused}\n")
            connection.protocol.max_message_size = 4 * ARBITER_MESSAGE_LIMIT
            return None
        try:
            parse_since(request.path)
        except ValueError as exc:
            return connection.respond(http.HTTPStatus.BAD_REQUEST, f"{exc}\n")
        connection.protocol.max_message_size = SPECTATOR_MESSAGE_LIMIT
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        assert ws.request is not None
        if urlsplit(ws.request.path).path == ARBITER_PATH:
            await self.arbiter.serve(ws)
        else:
            batch = ws.subprotocol == BATCH_SUBPROTOCOL
            await self._serve_spectator(ws, parse_since(ws.request.path), batch)

    async def _serve_spectator(self, ws: ServerConnection, since: int | None, batch: bool) -> None:
        self._spectators.add(ws)
        fanout, hub = self.fanout, self.public_hub
        try:
            with hub.subscribe(since=since, alerts=False, boards=False, wake=False) as sub:
                spectator = Spectator(ws, sub, batch)
                await until_either_ends(
                    fanout.serve(spectator, self._feed_texts),
                    _receive_feed(ws, sub, lambda: fanout.wake(spectator)),
                )
        finally:
            self._spectators.discard(ws)

    def _snapshot(self) -> str:
        """The snapshot text, built once for every spectator that needs it at this seq
        within half a second (its ``server_time`` is that old at most; the viewer's ping
        refines the clock offset anyway)."""
        hub, now = self.public_hub, time.time()
        seq, made, text = self._snapshot_cache
        if seq != hub.seq or not 0 <= now - made < 0.5:
            text = snapshot_text(hub, delay=self.delay, server_time=now)
            self._snapshot_cache = (hub.seq, now, text)
        return text

    def _feed_texts(self, update: Update) -> list[str]:
        """What one spectator is sent for one update, in order."""
        if update.missed:
            return [self._snapshot()]
        texts = [message.text for message in update.events]
        if update.resumed is not None:
            resumed = {"type": "resumed", "since": update.resumed, "seq": update.seq}
            texts.insert(0, encode_json(resumed))
        return texts
