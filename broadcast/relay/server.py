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

:class:`~broadcast.relay.view.RelayView` is the pure core (topic + payload in, hub updates
out); :class:`~broadcast.relay.link.RelayLink` is the MQTT connection; :class:`Relay` puts
them together with a :class:`~broadcast.web.server.BroadcastServer` and the outputs of
:data:`broadcast.outputs.kinds.SHARED` its settings name.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass

from broadcast.feed.commands import AckAlert, ArbiterCommand, CommandReply
from broadcast.feed.evaluations import EvaluationGate
from broadcast.feed.hub import Hub
from broadcast.feed.public_results import ResultsPolicy
from broadcast.outputs.kinds import SHARED, Feeds, NamedJob, OutputSettings, start_outputs
from broadcast.outputs.lichess import LichessTarget
from broadcast.outputs.mqtt_client import MqttSettings, exposure, host_name
from broadcast.outputs.output_alerts import RELAY_FIRST_ID, OutputAlerts
from broadcast.outputs.pgn_folder import PgnFolderSettings
from broadcast.relay.link import RelayLink
from broadcast.relay.remote import RemoteCommands
from broadcast.relay.view import RelayView
from broadcast.web.connection_limits import ConnectionLimits
from broadcast.web.server import BroadcastServer

#: Relay and its parts (the view and the link live in modules of their own).
__all__ = [
    "Relay",
    "RelayHub",
    "RelayLink",
    "RelaySettings",
    "RelayView",
    "default_relay_id",
]

log = logging.getLogger(__name__)

#: What mends a lichess refusal on a relay, besides lichess itself.
REFUSAL_FIX = "put a new token or round id in the relay's file and restart the relay"


def default_relay_id() -> str:
    """``<host>-<pid>``: relays keep no session, so any unique name will do."""
    return f"{host_name() or 'relay'}-{os.getpid()}"


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

    @property
    def outputs(self) -> OutputSettings:
        """The outputs the relay runs (broadcast/outputs/kinds.py)."""
        return OutputSettings(lichess=self.lichess, pgn_folder=self.pgn_folder)


class Relay:
    """One relay: view, link, command bridge, broadcast server and outputs."""

    def __init__(self, settings: RelaySettings) -> None:
        self.settings = settings
        first_seq = int(time.time() * 1000)
        self.hub = RelayHub(first_seq=first_seq)
        public = RelayHub(first_seq=first_seq)
        #: The daemons' evaluations reach spectators once their position is public here.
        self.evaluations = EvaluationGate(public)
        self.view = RelayView(
            self.hub,
            settings.mqtt.prefix,
            key=settings.mqtt.event_key,
            on_evaluation=self.evaluations.receive,
        )
        self.link = RelayLink(settings.mqtt, self.view, self._answer)
        self.commands = RemoteCommands(
            self.view,
            self.link.send_command,
            reply_to=self.link.reply_to,
            timeout=settings.command_timeout,
            key=settings.mqtt.event_key,
        )
        #: The relay's own alerts (a lichess refusal), acknowledged here.
        self.output_alerts = OutputAlerts(self.hub, time.time, first_id=RELAY_FIRST_ID)
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
            public_hub=public,
            extra_routes=lambda shown: self.view.rounds.routes(shown, settings.results),
        )

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
                tasks.create_task(self.link.run())
                for _, job in self._outputs():
                    tasks.create_task(job())
                log.info("= relay serving on http://%s:%d/", self.settings.host, self.server.port)
                if (open_to := exposure(self.settings.mqtt)) is not None:
                    log.warning("= %s", open_to)
                await stop.wait()
                raise _Stop
        except* _Stop:
            pass
        finally:
            self.evaluations.close()

    def _outputs(self) -> list[NamedJob]:
        feeds = Feeds(
            hub=self.hub,
            public=self.server.public_hub,
            alerts=self.output_alerts,
            refusal_fix=REFUSAL_FIX,
        )
        return start_outputs(SHARED, self.settings.outputs, feeds)

    def _answer(self, payload: bytes) -> None:
        """A daemon's answer to this relay, for the command bridge."""
        self.commands.receive_answer(payload)


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
