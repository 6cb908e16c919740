"""Arbiter commands over MQTT, from any relay to the daemon that owns the board.

Topics under the prefix (docs/deployment.md)::

    <prefix>/daemon/<id>/boards      retained Ownership: the daemon's boards and sections
    <prefix>/daemon/<id>/commands    QoS 1, the daemon's persistent session: commands
    <prefix>/relay/<relay>/replies   QoS 1: the daemons' answers to one relay

A command travels as ``{"request": "…", "reply_to": "<topic>", "sent_at": t,
"command": {"type": "set_result", "board": 3, "result": "1-0"}}`` and is answered with
``{"request": "…", "daemon": "<id>", "ok": true, "reason": "", "details": {}}``.

* Relay side: :class:`RemoteCommands` is the relay's ``CommandHandler``. It routes by the
  daemons' retained ownership announcements (a :class:`Router`), publishes with QoS 1
  and waits for the answer. To a daemon that is offline, results and acknowledgements
  are still published (the broker keeps them in the daemon's persistent session) and
  the arbiter is told they are queued; accepting a position is refused (the pieces may
  move meanwhile) and ``set_clocks`` skips offline daemons.
* Daemon side: :class:`CommandListener` holds the persistent session (fixed client id,
  ``clean_session = false``), executes each command with the daemon's handler (which
  journals it), answers, and only then acknowledges the message (``PUBACK``): a daemon
  killed in between gets the command again when it returns.
* At start, :func:`check_ownership` reads the other daemons' announcements: a board or
  section that a live daemon owns is a clash, and the daemon refuses to start.

Alert ids are per daemon; a relay shows alert ``local_id`` of board ``board`` as
:func:`relay_alert_id` (``local_id * 10000 + board``), unique across daemons because
each board has one owner.

Exceptions::

    RelayOffline (ConnectionError)    the relay has no broker connection: nothing was sent
    CommandRejected (ValueError)      a request that is not exactly a command (from
                                      broadcast.arbiter_channel); answered, never raised on
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import itertools
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import aiomqtt

from broadcast.arbiter_channel import CommandRejected, parse_command
from broadcast.feed import encode_json
from broadcast.httpclient import Backoff
from broadcast.messages import (
    AcceptPosition,
    AckAlert,
    ArbiterCommand,
    CommandHandler,
    CommandReply,
    ConfirmResult,
    SetClocks,
    SetResult,
)
from broadcast.mqtt import (
    MqttSettings,
    Ownership,
    Topics,
    client_log,
    connected,
    raise_if_cancelled,
    tls_context,
)

__all__ = [
    "BOARD_SPAN",
    "CommandListener",
    "CommandPlan",
    "CommandRequest",
    "Delivery",
    "RelayOffline",
    "RemoteCommands",
    "Router",
    "check_ownership",
    "command_to_json",
    "find_clashes",
    "plan_command",
    "reconnecting",
    "relay_alert_id",
]

log = logging.getLogger(__name__)
_client_log = client_log("broadcast.remote.client")

#: Relay alert ids are ``local_id * BOARD_SPAN + board`` for boards below this.
BOARD_SPAN = 10_000
_WIDE = 1 << 50  # boards from BOARD_SPAN on: a pairing above every id of the first form

_NAMES: dict[type[ArbiterCommand], str] = {
    AckAlert: "ack_alert",
    SetResult: "set_result",
    ConfirmResult: "confirm_result",
    AcceptPosition: "accept_position",
    SetClocks: "set_clocks",
}
#: Commands kept for an offline daemon: what an arbiter decided stays true later.
_QUEUEABLE = (AckAlert, SetResult, ConfirmResult)


def relay_alert_id(board: int, local_id: int) -> int:
    """The id a relay gives alert ``local_id`` of a daemon, raised for ``board``."""
    if board < BOARD_SPAN:
        return local_id * BOARD_SPAN + board
    total = board + local_id
    return _WIDE + total * (total + 1) // 2 + local_id


def command_to_json(command: ArbiterCommand) -> dict[str, Any]:
    """A command as the arbiter channel spells it: ``{"type": "set_result", ...}``."""
    values = {f.name: getattr(command, f.name) for f in dataclasses.fields(command)}
    return {"type": _NAMES[type(command)], **values}


# -- requests and answers ---------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandRequest:
    """One command on its way to a daemon."""

    request: str
    reply_to: str
    sent_at: float
    command: ArbiterCommand

    def to_payload(self) -> bytes:
        """The request's JSON."""
        data = {
            "request": self.request,
            "reply_to": self.reply_to,
            "sent_at": self.sent_at,
            "command": command_to_json(self.command),
        }
        return encode_json(data).encode()

    @classmethod
    def from_payload(cls, payload: bytes) -> CommandRequest:
        """Read a request.

        Raises:
            CommandRejected: not a request, or its command is not exactly a command.
        """
        try:
            data = json.loads(payload)
            request, reply_to = str(data["request"]), str(data["reply_to"])
            sent_at, text = float(data["sent_at"]), encode_json(data["command"])
        except (ValueError, TypeError, KeyError):
            raise CommandRejected("not a command request") from None
        command, _ = parse_command(text)
        return cls(request=request, reply_to=reply_to, sent_at=sent_at, command=command)


