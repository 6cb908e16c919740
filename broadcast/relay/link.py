"""The relay's MQTT connection: the subscriptions in, arbiter commands out.

:class:`RelayLink` subscribes to what :class:`~broadcast.relay.view.RelayView` reads and
to the relay's own reply topic, hands every message to the view (the daemons' answers to
the command bridge), and publishes command requests to the owning daemon, signed with
the event key when there is one. It reconnects after losses
(:class:`~broadcast.outputs.mqtt_client.MqttLink`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import aiomqtt

from broadcast.outputs.mqtt_client import (
    MqttLink,
    MqttSettings,
    client_log,
    new_client,
    raise_if_cancelled,
)
from broadcast.outputs.mqtt_wire import Topics
from broadcast.relay.remote import RelayOffline
from broadcast.relay.view import RelayView

__all__ = ["RelayLink"]

_client_log = client_log("broadcast.relay.server.client")


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
