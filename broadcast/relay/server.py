"""A relay: the whole event, rebuilt from what the daemons keep on the MQTT broker.

``dgtcast relay`` serves exactly what one daemon serves (viewer and arbiter pages,
``/round.pgn``, ``/board/N.pgn``, ``/status.json``, ``/ws`` with resume, ``/ws/arbiter``,
``/rounds.json``, ``/round/N.pgn``, past games, ``/standings.json``, the lichess push,
the PGN folder, the public delay) for every board of every daemon. It holds nothing of
its own: it subscribes to the daemons' retained topics (docs/mqtt.md,
docs/deployment.md) and feeds its own :class:`~broadcast.feed.hub.Hub`::

    <prefix>/board/<n>/state          the board's whole BoardState   → hub.publish_board
    <prefix>/daemon/<id>/boards       who owns which board            → command routing
    <prefix>/daemon/<id>/status       online / offline                → boards shown offline
    <prefix>/daemon/<id>/alerts       the daemon's open alerts        → hub alerts
    <prefix>/daemon/<id>/resolved     its last resolutions            → hub alerts, resolved
    <prefix>/section/<key>/…          past rounds, standings          → RelayRounds
    <prefix>/board/<n>/eval           the engine's evaluation         → the public hub, once
                                                                        its position is public

so a relay that starts (or restarts, or reconnects after a broker restart) has the
current picture at once, and more relays behind a load balancer serve more spectators.
Arbiter commands go to the owning daemon through :class:`~broadcast.relay.remote.RemoteCommands`.

:class:`RelayView` is the pure core (topic + payload in, hub updates out);
:class:`RelayLink` is the MQTT connection; :class:`Relay` puts them together with a
:class:`~broadcast.web.server.BroadcastServer` and the optional outputs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import aiomqtt

from base.colors import Color
from broadcast.feed.alerts import Alert
from broadcast.feed.commands import AckAlert, ArbiterCommand, CommandReply
from broadcast.feed.evaluations import EvaluationGate
from broadcast.feed.hub import Hub
from broadcast.feed.inbound import (
    BadMessage,
    board_number,
    board_state_from_broker,
    bounded_time,
    check_size,
    read_json,
)
from broadcast.feed.messages import (
    BoardState,
    BoardStatus,
    ClockReading,
    Evaluation,
    evaluation_from_json,
)
from broadcast.feed.pgn import with_clock_tags
from broadcast.feed.public_results import ResultsPolicy
from broadcast.feed.signing import EventKey
from broadcast.outputs.lichess import LichessTarget, Refusal
from broadcast.outputs.lichess_push import LichessPusher
from broadcast.outputs.lichess_refusal import raise_refusal_alert
from broadcast.outputs.mqtt_client import (
    MqttLink,
    MqttSettings,
    client_log,
    exposure,
    host_name,
    new_client,
    raise_if_cancelled,
)
from broadcast.outputs.mqtt_rounds import section_filters
from broadcast.outputs.mqtt_wire import (
    OPEN_ALERTS,
    RESOLVED_ALERTS,
    Ownership,
    Topics,
    read_alert_list,
)
from broadcast.outputs.output_alerts import RELAY_FIRST_ID, OutputAlerts
from broadcast.outputs.pgn_folder import PgnFolderSettings, PgnFolderWriter
from broadcast.relay.remote import RelayOffline, RemoteCommands
from broadcast.relay.rounds import RelayRounds
from broadcast.relay.routing import alerts_to_show
from broadcast.web.connection_limits import ConnectionLimits
from broadcast.web.log_limit import LogLimit
from broadcast.web.server import BroadcastServer

__all__ = [
    "Relay",
    "RelayHub",
    "RelayLink",
    "RelaySettings",
    "RelayView",
    "default_relay_id",
]

log = logging.getLogger(__name__)
_client_log = client_log("broadcast.relay.server.client")


def default_relay_id() -> str:
    """``<host>-<pid>``: relays keep no session, so any unique name will do."""
    return f"{host_name() or 'relay'}-{os.getpid()}"


# -- the pure core --------------------------------------------------------------------------


class RelayHub(Hub):
    """A hub whose sequence numbers start at the relay's start time in milliseconds.

    A spectator that reconnects to another relay (behind a load balancer) or to a
    restarted one resumes with a ``since`` from another numbering. Starting each relay's
    numbering at its start time keeps the numberings apart (while fewer than 1,000 events
    a second are published), so such a resume gets a snapshot (its ``since`` is below
    this relay's first event, or above its last) instead of someone else's events.
    """

    def __init__(self, *, first_seq: int, ring_size: int = 4096) -> None:
        super().__init__(ring_size=ring_size)
        self._seq = first_seq - 1


class RelayView:
    """What the broker says about the event, fed into a hub; routes commands.

    Call :meth:`receive_message` with each message of the subscriptions of
    :meth:`subscriptions`; the hub is updated at once. Implements
    :class:`~broadcast.relay.routing.Router`.

    * A board state older (``updated_at``) than the one shown is ignored: a broker that
      came back with an older save must not take moves back.
    * A board whose owning daemon is offline is shown ``offline``.
    * Alerts get relay ids (:func:`~broadcast.relay.routing.relay_alert_id`); those of a daemon
      whose boards were all taken over by another are no longer shown.
    * A resolved alert is shown as the daemon resolved it (its history: how, by whom,
      when), from the daemon's list of last resolutions, whichever of the two lists
      arrives first; one that leaves the open list without a resolution there (the
      daemon lost its boards) is resolved as "no longer open on daemon …".
    * When two daemons claim a board, the online one wins, then the newer claim.
    """

    def __init__(
        self,
        hub: Hub,
        prefix: str,
        clock: Callable[[], float] = time.time,
        key: EventKey | None = None,
    ) -> None:
        self.hub = hub
        #: With a key, the JSON messages (states, clocks, evaluations, announcements of
        #: boards, sections' rounds and standings) are taken only when it signed them.
        self.key = key
        self.prefix = prefix
        self.topics = Topics(prefix, "+")  # the filters: every daemon
        #: The sections' past rounds and standings (``<prefix>/section/…``).
        self.rounds = RelayRounds()
        self.ignored = 0  # unreadable or outdated messages
        self._clock = clock
        self._refused = LogLimit()
        self._received: dict[int, BoardState] = {}
        self._claims: dict[str, Ownership] = {}
        self._online: dict[str, bool] = {}
        self._owners: dict[int, str] = {}
        self._alerts: dict[str, dict[int, Alert]] = {}
        self._resolved: dict[str, dict[int, Alert]] = {}
        self._origins: dict[int, tuple[str, int]] = {}
        #: Takes the daemons' evaluations (the relay's public hub's gate).
        self.on_evaluation: Callable[[Evaluation], None] | None = None

    def subscriptions(self) -> list[str]:
        """The topic filters a relay subscribes to."""
        topics = self.topics
        return [
            topics.board("+", "state"),
            topics.board("+", "clocks"),
            topics.evaluation("+"),
            *(
                topics.daemon(leaf, "+")
                for leaf in ("boards", "status", OPEN_ALERTS, RESOLVED_ALERTS)
            ),
            *section_filters(topics),
        ]

    def receive_message(self, topic: str, payload: bytes) -> None:
        """Take one message of :meth:`subscriptions`; unknown topics are ignored.

        Every message is bounded and checked before use (:mod:`broadcast.feed.inbound`):
        a bad one changes nothing and is one WARNING line every 10 s at most.
        """
        parts = topic.removeprefix(self.prefix + "/").split("/")
        try:
            if parts[0] == "section":
                check_size(parts[-1] if parts[-1] == "standings" else "round", payload)
                self._check_signed(topic, payload)
                self.rounds.receive_message(parts[1:], payload)
            elif len(parts) == 3:
                kind, name, leaf = parts
                check_size(leaf, payload)
                if leaf in _SIGNED_LEAVES:
                    self._check_signed(topic, payload, cleared=kind == "board")
                self._receive(kind, name, leaf, payload)
        except (ValueError, TypeError, KeyError) as exc:
            self._refuse(topic, str(exc))

    def _receive(self, kind: str, name: str, leaf: str, payload: bytes) -> None:
        if kind == "daemon":
            self._receive_daemon(name, leaf, payload)
        elif kind != "board" or not payload:
            return
        elif leaf == "state":
            self._receive_state(board_state_from_broker(payload, board=board_number(name)))
        elif leaf == "clocks":
            self._receive_clocks(board_number(name), read_json(payload, leaf))
        elif leaf == "eval":
            self._receive_evaluation(board_number(name), evaluation_from_json(payload))

    def _check_signed(self, topic: str, payload: bytes, *, cleared: bool = True) -> None:
        """With a key, a message must be signed with it (``cleared``: an empty one, which
        clears a retained topic and cannot be signed, is taken too).

        Raises:
            NotSigned: not signed with the key.
        """
        if self.key is not None and (payload or not cleared):
            self.key.verify(topic, payload)

    def _refuse(self, topic: str, why: str) -> None:
        """Count a refused message; one WARNING line every 10 s at most."""
        self.ignored += 1
        if (count := self._refused.due()) is not None:
            log.warning(
                "< %s: ignored (%s); %d message(s) ignored since the last line",
                topic[:200],
                why[:300],
                count,
            )

    # -- Router -----------------------------------------------------------------------------

    def owner_of(self, board: int) -> str | None:
        """The daemon that owns ``board``."""
        return self._owners.get(board)

    def boards_of(self, daemon_id: str) -> tuple[int, ...]:
        """The boards that ``daemon_id`` owns."""
        return tuple(sorted(b for b, d in self._owners.items() if d == daemon_id))

    def daemon_ids(self) -> list[str]:
        """Every daemon owning a board."""
        return sorted(set(self._owners.values()))

    def is_online(self, daemon_id: str) -> bool:
        """Whether the daemon's retained status is ``online``."""
        return self._online.get(daemon_id, False)

    def alert_origin(self, alert_id: int) -> tuple[str, int] | None:
        """The daemon and local id of the open alert with relay id ``alert_id``."""
        return self._origins.get(alert_id)

    # -- inside -----------------------------------------------------------------------------

    def _receive_state(self, state: BoardState) -> None:
        now = self._clock()
        state = dataclasses.replace(
            state,
            updated_at=bounded_time(state.updated_at, now),
            clock_at=None if state.clock_at is None else bounded_time(state.clock_at, now),
        )
        known = self._received.get(state.board)
        if known is not None and state.updated_at < known.updated_at:
            self.ignored += 1
            log.info("< board %d: older state ignored", state.board)
            return
        self._received[state.board] = state
        self._show(state.board)

    def _receive_evaluation(self, board: int, evaluation: Evaluation) -> None:
        if evaluation.board != board:
            raise ValueError(f"an evaluation of board {evaluation.board} on board {board}'s topic")
        if self.on_evaluation is not None:
            self.on_evaluation(evaluation)

    def _receive_clocks(self, board: int, data: Any) -> None:
        """A clock reading (``/clocks``, every tick): the board's clocks and clock tags.

        The daemon publishes ``/state`` only when the game changes (docs/mqtt.md); the
        ticks in between come here, so the relay's PGN carries the same clock tags.
        """
        state = self._received.get(board)
        reading = _clock_reading(data)
        if state is None or reading is None:
            return
        white, black, running, at = reading
        at = bounded_time(at, self._clock())
        if state.clock_at is not None and at <= state.clock_at:
            return
        pgn = (
            state.pgn
            if white is None or black is None
            else with_clock_tags(state.pgn, white, black)
        )
        self._received[board] = dataclasses.replace(
            state, white_clock=white, black_clock=black, running=running, clock_at=at, pgn=pgn
        )
        owner = self._owners.get(board)
        if owner is None or self.is_online(owner):  # shown as received: the compact way
            compact = ClockReading(
                board=board, white_clock=white, black_clock=black, running=running, clock_at=at
            )
            if self.hub.publish_clock(compact, at):
                return
        self._show(board)

    def _show(self, board: int) -> None:
        state = self._received.get(board)
        if state is None:
            return
        owner = self._owners.get(board)
        if owner is not None and not self.is_online(owner):
            state = dataclasses.replace(state, status=BoardStatus.OFFLINE)
        self.hub.publish_board(state)

    def _receive_daemon(self, daemon_id: str, leaf: str, payload: bytes) -> None:
        if leaf == "status":
            if payload not in (b"online", b"offline", b""):
                raise BadMessage("a daemon's status is online or offline")
            self._online[daemon_id] = payload == b"online"
            log.info("= daemon %s %s", daemon_id, payload.decode())
            self._reassign()
        elif leaf == "boards":
            claim = Ownership.from_payload(payload) if payload else None
            if claim is None and payload:
                raise BadMessage("not an announcement of boards")
            if claim is None:
                self._claims.pop(daemon_id, None)
            else:
                at = bounded_time(claim.at, self._clock())
                self._claims[daemon_id] = dataclasses.replace(claim, daemon_id=daemon_id, at=at)
            self._reassign()
        elif leaf in (OPEN_ALERTS, RESOLVED_ALERTS):
            alerts = read_alert_list(payload) if payload else []
            lists = self._alerts if leaf == OPEN_ALERTS else self._resolved
            lists[daemon_id] = {a.id: a for a in alerts}
            self._show_alerts()

    def _reassign(self) -> None:
        """Recompute each board's owner; show what changed."""
        owners: dict[int, tuple[bool, float, str]] = {}
        for claim in self._claims.values():
            rank = (self.is_online(claim.daemon_id), claim.at, claim.daemon_id)
            for board in claim.boards:
                if board not in owners or rank > owners[board]:
                    owners[board] = rank
        self._owners = {board: rank[2] for board, rank in owners.items()}
        for board in list(self._received):
            self._show(board)
        self._show_alerts()

    def _show_alerts(self) -> None:
        """Make the hub's open alerts those of the daemons that own boards, and show the
        resolutions those daemons published."""
        owners = set(self._owners.values())
        daemons = [d for d in {*self._alerts, *self._resolved} if d in owners or not self._claims]
        shown, settled = alerts_to_show(self._alerts, self._resolved, daemons)
        for relay_id in set(self._origins) - set(shown):
            daemon_id, _ = self._origins.pop(relay_id)
            gone = self.hub.alert(relay_id)
            if gone is not None and gone.is_open and relay_id not in settled:
                note = f"no longer open on daemon {daemon_id}"
                self.hub.publish_alert(gone.resolve(time.time(), note))
        for relay_id, alert in settled.items():
            relayed = dataclasses.replace(alert, id=relay_id)
            if self.hub.alert(relay_id) != relayed:
                self.hub.publish_alert(relayed)
        for relay_id, (daemon_id, alert) in shown.items():
            self._origins[relay_id] = (daemon_id, alert.id)
            relayed = dataclasses.replace(alert, id=relay_id)
            if self.hub.alert(relay_id) != relayed:
                self.hub.publish_alert(relayed)


#: The topics' last levels whose messages a daemon signs with an event key (a daemon's
#: status is not: docs/deployment.md, "The event key"). An empty one is signed by no one:
#: taken on a board's topics (where it changes nothing), refused on a daemon's.
_SIGNED_LEAVES = frozenset({"state", "clocks", "eval", "boards", OPEN_ALERTS, RESOLVED_ALERTS})


def _clock_reading(data: Any) -> tuple[float | None, float | None, Color | None, float] | None:
    """``(white, black, running, at)`` of a ``/clocks`` payload; None without a reading.

    Raises:
        TypeError, KeyError: not a clock reading.
    """
    if not isinstance(data, dict):
        raise TypeError("not a clock reading (no JSON object)")
    white, black, running, at = data["white"], data["black"], data["running"], data["at"]
    if running not in ("white", "black", None):
        raise TypeError(f"running must be white, black or null, got {running!r}")
    for value in (white, black, at):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"not a number: {str(value)[:40]}")
        if not -1e11 < value < 1e11:  # not infinite, NaN, nor too large for a float
            raise TypeError(f"a number out of range: {str(value)[:40]}")
    if at is None:
        return None
    return (
        None if white is None else float(white),
        None if black is None else float(black),
        running,
        float(at),
    )


