"""The arbiter channel ``ws://…/ws/arbiter``: authenticated, always live, commands.

Conversation::

    client  {"type": "auth", "token": "…"}              first message, within 5 s
    server  {"type": "snapshot", "seq": n, "boards": [...], "alerts": [open alerts],
             "resolved": [the last resolved alerts]}
    server  {"type": "alert", "id": 7, "kind": "flag_fall", "state": "open", ...}
            every new version of an alert (raised, updated, acknowledged, resolved), live
    server  {"type": "move", "seq": n, ...}              live feed events, as on /ws
    client  {"type": "set_result", "board": 3, "result": "1-0", "ref": "r1"}
    server  {"type": "ok", "ref": "r1", "command": "set_result", "details": {}}
            or {"type": "error", "ref": "r1", "reason": "…"}

A wrong token gets ``{"type": "error", "reason": "bad token"}`` and close code 1008
(policy violation); so does any other first message, and silence past the deadline.
A right token is let in at once; the answers to wrong ones (and to other first
messages) are held, longer with each one from the same client, and logged within
bounds; browser pages of other origins are refused before the handshake
(:mod:`broadcast.web.arbiter_guard`).
Commands are decoded strictly by the one command codec of :mod:`broadcast.feed.commands`
(:func:`~broadcast.feed.commands.command_from_json`) before the :class:`CommandHandler` sees
them: malformed JSON, an unknown type, a missing, extra or wrongly typed field, or a
message over 16 KiB gets an error reply and changes nothing.

Exceptions: :class:`~broadcast.feed.commands.CommandRejected` (a ``ValueError``) is the only
one raised here; it carries the reason sent to the client and the client's ``ref``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import time
from collections.abc import Coroutine
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode

from broadcast.feed.alerts import alert_to_json
from broadcast.feed.commands import (
    ArbiterCommand,
    CommandHandler,
    CommandRejected,
    CommandReply,
    Ref,
    command_from_json,
)
from broadcast.feed.events import encode_json, state_to_json
from broadcast.feed.hub import Hub
from broadcast.feed.messages import MAX_ID, NOT_UNICODE, decode_untrusted_json
from broadcast.feed.subscriptions import Subscription, Update
from broadcast.web.arbiter_guard import TokenThrottle

__all__ = [
    "ARBITER_MESSAGE_LIMIT",
    "SNAPSHOT_RESOLVED",
    "ArbiterChannel",
    "parse_command",
    "until_either_ends",
]

logger = logging.getLogger(__name__)

#: How many of the last resolved alerts a snapshot holds (the hub remembers more).
SNAPSHOT_RESOLVED = 100

#: Larger arbiter messages get an error reply (websocket frames are cut off at 4 times this).
ARBITER_MESSAGE_LIMIT = 16 * 1024


async def until_either_ends(
    first: Coroutine[Any, Any, None], second: Coroutine[Any, Any, None]
) -> None:
    """Run a connection's sender and receiver; when one ends, cancel the other.

    A closed or reset connection (a client gone without a closing handshake) ends either
    quietly; any other exception is raised.
    """
    tasks = {asyncio.create_task(first), asyncio.create_task(second)}
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
    for result in results:
        if isinstance(result, Exception) and not isinstance(
            result, ConnectionClosed | ConnectionError
        ):
            raise result


def _address_of(ws: ServerConnection) -> str:
    """The client's IP address (the key of the token throttle)."""
    remote = ws.remote_address
    return str(remote[0]) if isinstance(remote, tuple) and remote else "?"


def _ref_of(data: dict[str, Any]) -> Ref:
    ref = data.get("ref")
    if ref is None or (isinstance(ref, str) and len(ref) <= 100):
        return ref
    if isinstance(ref, int) and not isinstance(ref, bool) and abs(ref) <= MAX_ID:
        return ref
    raise CommandRejected(
        f"'ref' must be a string (at most 100 characters) or an integer up to {MAX_ID}"
    )


def _decode(text: str | bytes) -> dict[str, Any]:
    if isinstance(text, bytes):
        raise CommandRejected("send text messages, not binary")
    if len(text.encode(errors="surrogatepass")) > ARBITER_MESSAGE_LIMIT:
        raise CommandRejected(f"message too large (limit {ARBITER_MESSAGE_LIMIT} bytes)")
    try:
        data = decode_untrusted_json(text)
    except ValueError as exc:
        raise CommandRejected(str(exc)) from None
    if not isinstance(data, dict):
        raise CommandRejected("a message must be a JSON object")
    return data


def parse_command(text: str | bytes) -> tuple[ArbiterCommand, Ref]:
    """A client message as an arbiter command and the client's ``ref``.

    Raises:
        CommandRejected: the message is not exactly one of the commands.
    """
    data = _decode(text)
    ref = _ref_of(data)
    fields = {name: value for name, value in data.items() if name != "ref"}
    return command_from_json(fields, ref), ref


