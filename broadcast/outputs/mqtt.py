"""Publish boards, alerts and confirmed results to an MQTT broker (topics in docs/mqtt.md).

The topics and payloads are :mod:`broadcast.outputs.mqtt_wire`'s.

The broker publishes ``offline`` for us as our will when the connection dies; we publish
``online`` on every connect and ``offline`` when we stop cleanly.

A running clock changes a board's state every second. Such a tick publishes only the
compact ``/clocks`` message; ``pgn``, ``fen``, ``status`` and ``state`` go out when the
game changes (a move, a correction, a result, a status, new players) or a clock reading
departs from what the last one lets a reader count down (the feed's ``clock`` event,
:func:`broadcast.feed.events.diff_states`).

:class:`MqttOutbox` is the pure core: the latest payload of every retained topic
(bounded; re-sent after each reconnect), and a bounded queue of alerts and results that
leave it only once the broker acknowledged them (QoS 1 ``PUBACK``), so a broker restart
loses none of them (a receiver may see one twice; alert ``id`` and the result's board and
round tell duplicates apart). :class:`MqttPublisher` is the asyncio shell (aiomqtt): it
connects, drains the outbox and reconnects by itself
(:class:`broadcast.outputs.mqtt_client.MqttLink`).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import aiomqtt

from broadcast.feed.alerts import Alert, alert_to_json
from broadcast.feed.events import diff_states
from broadcast.feed.messages import BoardState, Evaluation, to_json_dict
from broadcast.feed.public_results import ResultsPolicy
from broadcast.outputs.mqtt_client import (
    MqttLink,
    MqttLinkState,
    MqttSettings,
    client_log,
    new_client,
)
from broadcast.outputs.mqtt_wire import (
    OPEN_ALERTS,
    RESOLVED_ALERTS,
    Ownership,
    Topics,
    alert_list_payload,
    clocks_payload,
    encode,
    evaluation_payload,
    result_payload,
    status_payload,
)
from broadcast.outputs.output import HubOutput, WorkLoop

if TYPE_CHECKING:
    from broadcast.feed.hub import Hub

__all__ = ["RESOLVED_KEPT", "MqttMessage", "MqttOutbox", "MqttPublisher"]

log = logging.getLogger(__name__)

#: How many resolved alerts that list keeps (the newest).
RESOLVED_KEPT = 50

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True, kw_only=True)
class MqttMessage:
    """One PUBLISH to send."""

    topic: str
    payload: bytes
    qos: int = 1
    retain: bool = False


def _game_of(state: BoardState) -> tuple[str, str, str, str]:
    """What tells one game on a board from the next one (a new round, new players)."""
    return (state.section, state.round, state.white, state.black)


class MqttOutbox:
    """Pure core: what the broker still has to hear.

    Feed it with :meth:`receive_board`, :meth:`receive_alert`, :meth:`receive_result`; on
    every (re)connect call :meth:`receive_connected`; then send :meth:`next_message` and,
    once the broker acknowledged it, call :meth:`receive_delivered` with it.
    """

    def __init__(
        self,
        topics: Topics,
        *,
        max_pending: int = 1000,
        max_retained: int = 4096,
        results: ResultsPolicy = "confirmed",
        signed: bool = False,
    ):
        self.topics = topics
        self.results = results
        #: With an event key: the alert lists go as objects, which can carry a signature.
        self.signed = signed
        self._max_pending = max_pending
        self._max_retained = max_retained
        self._retained: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._due: dict[str, None] = {}  # retained topics to send, in order
        self._events: collections.deque[MqttMessage] = collections.deque()
        self._results: dict[int, tuple[tuple[str, str, str, str], str, bool]] = {}
        self._described: dict[int, BoardState] = {}  # per board, as /state last told it
        self._open_alerts: dict[int, Alert] | None = None  # tracked once ownership is known
        self._resolved_alerts: collections.OrderedDict[int, Alert] = collections.OrderedDict()
        self.dropped_events = 0
        self.dropped_topics = 0

    @property
    def pending_events(self) -> int:
        """Alerts and results not acknowledged by the broker yet."""
        return len(self._events)

    def receive_board(self, state: BoardState) -> None:
        """Take a board snapshot; a newly confirmed result is also queued as a result.

        ``/clocks`` follows every snapshot; the other board topics only the snapshots
        that change the game or depart from the clocks' count-down.
        """
        board = state.board
        self._set_retained(self.topics.board(board, "clocks"), clocks_payload(state))
        events, described = diff_states(self._described.get(board), state, next_seq=0)
        if events:
            self._described[board] = described
            self._set_retained(self.topics.board(board, "pgn"), state.pgn.encode())
            self._set_retained(self.topics.board(board, "fen"), state.fen.encode())
            self._set_retained(self.topics.board(board, "status"), status_payload(state))
            self._set_retained(self.topics.board(board, "state"), encode(to_json_dict(state)))
        published = state.result_final or self.results == "provisional"
        if published and state.result != "*":
            self.receive_result(state)
        elif board in self._results:  # a new game, or a result cleared or no longer final
            same_game = self._results[board][0] == _game_of(state)
            del self._results[board]
            self._set_retained(self.topics.board(board, "result"), b"")
            if same_game:  # withdrawn: ``/results`` hears it (result ``*``)
                withdrawn = dataclasses.replace(state, result="*", result_final=False)
                self._queue(
                    MqttMessage(topic=self.topics.results, payload=result_payload(withdrawn))
                )

    def receive_result(self, state: BoardState) -> None:
        """A result: queued for ``/results`` once, retained on ``/board/<n>/result``."""
        key = (_game_of(state), state.result, state.result_final)
        if self._results.get(state.board) == key:
            return
        self._results[state.board] = key
        payload = result_payload(state)
        self._set_retained(self.topics.board(state.board, "result"), payload)
        self._queue(MqttMessage(topic=self.topics.results, payload=payload))

    def receive_evaluation(self, evaluation: Evaluation) -> None:
        """The engine's latest evaluation of a board, retained on ``/board/<n>/eval``."""
        self._set_retained(self.topics.evaluation(evaluation.board), evaluation_payload(evaluation))

    def receive_alert(self, alert: Alert) -> None:
        """Queue this version of ``alert`` (raised, updated, acknowledged, resolved) for
        ``<prefix>/alerts``.

        After :meth:`receive_ownership` the retained list of open alerts
        ``<prefix>/daemon/<id>/alerts`` follows every version too, and a resolved one
        joins the retained list of the last resolutions (``…/resolved``) first.
        """
        self._queue(MqttMessage(topic=self.topics.alerts, payload=encode(alert_to_json(alert))))
        if self._open_alerts is None:
            return
        if not alert.is_open:
            self._open_alerts.pop(alert.id, None)
            self._resolved_alerts.pop(alert.id, None)
            self._resolved_alerts[alert.id] = alert
            while len(self._resolved_alerts) > RESOLVED_KEPT:
                self._resolved_alerts.popitem(last=False)
            self._set_resolved_alerts()
        else:
            self._open_alerts[alert.id] = alert
        self._set_open_alerts()

    def receive_ownership(self, ownership: Ownership) -> None:
        """Announce what this daemon owns, and keep its open alerts retained from now on.

        Both are retained so that a relay that starts later sees at once who owns which
        board and which alerts still wait for an arbiter. The list starts empty: feed
        the alerts open at the time next (:meth:`MqttPublisher.follow` does).
        """
        self._set_retained(self.topics.daemon("boards"), ownership.to_payload())
        if self._open_alerts is None:
            self._open_alerts = {}
            self._set_resolved_alerts()  # a list of an earlier run (or journal) goes
            self._set_open_alerts()

    def _set_open_alerts(self) -> None:
        assert self._open_alerts is not None
        alerts = [self._open_alerts[i] for i in sorted(self._open_alerts)]
        payload = alert_list_payload(alerts, signed=self.signed)
        self._set_retained(self.topics.daemon(OPEN_ALERTS), payload)

    def _set_resolved_alerts(self) -> None:
        alerts = list(self._resolved_alerts.values())
        payload = alert_list_payload(alerts, signed=self.signed)
        self._set_retained(self.topics.daemon(RESOLVED_ALERTS), payload)

    def receive_retained(self, topic: str, payload: bytes) -> None:
        """Keep ``topic`` retained with ``payload`` (empty: cleared on the broker)."""
        self._set_retained(topic, payload)

    def receive_connected(self) -> None:
        """A new connection: every retained topic is due again, queued events stay queued."""
        self._due = dict.fromkeys(self._retained)

    def next_message(self) -> MqttMessage | None:
        """The next message to send: queued events first, then retained topics."""
        if self._events:
            return self._events[0]
        for topic in self._due:
            return MqttMessage(topic=topic, payload=self._retained[topic], retain=True)
        return None

    def receive_delivered(self, message: MqttMessage) -> None:
        """The broker acknowledged ``message``: it leaves the outbox."""
        if self._events and self._events[0] is message:
            self._events.popleft()
        elif message.retain and self._retained.get(message.topic) == message.payload:
            self._due.pop(message.topic, None)

    def _set_retained(self, topic: str, payload: bytes) -> None:
        if self._retained.get(topic) == payload:
            return
        self._retained[topic] = payload
        self._retained.move_to_end(topic)
        self._due[topic] = None
        while len(self._retained) > self._max_retained:
            stale, _ = self._retained.popitem(last=False)
            self._due.pop(stale, None)
            self.dropped_topics += 1

    def _queue(self, message: MqttMessage) -> None:
        if len(self._events) >= self._max_pending:
            lost = self._events.popleft()
            self.dropped_events += 1
            log.error("= mqtt queue full: dropped %s %r", lost.topic, lost.payload[:80])
        self._events.append(message)