# -- the broker connection ----------------------------------------------------------------------


class RelayLink:
    """The relay's MQTT connection: subscriptions in, command requests out.

    Args:
        settings: the broker; ``daemon_id`` is the relay's id here.
        view: receives every message but the answers.
        receive_answer: receives the daemons' answers to this relay.
    """

    def __init__(
        self,
        settings: MqttSettings,
        view: RelayView,
        receive_answer: Callable[[bytes], None] | None = None,
    ) -> None:
        self._settings = settings
        self.view = view
        self.topics = Topics(settings.prefix, settings.daemon_id)
        self.reply_to = self.topics.relay_replies()
        self.receive_answer = receive_answer
        self.connected = asyncio.Event()
        self._client: aiomqtt.Client | None = None
        self.link = MqttLink(settings, "relay", self._new_client)

    async def run(self) -> None:
        """Subscribe and follow; reconnect after losses; until cancelled."""
        await self.link.run(self._session)

    async def send_command(self, daemon_id: str, payload: bytes) -> None:
        """Publish a request to ``daemon_id``'s command topic (QoS 1, acknowledged).

        Raises:
            RelayOffline: no broker connection, or it was lost before the PUBACK.
        """
        client = self._client
        if client is None:
            raise RelayOffline("not connected")
        topic = self.topics.daemon("commands", daemon_id)
        if (key := self._settings.event_key) is not None:
            payload = key.sign(topic, payload)
        try:
            await client.publish(topic, payload, qos=1, timeout=self._settings.time_limit)
        except aiomqtt.MqttError as exc:
            raise RelayOffline(str(exc)) from exc

    def _new_client(self) -> aiomqtt.Client:
        settings = self._settings
        return new_client(
            settings, f"dgtcast-relay-{settings.daemon_id}", logger=_client_log, clean_session=True
        )

    async def _session(self, client: aiomqtt.Client) -> None:
        topics = [(topic, 1) for topic in [*self.view.subscriptions(), self.reply_to]]
        await client.subscribe(topics)
        raise_if_cancelled()
        self.link.up()
        self._client = client
        self.connected.set()
        try:
            async for message in client.messages:
                self._receive(message)
        finally:
            self._client = None
            self.connected.clear()

    def _receive(self, message: aiomqtt.Message) -> None:
        payload = message.payload if isinstance(message.payload, bytes) else b""
        topic = message.topic.value
        if topic == self.reply_to:
            if self.receive_answer is not None:
                self.receive_answer(payload)
        else:
            self.view.receive_message(topic, payload)