def _reply(kind: str, ref: Ref, **fields: Any) -> str:
    data: dict[str, Any] = {"type": kind}
    if ref is not None:
        data["ref"] = ref
    return encode_json({**data, **fields})


class ArbiterChannel:
    """Serves ``/ws/arbiter`` connections: authentication, live alerts, commands.

    Args:
        hub: the live hub (never the delayed one).
        handler: executes the commands (the daemon, or a relay).
        token: the shared secret; None or empty disables the channel.
        auth_timeout: seconds a client has to send its ``auth`` message.
        command_timeout: seconds the handler has to answer a command.
        throttle: slows down wrong tokens per client address (broadcast/web/arbiter_guard.py).
    """

    def __init__(
        self,
        hub: Hub,
        handler: CommandHandler,
        token: str | None,
        *,
        auth_timeout: float = 5.0,
        command_timeout: float = 10.0,
        throttle: TokenThrottle | None = None,
    ) -> None:
        self.hub = hub
        self.handler = handler
        self._token = token.encode() if token else None
        self.auth_timeout = auth_timeout
        self.command_timeout = command_timeout
        self.throttle = throttle or TokenThrottle()

    async def serve(self, ws: ServerConnection) -> None:
        """Run one arbiter connection until either side closes it."""
        if not await self._authenticate(ws):
            return
        with self.hub.subscribe(alerts=True) as sub:
            await until_either_ends(self._send_updates(ws, sub), self._receive_commands(ws))

    async def _refuse(self, ws: ServerConnection, reason: str) -> bool:
        with contextlib.suppress(ConnectionClosed):
            await ws.send(_reply("error", None, reason=reason))
            await ws.close(CloseCode.POLICY_VIOLATION, reason)
        return False

    async def _authenticate(self, ws: ServerConnection) -> bool:
        try:
            async with asyncio.timeout(self.auth_timeout):
                message = await ws.recv()
        except TimeoutError:
            return await self._refuse(ws, "auth timeout")
        except ConnectionClosed:
            return False
        try:
            data = _decode(message)
        except CommandRejected as exc:
            reason = exc.reason if exc.reason == NOT_UNICODE else "authenticate first"
            return await self._failed(ws, reason)
        if data.get("type") != "auth" or set(data) != {"type", "token"}:
            return await self._failed(ws, "authenticate first")
        if self._token is None:
            return await self._refuse(ws, "arbiter channel disabled")
        token = data["token"]
        if not isinstance(token, str) or not hmac.compare_digest(token.encode(), self._token):
            return await self._failed(ws, "bad token")
        self.throttle.succeeded(_address_of(ws))
        return True

    async def _failed(self, ws: ServerConnection, reason: str) -> bool:
        """A first message that lets no one in: counted, answered when the throttle says."""
        if self._token is not None:
            await self.throttle.failed(_address_of(ws), ws.wait_closed)
        return await self._refuse(ws, reason)

    async def _send_updates(self, ws: ServerConnection, sub: Subscription) -> None:
        while True:
            update = await sub.receive()
            for text in self._texts(update):
                await ws.send(text)

    def _texts(self, update: Update) -> list[str]:
        if update.missed:
            return [self._snapshot()]
        texts = [message.text for message in update.events]
        texts += [encode_json(alert_to_json(alert)) for alert in update.alerts]
        return texts

    def _snapshot(self) -> str:
        hub = self.hub
        return encode_json(
            {
                "type": "snapshot",
                "seq": hub.seq,
                "server_time": time.time(),
                "boards": [state_to_json(s) for s in hub.states()],
                "alerts": [alert_to_json(a) for a in hub.open_alerts()],
                "resolved": [alert_to_json(a) for a in hub.resolved_alerts(SNAPSHOT_RESOLVED)],
            }
        )

    async def _receive_commands(self, ws: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for message in ws:
                await ws.send(await self._answer(message))

    async def _answer(self, message: str | bytes) -> str:
        try:
            command, ref = parse_command(message)
        except CommandRejected as exc:
            return _reply("error", exc.ref, reason=exc.reason)
        logger.info("< arbiter command %s", command)
        reply = await self._execute(command)
        if reply.ok:
            return _reply("ok", ref, command=command.TYPE, details=reply.details)
        details = {"details": reply.details} if reply.details else {}
        return _reply("error", ref, reason=reply.reason, **details)

    async def _execute(self, command: ArbiterCommand) -> CommandReply:
        try:
            async with asyncio.timeout(self.command_timeout):
                return await self.handler.execute(command)
        except TimeoutError:
            return CommandReply(ok=False, reason="the daemon did not answer in time")
        except Exception:
            logger.exception("arbiter command %s failed", command)
            return CommandReply(ok=False, reason="internal error")
