"""A broker lost under a client leaves no unread exception behind (asyncio would log
"Future exception was never retrieved" whenever the client is collected: in CI, in the
middle of another test)."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from broadcast.outputs.mqtt_client import MqttSettings, connected, new_client
from tests.mosquitto import Mosquitto
from tests.waiting import wait_until


async def test_a_lost_broker_leaves_no_unread_exception(
    mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    settings = MqttSettings(host="127.0.0.1", port=mosquitto.port, prefix="loss")
    client = new_client(settings, "loss-probe", logger=logging.getLogger("tests.loss"))
    async with connected(client):
        mosquitto.stop()
        await wait_until(client._disconnected.done, 10, "the loss noticed")
    del client
    gc.collect()
    await asyncio.sleep(0)
    unread = [r for r in caplog.records if "never retrieved" in r.getMessage()]
    assert unread == []