def _answer_payload(request: str, daemon_id: str, reply: CommandReply) -> bytes:
    data = {
        "request": request,
        "daemon": daemon_id,
        "ok": reply.ok,
        "reason": reply.reason,
        "details": reply.details,
    }
    return encode_json(data).encode()


def _read_answer(payload: bytes) -> tuple[str, CommandReply] | None:
    try:
        data = json.loads(payload)
        details = data.get("details") or {}
        reply = CommandReply(ok=bool(data["ok"]), reason=str(data["reason"]), details=details)
        return str(data["request"]), reply
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


# -- routing (pure) -----------------------------------------------------------------------


class Router(Protocol):
    """Who owns what, as a relay learnt it from the broker."""

    def owner_of(self, board: int) -> str | None:
        """The daemon that announced ``board``."""
        ...

    def boards_of(self, daemon_id: str) -> tuple[int, ...]:
        """The boards routed to ``daemon_id``."""
        ...

    def daemon_ids(self) -> list[str]:
        """Every daemon that owns at least one board."""
        ...

    def is_online(self, daemon_id: str) -> bool:
        """Whether the daemon's retained status says ``online``."""
        ...

    def alert_origin(self, alert_id: int) -> tuple[str, int] | None:
        """The daemon and its own id of open alert ``alert_id`` (a relay id)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """One command for one daemon, as that daemon knows it (its own alert ids)."""

    daemon_id: str
    command: ArbiterCommand
    online: bool
    subject: str  # "board 7", "alert 70007": names the target in messages


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandPlan:
    """What to do with a command: answer at once, or deliver it (and merge the answers)."""

    reply: CommandReply | None = None
    deliveries: tuple[Delivery, ...] = ()
    offline_boards: dict[str, str] = field(default_factory=dict)  # set_clocks: board → why


def _error(reason: str, **details: Any) -> CommandPlan:
    return CommandPlan(reply=CommandReply(ok=False, reason=reason, details=details))


def plan_command(command: ArbiterCommand, router: Router) -> CommandPlan:
    """Where ``command`` goes; an answer at once when it cannot go anywhere."""
    if isinstance(command, SetClocks):
        return _plan_set_clocks(router)
    target: ArbiterCommand
    if isinstance(command, AckAlert):
        origin = router.alert_origin(command.id)
        if origin is None:
            return _error(f"alert {command.id} is not open (acknowledged already, or unknown)")
        daemon_id, local_id = origin
        target, subject = AckAlert(id=local_id), f"alert {command.id}"
    else:
        owner = router.owner_of(command.board)
        if owner is None:
            return _error(f"board {command.board} is not announced by any daemon")
        daemon_id, target, subject = owner, command, f"board {command.board}"
    online = router.is_online(daemon_id)
    if not online and not isinstance(target, _QUEUEABLE):
        return _error(
            f"{subject}'s daemon {daemon_id!r} is offline; {_NAMES[type(target)]} is not"
            " queued (the position may change meanwhile): try again when it is back",
            daemon=daemon_id,
        )
    delivery = Delivery(daemon_id=daemon_id, command=target, online=online, subject=subject)
    return CommandPlan(deliveries=(delivery,))


def _plan_set_clocks(router: Router) -> CommandPlan:
    daemons = router.daemon_ids()
    if not daemons:
        return _error("no daemon has announced any board")
    deliveries, offline = [], {}
    for daemon_id in daemons:
        if router.is_online(daemon_id):
            subject = f"daemon {daemon_id!r}"
            command = SetClocks()
            deliveries.append(
                Delivery(daemon_id=daemon_id, command=command, online=True, subject=subject)
            )
        else:
            for board in router.boards_of(daemon_id):
                offline[str(board)] = f"its daemon {daemon_id!r} is offline"
    return CommandPlan(deliveries=tuple(deliveries), offline_boards=offline)


def _merge_clock_replies(replies: Iterable[CommandReply], offline: dict[str, str]) -> CommandReply:
    done: set[int] = set()
    failed = dict(offline)
    for reply in replies:
        done.update(int(b) for b in reply.details.get("set", []))
        failed.update({str(b): str(why) for b, why in reply.details.get("failed", {}).items()})
        if not reply.ok and not reply.details.get("failed"):
            failed["?"] = reply.reason
    details: dict[str, Any] = {"set": sorted(done)}
    if not failed:
        return CommandReply(ok=True, details=details)
    details["failed"] = failed
    reasons = "; ".join(f"board {b}: {why}" for b, why in sorted(failed.items()))
    return CommandReply(ok=False, reason=reasons, details=details)


def _relay_ids(reply: CommandReply) -> CommandReply:
    """A daemon's answer with its alert ids turned into relay ids."""
    alerts = reply.details.get("alerts")
    if not isinstance(alerts, list):
        return reply
    shown = []
    for alert in alerts:
        if isinstance(alert, dict) and isinstance(alert.get("id"), int):
            alert = {**alert, "id": relay_alert_id(int(alert["board"]), alert["id"])}
        shown.append(alert)
    return CommandReply(
        ok=reply.ok, reason=reply.reason, details={**reply.details, "alerts": shown}
    )


