"""A link stopped while paho connects in aiomqtt's worker thread leaves no connection open.

Left open, the connection outlived the link; when the broker went away, its loss was an
exception nobody read, and asyncio logged "Future exception was never retrieved"
whenever the client was collected (in CI, in the middle of another test).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import threading

import aiomqtt
import paho.mqtt.client as paho
import pytest

from broadcast.outputs.mqtt_client import MqttLink, MqttSettings, new_client
from tests.mosquitto import Mosquitto

LOG = logging.getLogger("tests.cancel")


class HeldConnect:
    """Clients whose worker-thread connect waits at paho's ``on_pre_connect`` until
    :meth:`release`, and which say when that thread has opened their socket."""

    def __init__(self, settings: MqttSettings) -> None:
        self.settings = settings
        self.clients: list[aiomqtt.Client] = []
        self.in_connect = asyncio.Event()
        self.opened = asyncio.Event()
        self._go = threading.Event()
        self._loop = asyncio.get_running_loop()

    def make_client(self) -> aiomqtt.Client:
        client = new_client(self.settings, "cancel-probe", logger=LOG)
        inner = client._client
        socket_open = inner.on_socket_open
        assert socket_open is not None

        def hold(_: paho.Client, __: object) -> None:
            self._loop.call_soon_threadsafe(self.in_connect.set)
            self._go.wait(10)

        def opened(paho_client: paho.Client, userdata: object, sock: object) -> None:
            socket_open(paho_client, userdata, sock)  # type: ignore[arg-type]
            self._loop.call_soon_threadsafe(self.opened.set)

        inner.on_pre_connect = hold
        inner.on_socket_open = opened
        self.clients.append(client)
        return client

    def release(self) -> None:
        self._go.set()


async def never_called(_: aiomqtt.Client) -> None:
    raise AssertionError("the session started: the connect was not held")


async def test_a_link_stopped_while_connecting_leaves_no_connection_open(
    mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    held = HeldConnect(MqttSettings(host="127.0.0.1", port=mosquitto.port, prefix="cancel"))
    task = asyncio.create_task(MqttLink(held.settings, "probe", held.make_client).run(never_called))
    async with asyncio.timeout(10):
        await held.in_connect.wait()
    task.cancel()
    held.release()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    async with asyncio.timeout(10):
        await held.opened.wait()
    [client] = held.clients
    assert client._client.socket() is None, "the link stopped; its connection is still open"
    mosquitto.stop()
    del client
    held.clients.clear()
    gc.collect()
    await asyncio.sleep(0)
    unread = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert unread == []