# -- the relay --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RelaySettings:
    """Everything a relay needs (``dgtcast relay`` builds it from the configuration).

    Attributes:
        mqtt: the broker; its ``daemon_id`` is the relay's id.
        host / port: where the broadcast server listens (port 0: a free one).
        arbiter_token: the arbiters' secret; None disables ``/ws/arbiter``.
        delay: the public delay in seconds, as a daemon's ``server.public_delay``.
        results: which results the public sees, as a daemon's ``server.results``.
        command_timeout: seconds an arbiter command waits for the owning daemon.
        lichess / pgn_folder: optional outputs, fed with the public (delayed) boards (a
            lichess refusal raises the relay's own ``lichess_refused`` alert).
        allowed_origins: web origins besides the relay's own whose pages may use the
            arbiter channel, as a daemon's ``server.allowed_origins``.
        limits: connections per client address and in all (None: no limits), as a
            daemon's (broadcast/web/connection_limits.py).
        frame_interval: seconds between two frames to a spectator at most: a relay
            serves many, so it sends each one a frame per tick with every change since
            the last (broadcast/web/fanout.py).
    """

    mqtt: MqttSettings
    host: str = "127.0.0.1"
    port: int = 8080
    arbiter_token: str | None = None
    delay: float = 0.0
    results: ResultsPolicy = "confirmed"
    command_timeout: float = 8.0
    lichess: tuple[LichessTarget, ...] = ()
    pgn_folder: PgnFolderSettings | None = None
    allowed_origins: tuple[str, ...] = ()
    limits: ConnectionLimits | None = None
    frame_interval: float = 0.1