_client_log = client_log("broadcast.outputs.mqtt.client")


class MqttPublisher(HubOutput):
    """Keeps the broker up to date; run :meth:`run` as a task.

    The ``publish_*`` methods never block: they update the outbox and wake the task.
    """

    def __init__(self, settings: MqttSettings, *, results: ResultsPolicy = "confirmed") -> None:
        self._settings = settings
        self.topics = Topics(settings.prefix, settings.daemon_id)
        self.outbox = MqttOutbox(
            self.topics,
            max_pending=settings.max_pending,
            max_retained=settings.max_retained_topics,
            results=results,
            signed=settings.event_key is not None,
        )
        self._work = WorkLoop()
        self.link = MqttLink(settings, "publisher", self._new_client)

    @property
    def link_state(self) -> MqttLinkState:
        """The connection's state, for status pages."""
        return self.link.state

    def publish_board(self, state: BoardState) -> None:
        """A board changed."""
        self.outbox.receive_board(state)
        self._work.wake()

    def publish_alert(self, alert: Alert) -> None:
        """A new version of an arbiter alert."""
        self.outbox.receive_alert(alert)
        self._work.wake()

    def publish_evaluation(self, evaluation: Evaluation) -> None:
        """The engine evaluated a board's public position (or has no evaluation now)."""
        self.outbox.receive_evaluation(evaluation)
        self._work.wake()

    def announce(self, ownership: Ownership) -> None:
        """Say which boards and sections this daemon owns (and keep open alerts retained)."""
        self.outbox.receive_ownership(ownership)
        self._work.wake()

    def publish_retained(self, topic: str, payload: bytes) -> None:
        """Keep a topic of this daemon's retained (past rounds, standings: mqtt_rounds)."""
        self.outbox.receive_retained(topic, payload)
        self._work.wake()

    def publish_result(self, state: BoardState) -> None:
        """The result of ``state``'s game was confirmed (also found by :meth:`publish_board`)."""
        self.outbox.receive_result(state)
        self._work.wake()

    async def follow(self, hub: Hub) -> None:
        """Publish every board and alert (each new version) of ``hub`` until cancelled.

        Alerts still open when following starts are published too.
        """
        async with hub.subscribe(alerts=True) as subscription:
            for alert in hub.open_alerts():
                self.publish_alert(alert)
            async for update in subscription:
                for state in update.boards:
                    self.publish_board(state)
                for alert in update.alerts:
                    self.publish_alert(alert)

    async def run(self) -> None:
        """Connect, publish, reconnect; until cancelled. Broker trouble is never raised."""
        await self.link.run(self._session)

    def _new_client(self) -> aiomqtt.Client:
        settings = self._settings
        return new_client(
            settings,
            f"dgtcast-{settings.daemon_id}",
            logger=_client_log,
            will=aiomqtt.Will(self.topics.daemon_status, b"offline", qos=1, retain=True),
        )

    async def _session(self, client: aiomqtt.Client) -> None:
        """One connection, from connect to loss (raises MqttError) or cancellation."""
        lost = asyncio.ensure_future(_until_disconnected(client))
        try:
            online = client.publish(self.topics.daemon_status, b"online", qos=1, retain=True)
            await _unless_lost(online, lost)
            self.link.up()
            self.outbox.receive_connected()
            await self._drain(client, lost)
        except asyncio.CancelledError:
            await self._say_offline(client)
            raise
        finally:
            lost.cancel()
            if lost.done() and not lost.cancelled():
                lost.exception()  # seen: the loss is reported by whoever noticed it first

    async def _drain(self, client: aiomqtt.Client, lost: asyncio.Future[None]) -> None:
        """Send the outbox, one acknowledged message at a time, until the link is lost."""

        async def step() -> bool:
            message = self.outbox.next_message()
            if message is None:
                return False
            payload = message.payload
            if (key := self._settings.event_key) is not None and payload.startswith(b"{"):
                payload = key.sign(message.topic, payload)  # every JSON object: docs/mqtt.md
            sent = client.publish(message.topic, payload, qos=message.qos, retain=message.retain)
            await _unless_lost(sent, lost)
            log.debug("> %s (%d bytes)", message.topic, len(message.payload))
            self.outbox.receive_delivered(message)
            return True

        await self._work.run(step, waiting=lambda sleep: _unless_lost(sleep, lost))

    async def _say_offline(self, client: aiomqtt.Client) -> None:
        """A clean stop: say so ourselves (the will only fires on an unclean one)."""
        try:
            async with asyncio.timeout(2.0):
                await client.publish(self.topics.daemon_status, b"offline", qos=1, retain=True)
        except (aiomqtt.MqttError, TimeoutError) as exc:
            log.warning("= mqtt could not say offline: %s", exc)


async def _until_disconnected(client: aiomqtt.Client) -> None:
    """Returns never; raises MqttError when the broker connection goes away."""
    async for _ in client.messages:  # we subscribe to nothing: this only ends on loss
        pass


async def _unless_lost(step: Awaitable[_T], lost: asyncio.Future[None]) -> _T:
    """Await ``step``, or raise MqttError as soon as the connection is lost."""
    task = asyncio.ensure_future(step)
    waited: set[asyncio.Future[Any]] = {task, lost}
    try:
        await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            task.cancel()
    if task.done() and not task.cancelled():
        return task.result()
    if lost.done() and not lost.cancelled():
        lost.result()  # raises the MqttError that ended the connection
    raise aiomqtt.MqttError("connection lost")
