"""The event key against a real mosquitto that anyone may write to (issue 34, item 3).

Daemon and relay in this process share ``[mqtt] event_key``. A client of the broker
without it publishes arbiter commands and a retained announcement of the daemon's boards
by a daemon "evil", online: the commands are refused (answered, not carried out, not
journalled), the announcement neither stops the daemon from starting nor takes its
boards on the relay; forged alert lists and answers are ignored, and a signed command
published again is refused, also after a restart. Without a key, the forged announcement
is an alert and the daemon serves its boards.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from broadcast.feed.alerts import Alert, AlertKind
from broadcast.feed.commands import CommandReply, SetResult
from broadcast.feed.messages import to_json_dict
from broadcast.feed.signing import EventKey
from broadcast.outputs.mqtt_rounds import read_section_message, section_key
from broadcast.outputs.mqtt_wire import Ownership, alert_list_payload, encode
from broadcast.relay.server import Relay
from broadcast.relay.wire import CommandRequest, answer_payload
from daemon.config.model import ConfigError, load_config
from daemon.journal.store import Journal
from tests.daemon.support import BoardSpec, running_daemon, wait_for, write_config
from tests.mosquitto import Mosquitto
from tests.relay.support import KEY, PREFIX, Arbiter, mqtt_table, relay_settings, running_relay

FORGER_REPLIES = f"{PREFIX}/relay/forger/replies"


def daemon_config(folder: Path, broker: Mosquitto, name: str, boards: list[int]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    table = mqtt_table(broker, name, KEY)
    return write_config(folder, [BoardSpec(b, None) for b in boards], extra=table)


def keyed_relay(broker: Mosquitto) -> Any:
    return running_relay(relay_settings(broker, "r1", KEY))


def arbiter_records(journal: Path) -> list[dict[str, object]]:
    with Journal(journal, read_only=True) as opened:
        return [dict(r.payload) for r in opened.records(kinds={"arbiter"})]


def forged_command(request: str, key: EventKey | None = None) -> bytes:
    command = SetResult(board=1, result="0-1")
    payload = CommandRequest(
        request=request, reply_to=FORGER_REPLIES, sent_at=time.time(), command=command
    ).to_payload()
    topic = f"{PREFIX}/daemon/hall-a/commands"
    return payload if key is None else key.sign(topic, payload)


async def hall_a_ready(relay: Relay) -> None:
    view = relay.view
    await wait_for(
        lambda: view.is_online("hall-a") and view.owner_of(1) == "hall-a",
        10,
        "hall-a online, owning board 1",
    )


async def test_only_commands_signed_with_the_event_key_are_carried_out(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    config = daemon_config(tmp_path / "a", mosquitto, "hall-a", [1])
    async with keyed_relay(mosquitto) as relay, running_daemon(config):
        await hall_a_ready(relay)
        async with Arbiter.connected(relay.server.port) as arbiter:
            reply = await arbiter.command({"type": "set_result", "board": 1, "result": "1-0"})
            assert reply["type"] == "ok"
        answers: dict[str, dict[str, Any]] = {}
        async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="forger") as forger:
            await forger.subscribe(FORGER_REPLIES, qos=1)
            other_key = EventKey("another-key-of-another-event")
            for request, key in (("unsigned", None), ("other-key", other_key)):
                await forger.publish(
                    f"{PREFIX}/daemon/hall-a/commands", forged_command(request, key), qos=1
                )
            async for message in forger.messages:
                answer = json.loads(message.payload)
                answers[answer["request"]] = answer
                if len(answers) == 2:
                    break
    assert answers["unsigned"]["ok"] is False
    assert answers["unsigned"]["reason"].startswith("not signed with the event key")
    assert answers["other-key"]["reason"].startswith("signed with another key")
    assert arbiter_records(tmp_path / "a" / "journal.db") == [
        {"command": "set_result", "board": 1, "result": "1-0"}
    ]


async def test_a_forged_announcement_neither_stops_a_daemon_nor_takes_its_boards(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    forged = {"daemon": "evil", "boards": [1, 2, 3, 4, 5], "sections": [], "at": 9e9}
    async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="forger") as forger:
        await forger.publish(f"{PREFIX}/daemon/evil/status", b"online", qos=1, retain=True)
        boards = json.dumps(forged).encode()
        await forger.publish(f"{PREFIX}/daemon/evil/boards", boards, qos=1, retain=True)
    config = daemon_config(tmp_path / "a", mosquitto, "hall-a", [1, 2])
    async with keyed_relay(mosquitto) as relay, running_daemon(config):  # it starts
        await hall_a_ready(relay)
        assert relay.view.owner_of(2) == "hall-a"
        assert relay.view.owner_of(3) is None
        async with Arbiter.connected(relay.server.port) as arbiter:
            reply = await arbiter.command({"type": "set_result", "board": 2, "result": "1-0"})
            assert reply["type"] == "ok"
    assert arbiter_records(tmp_path / "a" / "journal.db") == [
        {"command": "set_result", "board": 2, "result": "1-0"}
    ]


async def test_without_a_key_a_forged_claim_is_an_alert_and_the_daemon_serves(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    forged = {"daemon": "evil", "boards": [1, 2, 3, 4, 5], "sections": [], "at": 9e9}
    async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="forger") as forger:
        await forger.publish(f"{PREFIX}/daemon/evil/status", b"online", qos=1, retain=True)
        boards = json.dumps(forged).encode()
        await forger.publish(f"{PREFIX}/daemon/evil/boards", boards, qos=1, retain=True)
    folder = tmp_path / "a"
    folder.mkdir()
    config = write_config(
        folder, [BoardSpec(1, None), BoardSpec(2, None)], extra=mqtt_table(mosquitto, "hall-a")
    )
    async with running_daemon(config) as daemon:  # before: ConfigError, exit code 2
        (alert,) = daemon.hub.open_alerts()
        assert alert.kind == "boards_claimed"
        assert alert.details["claims"] == [
            'mqtt: boards 1-2 already belong to daemon "evil", online on the broker:'
            " give each daemon its own boards"
        ]
        assert "This daemon serves its boards all the same" in alert.action
        announced: dict[str, Any] = {}
        async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="reader") as reader:
            await reader.subscribe(f"{PREFIX}/daemon/hall-a/+", qos=1)
            async for message in reader.messages:
                announced[message.topic.value.rsplit("/", 1)[1]] = message.payload
                if {"boards", "alerts"} <= set(announced) and b"boards_claimed" in announced[
                    "alerts"
                ]:
                    break
        assert json.loads(announced["boards"])["boards"] == [1, 2]
        assert daemon.hub.state(1) is not None
        assert daemon.hub.state(2) is not None


async def test_a_signed_command_sent_again_is_refused_even_after_a_restart(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    config = daemon_config(tmp_path / "a", mosquitto, "hall-a", [1])
    replies = f"{PREFIX}/relay/r1/replies"
    async with (
        keyed_relay(mosquitto) as relay,
        aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="eavesdropper") as eve,
    ):
        await eve.subscribe(f"{PREFIX}/daemon/hall-a/commands", qos=1)
        async with running_daemon(config):
            await hall_a_ready(relay)
            async with Arbiter.connected(relay.server.port) as arbiter:
                for result in ("1-0", "0-1"):
                    command = {"type": "set_result", "board": 1, "result": result}
                    assert (await arbiter.command(command))["type"] == "ok"
        captured = (await anext(eve.messages)).payload  # the relay's signed "1-0"
        assert isinstance(captured, bytes)
        await eve.subscribe(replies, qos=1)
        async with running_daemon(config):  # a new run: its answers in memory are gone
            await hall_a_ready(relay)
            await eve.publish(f"{PREFIX}/daemon/hall-a/commands", captured, qos=1)
            async for message in eve.messages:
                if message.topic.value == replies:
                    answer = json.loads(message.payload)
                    break
    assert answer["ok"] is False
    assert answer["reason"].startswith("carried out already")
    assert arbiter_records(tmp_path / "a" / "journal.db") == [
        {"command": "set_result", "board": 1, "result": "1-0"},
        {"command": "set_result", "board": 1, "result": "0-1"},
    ]


def test_a_short_event_key_is_refused_in_the_configuration(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    tmp_path.mkdir(exist_ok=True)
    table = mqtt_table(mosquitto, "hall-a") + 'event_key = "short"\n'
    config = write_config(tmp_path, [BoardSpec(1, None)], extra=table)
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert any("mqtt.event_key: too short" in line for line in caught.value.problems)


async def test_with_the_key_a_relay_shows_only_the_daemons_own_states_and_clocks(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    config = daemon_config(tmp_path / "a", mosquitto, "hall-a", [1])
    async with keyed_relay(mosquitto) as relay, running_daemon(config):
        await hall_a_ready(relay)
        await wait_for(lambda: relay.hub.state(1) is not None, 10, "hall-a's board 1")
        state = relay.hub.state(1)
        assert state is not None
        forged_state = {**to_json_dict(replace(state, white="Forged")), "updated_at": time.time()}
        forged_clocks = {"white": 1.0, "black": 1.0, "running": "white", "at": time.time()}
        ignored = relay.view.ignored
        async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="forger") as forger:
            for leaf, data in (("state", forged_state), ("clocks", forged_clocks)):
                payload = json.dumps(data).encode()
                await forger.publish(f"{PREFIX}/board/1/{leaf}", payload, qos=1, retain=True)
        await wait_for(lambda: relay.view.ignored == ignored + 2, 10, "both refused")
        shown = relay.hub.state(1)
        assert shown is not None
        assert shown.white == "White, Board 1"
        assert shown.white_clock != 1.0


async def test_with_the_key_a_relay_takes_only_signed_alert_lists_and_answers(
    mosquitto: Mosquitto,
) -> None:
    """The test signs as daemon hall-a would (it has the key); the forger has no key."""
    key = EventKey(KEY)
    topic = f"{PREFIX}/daemon/hall-a/"
    claim = Ownership(daemon_id="hall-a", boards=(1,), at=time.time())
    signed_alert = Alert.raised(
        id=7, kind=AlertKind.FLAG_FALL, board=1, at=1.0, details={}, action="x"
    )
    forged_alert = dataclasses.replace(signed_alert, id=8, action="forged")
    settings = relay_settings(mosquitto, "r1", KEY, command_timeout=2.0)
    async with (
        running_relay(settings) as relay,
        aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="hall-a-and-forger") as client,
    ):
        await client.subscribe(f"{topic}commands", qos=1)
        alerts = alert_list_payload([signed_alert], signed=True)
        for leaf, payload in (
            ("status", b"online"),
            ("boards", key.sign(f"{topic}boards", claim.to_payload())),
            ("alerts", key.sign(f"{topic}alerts", alerts)),
        ):
            await client.publish(f"{topic}{leaf}", payload, qos=1, retain=True)
        await hall_a_ready(relay)
        await wait_for(lambda: len(relay.hub.open_alerts()) == 1, 10, "hall-a's alert")
        ignored = relay.view.ignored
        forged = (encode([to_json_dict(forged_alert)]), b"")  # a list, and a cleared one
        for leaf, payload in zip(("alerts", "resolved"), forged, strict=True):
            await client.publish(f"{topic}{leaf}", payload, qos=1, retain=True)
        await wait_for(lambda: relay.view.ignored == ignored + 2, 10, "both refused")
        assert [a.action for a in relay.hub.open_alerts()] == ["x"]

        async def answer_as_forger_then_as_hall_a() -> None:
            message = await anext(client.messages)
            request = CommandRequest.from_payload(message.payload)
            forged = CommandReply(ok=True, reason="")
            real = CommandReply(ok=False, reason="the daemon's own answer")
            for reply, signed in ((forged, False), (real, True)):
                payload = answer_payload(request.request, "hall-a", reply)
                if signed:
                    payload = key.sign(request.reply_to, payload)
                await client.publish(request.reply_to, payload, qos=1)

        answering = asyncio.create_task(answer_as_forger_then_as_hall_a())
        async with Arbiter.connected(relay.server.port) as arbiter:
            reply = await arbiter.command({"type": "set_result", "board": 1, "result": "1-0"})
        await answering
    assert reply["type"] == "error"
    assert reply["reason"] == "the daemon's own answer"


def test_a_signature_is_no_part_of_the_standings_served() -> None:
    data = {"section": "", "standings": [{"rank": 1}], "pairings": []}
    topic = f"{PREFIX}/section/{section_key('')}/standings"
    signed = EventKey(KEY).sign(topic, json.dumps(data).encode())
    message = read_section_message([section_key(""), "standings"], signed)
    assert message is not None
    assert message.standings == data