class Relay:
    """One relay: view, link, command bridge, broadcast server and outputs."""

    def __init__(self, settings: RelaySettings) -> None:
        self.settings = settings
        first_seq = int(time.time() * 1000)
        self.hub = RelayHub(first_seq=first_seq)
        self.view = RelayView(self.hub, settings.mqtt.prefix, key=settings.mqtt.event_key)
        self.link = RelayLink(settings.mqtt, self.view)
        self.commands = RemoteCommands(
            self.view,
            self.link.send_command,
            reply_to=self.link.reply_to,
            timeout=settings.command_timeout,
            key=settings.mqtt.event_key,
        )
        self.link.receive_answer = self.commands.receive_answer
        #: The relay's own alerts (a lichess refusal), acknowledged here.
        self.output_alerts = OutputAlerts(self.hub, time.time, first_id=RELAY_FIRST_ID)
        self.lichess = (
            LichessPusher(settings.lichess, on_refusal=self._lichess_refused)
            if settings.lichess
            else None
        )
        self.server = BroadcastServer(
            self.hub,
            _RelayCommands(self.commands, self.output_alerts),
            host=settings.host,
            port=settings.port,
            arbiter_token=settings.arbiter_token,
            delay=settings.delay,
            results=settings.results,
            command_timeout=settings.command_timeout + 2.0,
            allowed_origins=settings.allowed_origins,
            limits=settings.limits,
            frame_interval=settings.frame_interval,
            public_hub=RelayHub(first_seq=first_seq),
        )
        self.server.routes.extra += self.view.rounds.routes(
            self.server.public_hub, settings.results
        )
        #: The daemons' evaluations reach spectators once their position is public here.
        self.evaluations = EvaluationGate(self.server.public_hub)
        self.view.on_evaluation = self.evaluations.receive

    async def start(self) -> None:
        """Listen on the configured address (idempotent).

        Raises:
            ListenError: the address cannot be listened on (one line: address and why).
        """
        await self.server.start()
        self.evaluations.start()

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set (listening first if :meth:`start` was not awaited)."""
        try:
            self.evaluations.start()
            async with self.server, asyncio.TaskGroup() as tasks:
                for job in self._jobs():
                    tasks.create_task(job)
                log.info("= relay serving on http://%s:%d/", self.settings.host, self.server.port)
                if (open_to := exposure(self.settings.mqtt)) is not None:
                    log.warning("= %s", open_to)
                await stop.wait()
                raise _Stop
        except* _Stop:
            pass
        finally:
            self.evaluations.close()

    def _jobs(self) -> list[Coroutine[Any, Any, None]]:
        public, settings = self.server.public_hub, self.settings
        jobs: list[Coroutine[Any, Any, None]] = [self.link.run()]
        if self.lichess is not None:
            jobs.append(self.lichess.serve(public))
        if settings.pgn_folder is not None:
            jobs.append(PgnFolderWriter(settings.pgn_folder).serve(public))
        return jobs

    def _lichess_refused(self, refusal: Refusal) -> None:
        fix = "put a new token or round id in the relay's file and restart the relay"
        assert self.lichess is not None  # only its pusher refuses
        raise_refusal_alert(self.output_alerts, refusal, self.lichess.resume, fix=fix)


class _RelayCommands:
    """The arbiter's commands: the relay's own alerts acknowledged here, the rest routed."""

    def __init__(self, routed: RemoteCommands, alerts: OutputAlerts) -> None:
        self._routed = routed
        self._alerts = alerts

    async def execute(self, command: ArbiterCommand) -> CommandReply:
        if isinstance(command, AckAlert) and self._alerts.owns(command.id):
            return self._alerts.acknowledge(command.id)
        return await self._routed.execute(command)


class _Stop(Exception):
    """Ends the task group on request."""
