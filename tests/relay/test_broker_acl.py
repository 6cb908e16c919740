"""The broker's users, passwords and ACL of docs/deployment.md, in a real mosquitto.

The ACL block is read from docs/deployment.md itself (its prefix made the tests'), so the
documented file is the tested one; each line of the table "Who can do what" is checked
with clients logged in as a daemon and as a relay, and a relay of dgtcast serves through
it (issue 34, item 3).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import aiomqtt
import pytest

from broadcast.feed.messages import BoardState, BoardStatus, to_json_dict
from broadcast.outputs.mqtt_client import MqttSettings, exposure
from tests.mosquitto import Mosquitto
from tests.relay.support import PREFIX, relay_settings, running_relay
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
USERS = {"hall-a": "secret-a", "hall-b": "secret-b", "relay": "secret-relay"}
_ids = itertools.count()


def documented_acl() -> str:
    """The ACL file of docs/deployment.md, for the tests' prefix."""
    text = (ROOT / "docs" / "deployment.md").read_text()
    block = re.search(r"`/etc/mosquitto/acl`.*?```conf\n(.*?)```", text, re.S)
    assert block is not None, "docs/deployment.md has no ACL block"
    return block.group(1).replace("open2026/", f"{PREFIX}/")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    with Mosquitto(tmp_path / "mosquitto", users=USERS, acl=documented_acl()) as running:
        yield running


@asynccontextmanager
async def logged_in(broker: Mosquitto, user: str | None) -> AsyncIterator[aiomqtt.Client]:
    password = USERS.get(user or "")
    identifier = f"{user or 'anonymous'}-{next(_ids)}"
    client = aiomqtt.Client(
        "127.0.0.1", broker.port, username=user, password=password, identifier=identifier
    )
    async with client:
        yield client


class Observer:
    """A relay's account subscribed to everything of the event: what reached the broker."""

    def __init__(self, client: aiomqtt.Client) -> None:
        self.client = client
        self.seen: list[tuple[str, bytes]] = []
        self.arrived = asyncio.Event()

    async def follow(self) -> None:
        async for message in self.client.messages:
            payload = message.payload if isinstance(message.payload, bytes) else b""
            self.seen.append((message.topic.value, payload))
            self.arrived.set()

    async def reached(self, topic: str, payload: bytes) -> None:
        while (topic, payload) not in self.seen:
            self.arrived.clear()
            await self.arrived.wait()


#: (user, topic under the prefix, allowed): the table's "can" and "cannot" columns.
WRITES = [
    ("hall-a", "board/1/state", True),
    ("hall-a", "section/open/standings", True),
    ("hall-a", "alerts", True),
    ("hall-a", "results", True),
    ("hall-a", "daemon/hall-a/status", True),
    ("hall-a", "daemon/hall-a/boards", True),
    ("hall-a", "relay/r1/replies", True),
    ("hall-a", "daemon/hall-b/status", False),
    ("hall-a", "daemon/hall-b/boards", False),
    ("hall-a", "daemon/hall-b/alerts", False),
    ("hall-a", "daemon/hall-b/commands", False),
    ("relay", "daemon/hall-a/commands", True),
    ("relay", "board/1/state", False),
    ("relay", "daemon/hall-a/status", False),
    ("relay", "daemon/hall-a/boards", False),
    ("relay", "daemon/relay/boards", False),  # announcing boards as a daemon called "relay"
    ("relay", "alerts", False),
    ("relay", "results", False),
    ("relay", "relay/r1/replies", False),
]


async def test_who_can_write_what(broker: Mosquitto) -> None:
    async with logged_in(broker, "relay") as watching:
        observer = Observer(watching)
        await watching.subscribe(f"{PREFIX}/#", qos=1)
        follower = asyncio.create_task(observer.follow())
        try:
            for user, group in itertools.groupby(WRITES, key=lambda w: w[0]):
                async with logged_in(broker, user) as client:
                    for _, topic, _ in group:
                        await client.publish(f"{PREFIX}/{topic}", f"by {user}".encode(), qos=1)
                    # the broker handles one client's messages in order: once this one
                    # arrives, every earlier one allowed has arrived too
                    marker = f"{PREFIX}/daemon/hall-a/commands"
                    if user != "relay":
                        marker = f"{PREFIX}/daemon/{user}/marker"
                    await client.publish(marker, b"marker", qos=1)
                    async with asyncio.timeout(10):
                        await observer.reached(marker, b"marker")
        finally:
            follower.cancel()
    arrived = {
        (topic.removeprefix(f"{PREFIX}/"), payload.decode()) for topic, payload in observer.seen
    }
    for user, topic, allowed in WRITES:
        assert ((topic, f"by {user}") in arrived) == allowed, (user, topic, allowed)


async def test_a_daemon_reads_its_own_commands_only(broker: Mosquitto) -> None:
    async with logged_in(broker, "hall-a") as daemon, logged_in(broker, "relay") as relay:
        await daemon.subscribe(f"{PREFIX}/daemon/+/commands", qos=1)
        await relay.publish(f"{PREFIX}/daemon/hall-b/commands", b"for b", qos=1)
        await relay.publish(f"{PREFIX}/daemon/hall-a/commands", b"for a", qos=1)
        got = []
        async with asyncio.timeout(10):
            async for message in daemon.messages:
                got.append(message.topic.value)
                if message.topic.value.endswith("hall-a/commands"):
                    break
        assert got == [f"{PREFIX}/daemon/hall-a/commands"]


@pytest.mark.parametrize(("user", "password"), [(None, None), ("relay", "wrong"), ("evil", "x")])
async def test_anonymous_or_unknown_clients_cannot_connect(
    broker: Mosquitto, user: str | None, password: str | None
) -> None:
    client = aiomqtt.Client("127.0.0.1", broker.port, username=user, password=password)
    with pytest.raises(aiomqtt.MqttError):
        async with client:
            pass


async def test_a_relay_with_its_account_serves_a_daemons_board(broker: Mosquitto) -> None:
    state = BoardState(board=4, white="W", black="B", status=BoardStatus.ONLINE, updated_at=5.0)
    async with logged_in(broker, "hall-b") as daemon:
        payload = json.dumps(to_json_dict(state)).encode()
        await daemon.publish(f"{PREFIX}/board/4/state", payload, qos=1, retain=True)
    settings = relay_settings(broker, "r1")
    mqtt = replace(settings.mqtt, username="relay", password=USERS["relay"])
    async with running_relay(replace(settings, mqtt=mqtt)) as relay:
        await wait_until(lambda: relay.hub.state(4) is not None, what="board 4 on the relay")


def test_an_open_broker_connection_is_named_at_start() -> None:
    lan = MqttSettings(host="broker.venue.lan", prefix=PREFIX)
    said = exposure(lan)
    assert said is not None
    assert "anonymously (no mqtt.username) and without TLS (mqtt.tls = false)" in said
    without_tls = exposure(replace(lan, username="hall-a", password="x"))
    assert without_tls is not None
    assert "anonymously" not in without_tls
    assert "without TLS" in without_tls
    assert exposure(replace(lan, username="hall-a", password="x", tls=True)) is None
    for host in ("127.0.0.1", "localhost", "::1", "127.0.1.1"):
        assert exposure(replace(lan, host=host)) is None, host