# -- relay side ---------------------------------------------------------------------------


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
    """

    def __init__(
        self,
        router: Router,
        send: SendCommand,
        *,
        reply_to: str,
        timeout: float = 8.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._router = router
        self._send = send
        self.reply_to = reply_to
        self.timeout = timeout
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
            return _merge_clock_replies(replies, plan.offline_boards)
        return replies[0]

    def receive_answer(self, payload: bytes) -> None:
        """An answer arrived on :attr:`reply_to`; wakes the command waiting for it."""
        answer = _read_answer(payload)
        if answer is None:
            log.warning("< unreadable command answer %r", payload[:80])
            return
        waiter = self._waiting.pop(answer[0], None)
        if waiter is None or waiter.done():
            log.info("< late answer to %s: %s", answer[0], answer[1])
            return
        waiter.set_result(_relay_ids(answer[1]))

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
            return await self._wait(waiter, delivery)
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


async def reconnecting(
    connect: Callable[[], aiomqtt.Client],
    session: Callable[[aiomqtt.Client], Awaitable[None]],
    backoff: Backoff,
    what: str,
) -> None:
    """Run ``session`` on a fresh connection, again after each loss; until cancelled.

    ``session`` resets ``backoff`` once it is under way; broker trouble is never raised.
    """
    while True:
        try:
            async with connected(connect()) as client:
                await session(client)
        except aiomqtt.MqttError as exc:
            log.warning("= mqtt %s: %s", what, exc)
        delay = backoff.next_delay()
        log.info("= mqtt %s: reconnect in %.1fs", what, delay)
        await asyncio.sleep(delay)


class CommandListener:
    """The daemon's end of the command bridge; run :meth:`run` as a task.

    Args:
        settings: the broker (the daemon's ``[mqtt]``).
        handler: executes commands (the daemon's round service journals each one).
        max_age: seconds after which ``accept_position`` and ``set_clocks`` that waited
            for an offline daemon are refused instead of carried out.
        wall_clock: time source, to judge ``sent_at``.
        remembered: answers kept to answer a redelivered request again.
    """

    def __init__(
        self,
        settings: MqttSettings,
        handler: CommandHandler,
        *,
        max_age: float = 60.0,
        wall_clock: Callable[[], float] = time.time,
        remembered: int = 256,
    ) -> None:
        self._settings = settings
        self._handler = handler
        self.topics = Topics(settings.prefix, settings.daemon_id)
        self.max_age = max_age
        self._wall_clock = wall_clock
        self._answers: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._remembered = remembered
        self._backoff = Backoff(initial=settings.backoff_initial, cap=settings.backoff_cap)
        self.subscribed = asyncio.Event()

    async def run(self) -> None:
        """Listen, execute, answer; reconnect after losses; until cancelled."""
        await reconnecting(self._new_client, self._session, self._backoff, "commands")

    def _new_client(self) -> aiomqtt.Client:
        settings = self._settings
        client = aiomqtt.Client(
            settings.host,
            settings.port,
            username=settings.username,
            password=settings.password,
            identifier=f"dgtcast-{settings.daemon_id}-commands",
            clean_session=False,
            keepalive=settings.keepalive,
            timeout=settings.time_limit,
            tls_context=tls_context(settings),
            logger=_client_log,
        )
        client._client.manual_ack_set(True)  # PUBACK once the command is journalled
        return client

    async def _session(self, client: aiomqtt.Client) -> None:
        await client.subscribe(self.topics.daemon("commands"), qos=1)
        raise_if_cancelled()
        self._backoff.reset()
        self.subscribed.set()
        log.info("= mqtt commands: listening on %s", self.topics.daemon("commands"))
        async for message in client.messages:
            payload = message.payload if isinstance(message.payload, bytes) else b""
            reply_to, answer = await self.receive_request(payload)
            if reply_to is not None and answer is not None:
                await client.publish(reply_to, answer, qos=1)
                raise_if_cancelled()
            client._client.ack(message.mid, message.qos)

    async def receive_request(self, payload: bytes) -> tuple[str | None, bytes | None]:
        """Execute one request; returns where to send the answer, and the answer."""
        try:
            request = CommandRequest.from_payload(payload)
        except CommandRejected as exc:
            log.warning("< unreadable command %r: %s", payload[:80], exc.reason)
            return None, None
        known = self._answers.get(request.request)
        if known is None:
            known = _answer_payload(
                request.request, self._settings.daemon_id, await self._execute(request)
            )
            self._remember(request.request, known)
        return request.reply_to, known

    async def _execute(self, request: CommandRequest) -> CommandReply:
        command = request.command
        age = self._wall_clock() - request.sent_at
        if isinstance(command, AcceptPosition | SetClocks) and age > self.max_age:
            name = _NAMES[type(command)]
            reason = f"{name} came {age:.0f} s late (the daemon was away); send it again"
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


# -- ownership at start ---------------------------------------------------------------------


def _ranges(numbers: list[int]) -> str:
    parts: list[str] = []
    for _, run in itertools.groupby(enumerate(numbers), lambda pair: pair[1] - pair[0]):
        values = [n for _, n in run]
        parts.append(str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}")
    return ", ".join(parts)


def _clash_line(noun: str, listing: str, count: int, other: str) -> str:
    nouns, verb = (noun, "belongs") if count == 1 else (noun + "s", "belong")
    return (
        f'mqtt: {nouns} {listing} already {verb} to daemon "{other}", online on the broker:'
        f" give each daemon its own {noun}s"
    )


def find_clashes(
    own: Ownership, claims: Iterable[Ownership], online: Mapping[str, bool]
) -> list[str]:
    """One line per live daemon that already owns some of ``own``'s boards or sections.

    A daemon that is offline is no clash: its boards may be taken over (a spare PC).
    """
    lines = []
    for other in sorted(claims, key=lambda o: o.daemon_id):
        if other.daemon_id == own.daemon_id or not online.get(other.daemon_id, False):
            continue
        boards = sorted(set(own.boards) & set(other.boards))
        sections = sorted((set(own.sections) & set(other.sections)) - {""})
        if boards:
            lines.append(_clash_line("board", _ranges(boards), len(boards), other.daemon_id))
        if sections:
            names = ", ".join(f'"{s}"' for s in sections)
            lines.append(_clash_line("section", names, len(sections), other.daemon_id))
    return lines


@dataclass
class _ClaimsSeen:
    claims: dict[str, Ownership] = field(default_factory=dict)
    online: dict[str, bool] = field(default_factory=dict)
    probed: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def receive(self, topic: str, payload: bytes, probe: str) -> None:
        parts = topic.split("/")
        if topic == probe:
            self.probed = True
        elif parts[-1] == "boards" and (claim := Ownership.from_payload(payload)) is not None:
            self.claims[parts[-2]] = claim
        elif parts[-1] == "status":
            self.online[parts[-2]] = payload == b"online"
        self.changed.set()

    async def wait(self, condition: Callable[[], bool]) -> None:
        while not condition():
            self.changed.clear()
            await self.changed.wait()


async def check_ownership(
    settings: MqttSettings, own: Ownership, *, grace: float | None = None
) -> list[str] | None:
    """Problems with claiming ``own`` on the broker (empty: none); None when unreachable.

    Reads every retained announcement and status. When a daemon with our own id is still
    online (our previous run before a crash, not yet noticed by the broker), waits up to
    ``grace`` seconds (default 1.5 × keepalive, the broker's limit) for it to go.
    """
    grace = 1.5 * settings.keepalive if grace is None else grace
    seen = _ClaimsSeen()
    try:
        async with asyncio.timeout(2 * settings.time_limit + grace):
            await _read_claims(settings, seen, grace)
    except (aiomqtt.MqttError, TimeoutError) as exc:
        log.warning("= mqtt: could not check board ownership (%s); starting anyway", exc)
        return None
    lines = find_clashes(own, seen.claims.values(), seen.online)
    if seen.online.get(own.daemon_id, False):
        lines.insert(
            0,
            f'mqtt.daemon_id: "{own.daemon_id}" is online on the broker already'
            " (another daemon with the same id?): give each daemon its own mqtt.daemon_id",
        )
    return lines


async def _read_claims(settings: MqttSettings, seen: _ClaimsSeen, grace: float) -> None:
    topics = Topics(settings.prefix, settings.daemon_id)
    probe = topics.daemon(f"probe-{secrets.token_hex(4)}")
    checker = aiomqtt.Client(
        settings.host,
        settings.port,
        username=settings.username,
        password=settings.password,
        identifier=f"dgtcast-{settings.daemon_id}-check-{secrets.token_hex(3)}",
        timeout=settings.time_limit,
        tls_context=tls_context(settings),
        logger=_client_log,
    )
    async with connected(checker) as client:
        pattern = [(topics.daemon(leaf, "+"), 1) for leaf in ("boards", "status")]
        await client.subscribe([*pattern, (probe, 1)])
        raise_if_cancelled()
        reader = asyncio.ensure_future(_read_into(client, seen, probe))
        try:
            await client.publish(probe, b"probe", qos=1)  # comes back after the retained ones
            raise_if_cancelled()
            await seen.wait(lambda: seen.probed)
            if seen.online.get(settings.daemon_id, False):
                log.warning("= mqtt: %s still online; waiting %.0fs", settings.daemon_id, grace)
                async with asyncio.timeout(grace):
                    await seen.wait(lambda: not seen.online.get(settings.daemon_id, False))
        except TimeoutError:
            pass  # still online after the grace: reported as a clash
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await reader


async def _read_into(client: aiomqtt.Client, seen: _ClaimsSeen, probe: str) -> None:
    async for message in client.messages:
        payload = message.payload if isinstance(message.payload, bytes) else b""
        seen.receive(message.topic.value, payload, probe)
