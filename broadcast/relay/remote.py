"""Arbiter commands over MQTT, from any relay to the daemon that owns the board.

Topics under the prefix (docs/deployment.md)::

    <prefix>/daemon/<id>/boards      retained Ownership: the daemon's boards and sections
    <prefix>/daemon/<id>/commands    QoS 1, the daemon's persistent session: commands
    <prefix>/relay/<relay>/replies   QoS 1: the daemons' answers to one relay

* Relay side: :class:`RemoteCommands` is the relay's ``CommandHandler``. It routes by the
  daemons' retained ownership announcements (a
  :class:`~broadcast.relay.routing.Router`), publishes with QoS 1 and waits for the
  answer. To a daemon that is offline, results and acknowledgements are still published
  (the broker keeps them in the daemon's persistent session) and the arbiter is told
  they are queued; accepting a position is refused (the pieces may move meanwhile) and
  ``set_clocks`` skips offline daemons.
* Daemon side: :class:`CommandListener` holds the persistent session (fixed client id,
  ``clean_session = false``), executes each command with the daemon's handler (which
  journals it), answers, and only then acknowledges the message (``PUBACK``): a daemon
  killed in between gets the command again when it returns.
* The wire format is in :mod:`broadcast.relay.wire`, the routing in
  :mod:`broadcast.relay.routing`, the start-up ownership check in
  :mod:`broadcast.relay.ownership`.

Exceptions::

    RelayOffline (ConnectionError)    the relay has no broker connection: nothing was sent
    CommandRejected (ValueError)      a request that is not exactly a command (from
                                      broadcast.feed.commands); logged, never raised on
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiomqtt

from broadcast.feed.commands import (
    ArbiterCommand,
    CommandHandler,
    CommandRejected,
    CommandReply,
    SetClocks,
)
from broadcast.feed.inbound import LIMITS, BadMessage, check_size
from broadcast.feed.signing import EventKey, NotSigned
from broadcast.outputs.mqtt_client import (
    MqttLink,
    MqttSettings,
    acknowledge,
    client_log,
    new_client,
    raise_if_cancelled,
)
from broadcast.outputs.mqtt_wire import Topics
from broadcast.relay.routing import (
    Delivery,
    Router,
    merge_clock_replies,
    plan_command,
    with_relay_ids,
)
from broadcast.relay.wire import CommandRequest, ReplayGuard, answer_payload, read_answer
from broadcast.web.log_limit import LogLimit

__all__ = [
    "CommandListener",
    "RelayOffline",
    "RemoteCommands",
]

log = logging.getLogger(__name__)
_client_log = client_log("broadcast.relay.remote.client")


class RelayOffline(ConnectionError):
    """The relay has no connection to the broker: nothing was sent."""


#: Publishes a request to a daemon's command topic (QoS 1); raises RelayOffline.
SendCommand = Callable[[str, bytes], Awaitable[None]]


class RemoteCommands:
    """A relay's ``CommandHandler``: commands go to the owning daemon over the broker.

    Args:
        router: who owns which board (the relay's view of the broker).
        send: publishes ``(daemon_id, payload)`` to that daemon's command topic.
        reply_to: the topic this relay reads answers on (:meth:`receive_answer`).
        timeout: seconds to wait for a daemon's answer.
        wall_clock: time source for ``sent_at``.
        key: the event key: only answers signed with it are taken.
    """

    def __init__(
        self,
        router: Router,
        send: SendCommand,
        *,
        reply_to: str,
        timeout: float = 8.0,
        wall_clock: Callable[[], float] = time.time,
        key: EventKey | None = None,
    ) -> None:
        self._key = key
        self._router = router
        self._send = send
        self.reply_to = reply_to
        self.timeout = timeout
        self._refused = LogLimit()
        self._wall_clock = wall_clock
        self._waiting: dict[str, asyncio.Future[CommandReply]] = {}
        self._names = (f"{secrets.token_hex(4)}-{n}" for n in itertools.count(1))

    async def execute(self, command: ArbiterCommand) -> CommandReply:
        """Route ``command``, deliver it, and answer as the arbiter channel expects."""
        plan = plan_command(command, self._router)
        if plan.reply is not None:
            return plan.reply
        replies = await asyncio.gather(*(self._deliver(d) for d in plan.deliveries))
        if isinstance(command, SetClocks):
            return merge_clock_replies(replies, plan.offline_boards)
        return replies[0]

    def receive_answer(self, payload: bytes) -> None:
        """An answer arrived on :attr:`reply_to`; wakes the command waiting for it."""
        answer = read_answer(payload) if len(payload) <= LIMITS["replies"] else None
        if answer is not None and self._key is not None:
            try:
                self._key.verify(self.reply_to, payload)
            except NotSigned:
                answer = None  # forged: the daemon's own answer is still awaited
        if answer is None:
            if (count := self._refused.due()) is not None:
                log.warning(
                    "< unreadable or unsigned command answer %r (%d since the last line)",
                    payload[:80],
                    count,
                )
            return
        waiter = self._waiting.pop(answer[0], None)
        if waiter is None or waiter.done():
            log.info("< late answer to %s: %s", answer[0], answer[1])
            return
        waiter.set_result(answer[1])

    async def _deliver(self, delivery: Delivery) -> CommandReply:
        request = CommandRequest(
            request=next(self._names),
            reply_to=self.reply_to,
            sent_at=self._wall_clock(),
            command=delivery.command,
        )
        waiter = asyncio.get_running_loop().create_future()
        if delivery.online:
            self._waiting[request.request] = waiter
        try:
            await self._send(delivery.daemon_id, request.to_payload())
            log.info("> %s to %s: %s", request.request, delivery.daemon_id, delivery.command)
            if not delivery.online:
                return _queued(delivery)
            return with_relay_ids(await self._wait(waiter, delivery), delivery.daemon_id)
        except RelayOffline:
            return CommandReply(
                ok=False, reason="the relay has no connection to the broker; nothing was sent"
            )
        finally:
            self._waiting.pop(request.request, None)

    async def _wait(self, waiter: asyncio.Future[CommandReply], delivery: Delivery) -> CommandReply:
        try:
            async with asyncio.timeout(self.timeout):
                return await waiter
        except TimeoutError:
            reason = (
                f"{delivery.subject}'s daemon {delivery.daemon_id!r} did not answer within"
                f" {self.timeout:g} s; the broker keeps the command and it may still be carried out"
            )
            return CommandReply(ok=False, reason=reason, details={"daemon": delivery.daemon_id})


def _queued(delivery: Delivery) -> CommandReply:
    reason = (
        f"{delivery.subject}'s daemon {delivery.daemon_id!r} is offline; the command is queued"
        " and will be carried out when it returns"
    )
    return CommandReply(
        ok=False, reason=reason, details={"queued": True, "daemon": delivery.daemon_id}
    )


# -- daemon side --------------------------------------------------------------------------


class CommandListener:
    """The daemon's end of the command bridge; run :meth:`run` as a task.

    Args:
        settings: the broker (the daemon's ``[mqtt]``).
        handler: executes commands (the daemon's round service journals each one).
        max_age: seconds after which ``accept_position`` and ``set_clocks`` that waited
            for an offline daemon are refused instead of carried out.
        wall_clock: time source, to judge ``sent_at``.
        remembered: answers kept to answer a redelivered request again.
        seen_file: with an event key, where the :class:`ReplayGuard` is kept across
            restarts (None: in memory only).
    """

    def __init__(
        self,
        settings: MqttSettings,
        handler: CommandHandler,
        *,
        max_age: float = 60.0,
        wall_clock: Callable[[], float] = time.time,
        remembered: int = 256,
        seen_file: Path | None = None,
    ) -> None:
        self._settings = settings
        self._handler = handler
        self.topics = Topics(settings.prefix, settings.daemon_id)
        self.max_age = max_age
        self._wall_clock = wall_clock
        self._answers: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._remembered = remembered
        self.subscribed = asyncio.Event()
        self.link = MqttLink(settings, "commands", self._new_client)
        self._refused = LogLimit()
        self._seen_file = seen_file
        self.guard = _load_guard(seen_file) if settings.event_key is not None else None

    async def run(self) -> None:
        """Listen, execute, answer; reconnect after losses; until cancelled."""
        await self.link.run(self._session)

    def _new_client(self) -> aiomqtt.Client:
        settings = self._settings
        return new_client(  # a persistent session; PUBACK once the command is journalled
            settings,
            f"dgtcast-{settings.daemon_id}-commands",
            logger=_client_log,
            clean_session=False,
            manual_ack=True,
        )

    async def _session(self, client: aiomqtt.Client) -> None:
        await client.subscribe(self.topics.daemon("commands"), qos=1)
        raise_if_cancelled()
        self.link.up()
        self.subscribed.set()
        log.info("= mqtt commands: listening on %s", self.topics.daemon("commands"))
        async for message in client.messages:
            payload = message.payload if isinstance(message.payload, bytes) else b""
            reply_to, answer = await self.receive_request(payload)
            if reply_to is not None and answer is not None:
                await client.publish(reply_to, answer, qos=1)
                raise_if_cancelled()
            acknowledge(client, message)

    async def receive_request(self, payload: bytes) -> tuple[str | None, bytes | None]:
        """Execute one request; returns where to send the answer, and the answer."""
        try:
            check_size("commands", payload)
            request = CommandRequest.from_payload(payload)
            self._check_reply_to(request.reply_to)
            if (key := self._settings.event_key) is not None:
                key.verify(self.topics.daemon("commands"), payload)
        except NotSigned as exc:
            self._refuse(payload, str(exc))
            reason = f"{exc}: not carried out (the relay's [mqtt] event_key must be the daemon's)"
            return request.reply_to, self._answer(request, CommandReply(ok=False, reason=reason))
        except (BadMessage, CommandRejected) as exc:
            self._refuse(payload, exc.reason if isinstance(exc, CommandRejected) else str(exc))
            return None, None
        known = self._answers.get(request.request)  # delivered again: answered again
        if known is not None:
            return request.reply_to, known
        guard, now = self.guard, self._wall_clock()
        if guard is not None and (why := guard.refusal(request, now)) is not None:
            self._refuse(payload, why)
            return request.reply_to, self._answer(request, CommandReply(ok=False, reason=why))
        known = self._answer(request, await self._execute(request))
        self._remember(request.request, known)
        if guard is not None:
            guard.record(request, now)
            self._save_guard(guard)
        return request.reply_to, known

    def _answer(self, request: CommandRequest, reply: CommandReply) -> bytes:
        """The answer to ``request``, signed with the event key when there is one."""
        answer = answer_payload(request.request, self._settings.daemon_id, reply)
        key = self._settings.event_key
        return answer if key is None else key.sign(request.reply_to, answer)

    def _save_guard(self, guard: ReplayGuard) -> None:
        if self._seen_file is None:
            return
        try:
            part = self._seen_file.with_name(self._seen_file.name + ".part")
            part.write_text(guard.to_json())
            os.replace(part, self._seen_file)
        except OSError as exc:
            log.warning("= commands carried out not kept in %s: %s", self._seen_file, exc)

    def _refuse(self, payload: bytes, why: str) -> None:
        """One WARNING line every 10 s at most about refused commands."""
        if (count := self._refused.due()) is not None:
            log.warning(
                "< command refused %r: %s; %d refused since the last line",
                payload[:80],
                why[:200],
                count,
            )

    def _check_reply_to(self, topic: str) -> None:
        """An answer goes to a relay's answer topic only, never to a topic of the event
        that others read (a board's state, a daemon's status)."""
        relay = topic.removeprefix(f"{self.topics.prefix}/relay/").removesuffix("/replies")
        wrong = not relay or any(c in relay for c in "/+#")
        if wrong or topic != self.topics.relay_replies(relay):
            raise BadMessage(f"answers go to <prefix>/relay/<id>/replies, not {topic[:80]!r}")

    async def _execute(self, request: CommandRequest) -> CommandReply:
        command = request.command
        age = self._wall_clock() - request.sent_at
        if not command.DEFERRABLE and age > self.max_age:
            reason = f"{command.TYPE} came {age:.0f} s late (the daemon was away); send it again"
            log.warning("< %s refused: %s", request.request, reason)
            return CommandReply(ok=False, reason=reason)
        log.info("< remote command %s: %s", request.request, command)
        try:
            return await self._handler.execute(command)
        except Exception:
            log.exception("remote command %s failed", command)
            return CommandReply(ok=False, reason="internal error")

    def _remember(self, request: str, answer: bytes) -> None:
        self._answers[request] = answer
        while len(self._answers) > self._remembered:
            self._answers.popitem(last=False)


def _load_guard(path: Path | None) -> ReplayGuard:
    """The guard kept in ``path``; a new one when there is none. One that cannot be read
    remembers nothing but refuses every request sent before now."""
    if path is None or not path.exists():
        return ReplayGuard()
    try:
        return ReplayGuard.from_json(path.read_text())
    except (OSError, ValueError) as exc:
        log.warning("= %s unreadable (%s): commands sent before now are refused", path, exc)
        return ReplayGuard(floor=time.time())
