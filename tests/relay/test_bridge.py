"""Daemons and a relay in this process, through a real mosquitto: commands, alerts, clashes."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from dataclasses import replace
from pathlib import Path

import pytest

from broadcast.feed.alerts import Alert
from broadcast.feed.messages import BoardStatus
from broadcast.outputs.lichess import LichessTarget
from broadcast.outputs.mqtt import MqttPublisher
from broadcast.outputs.mqtt_client import MqttLinkState, MqttSettings
from broadcast.outputs.mqtt_wire import Ownership
from broadcast.outputs.pgn_folder import PgnFolderSettings
from broadcast.relay.ownership import StartClaims, check_ownership
from broadcast.relay.server import Relay
from daemon.config.model import ConfigError
from daemon.journal.store import Journal
from daemon.shell.app import Daemon, DaemonOptions
from drivers.emulator.device import EmulatedBoard
from tests.broadcast.conftest import RecordingServer
from tests.broadcast.fake_lichess import GOOD, FakeLichess, path_of
from tests.daemon.support import BoardSpec, running_daemon, wait_for, write_config
from tests.mosquitto import Mosquitto
from tests.pairing.support import player_line, trf_text
from tests.relay.support import (
    KEY,
    PREFIX,
    Arbiter,
    journal_open_alerts,
    mqtt_table,
    relay_settings,
    running_relay,
)


def daemon_config(
    folder: Path,
    broker: Mosquitto,
    name: str,
    boards: list[BoardSpec],
    *,
    key: str | None = None,
    round_start: str | None = None,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    extra = mqtt_table(broker, name, key)
    return write_config(folder, boards, extra=extra, round_start=round_start)


def arbiter_records(journal_path: Path) -> list[dict[str, object]]:
    with Journal(journal_path, read_only=True) as journal:
        return [dict(r.payload) for r in journal.records(kinds={"arbiter"})]


def read_text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def result_of(relay: Relay, board: int) -> tuple[str, BoardStatus] | None:
    state = relay.hub.state(board)
    return None if state is None else (state.result, state.status)


async def test_commands_reach_the_owning_daemon_or_wait_for_it(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    hall_a = daemon_config(tmp_path / "a", mosquitto, "hall-a", [BoardSpec(1, None)])
    hall_b = daemon_config(tmp_path / "b", mosquitto, "hall-b", [BoardSpec(2, None)])
    folder = PgnFolderSettings(path=tmp_path / "pgn")
    # Provisional results in public: the folder shows the arbiter's result before it is confirmed.
    settings = relay_settings(mosquitto, "r1", pgn_folder=folder, results="provisional")
    async with running_relay(settings) as relay:
        async with running_daemon(hall_a), running_daemon(hall_b):
            view = relay.view
            # Status, ownership and states are separate retained topics: wait for all.
            await wait_for(
                lambda: (
                    view.is_online("hall-a")
                    and view.is_online("hall-b")
                    and None not in (view.owner_of(1), view.owner_of(2))
                    and None not in (relay.hub.state(1), relay.hub.state(2))
                ),
                10,
                "both online, with their boards",
            )
            assert (view.owner_of(1), view.owner_of(2)) == ("hall-a", "hall-b")
            async with Arbiter.connected(relay.server.port) as arbiter:
                assert [b["board"] for b in arbiter.snapshot["boards"]] == [1, 2]
                reply = await arbiter.command({"type": "set_result", "board": 2, "result": "1-0"})
                assert reply == {"type": "ok", "ref": "r1", "command": "set_result", "details": {}}
                await wait_for(lambda: result_of(relay, 2) == ("1-0", BoardStatus.MANUAL), 10, "")
            written = tmp_path / "pgn" / "round-2" / "game-2.pgn"
            await wait_for(lambda: '[Result "1-0"]' in read_text(written), 10, "PGN folder")
            assert '[White "White, Board 1"]' in read_text(tmp_path / "pgn/round-2/games.pgn")
        assert arbiter_records(tmp_path / "b" / "journal.db") == [
            {"command": "set_result", "board": 2, "result": "1-0"}
        ]
        await wait_for(lambda: not relay.view.is_online("hall-b"), 10, "hall-b offline")
        assert result_of(relay, 2) == ("1-0", BoardStatus.OFFLINE)
        async with Arbiter.connected(relay.server.port) as arbiter:
            queued = await arbiter.command({"type": "set_result", "board": 2, "result": "0-1"})
            refused = await arbiter.command({"type": "accept_position", "board": 2})
        assert queued == {
            "type": "error",
            "ref": "r1",
            "reason": "board 2's daemon 'hall-b' is offline; the command is queued and will be"
            " carried out when it returns",
            "details": {"queued": True, "daemon": "hall-b"},
        }
        assert refused["reason"].startswith("board 2's daemon 'hall-b' is offline;")
        async with running_daemon(hall_b):
            await wait_for(lambda: result_of(relay, 2) == ("0-1", BoardStatus.MANUAL), 10, "0-1")
    assert arbiter_records(tmp_path / "b" / "journal.db")[1:] == [
        {"command": "set_result", "board": 2, "result": "0-1"}
    ]
    assert arbiter_records(tmp_path / "a" / "journal.db") == []


async def test_alerts_are_served_by_every_relay_acknowledged_and_resolved_at_the_daemon(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    an_hour_ago = dt.datetime.now().astimezone() - dt.timedelta(hours=1)
    async with EmulatedBoard() as seven, EmulatedBoard() as eight:
        config = daemon_config(
            tmp_path / "a",
            mosquitto,
            "hall-a",
            [BoardSpec(7, str(seven.path)), BoardSpec(8, str(eight.path))],
            round_start=an_hour_ago.isoformat(timespec="seconds"),
        )
        async with (
            running_daemon(config) as daemon,
            running_relay(relay_settings(mosquitto, "r1")) as relay,
        ):
            await wait_for(lambda: len(relay.hub.open_alerts()) == 2, 10, "late arrival alerts")
            local = {(a.board, a.id): a for a in daemon.hub.open_alerts()}
            assert {a.kind for a in local.values()} == {"late_arrival"}
            shown = {a.id: a for a in relay.hub.open_alerts()}
            assert set(shown) == {i * 10_000 + b for b, i in local}
            for (board, alert_id), alert in local.items():
                assert shown[alert_id * 10_000 + board] == replace(
                    alert, id=alert_id * 10_000 + board
                )
            (acked_board, acked), (kept_board, kept) = sorted(local)
            relay_id = acked * 10_000 + acked_board
            async with Arbiter.connected(relay.server.port) as arbiter:
                assert len(arbiter.snapshot["alerts"]) == 2
                reply = await arbiter.command({"type": "ack_alert", "id": relay_id})
                assert reply["type"] == "ok", reply
                assert [a["id"] for a in reply["details"]["alerts"]] == [relay_id]

                def seen_on_the_relay() -> bool:
                    shown = relay.hub.alert(relay_id)
                    return shown is not None and shown.acknowledged and shown.is_open

                await wait_for(seen_on_the_relay, 10, "the acknowledgement reached the relay")
                assert len(daemon.hub.open_alerts()) == 2  # seen, but the player is still late
                forfeit = {"type": "set_result", "board": acked_board, "result": "-+"}
                assert (await arbiter.command(forfeit))["type"] == "ok"  # decided: resolved
            assert [a.id for a in daemon.hub.open_alerts()] == [kept]
            at_daemon = daemon.hub.alert(acked)
            assert at_daemon is not None
            assert at_daemon.state == "resolved"
            # The relay shows the daemon's own resolution: how, by whom, when.
            settled = replace(at_daemon, id=relay_id)
            await wait_for(lambda: relay.hub.alert(relay_id) == settled, 10, "its resolution")
            assert len(relay.hub.open_alerts()) == 1
            assert "no longer open" not in settled.history[-1].note
            async with running_relay(relay_settings(mosquitto, "r2")) as late:
                await wait_for(lambda: len(late.hub.open_alerts()) == 1, 10, "late relay alerts")
                assert [a.id for a in late.hub.open_alerts()] == [kept * 10_000 + kept_board]
                await wait_for(
                    lambda: late.hub.alert(relay_id) == settled, 10, "the late relay's resolution"
                )
    assert set(journal_open_alerts(tmp_path / "a" / "journal.db")) == {kept}


def section_config(folder: Path, broker: Mosquitto) -> Path:
    """Section OPEN with one board; round 1 pairs two of four players, round 2 all four."""
    folder.mkdir(parents=True, exist_ok=True)
    names = ["Adams, Ann", "Brown, Ben", "Clark, Cleo", "Davis, Dan"]
    lines = [
        player_line(rank, name, "0.0", rating=2000 - rank) for rank, name in enumerate(names, 1)
    ]
    (folder / "open.trf").write_text(trf_text("012 Relay Congress", *lines))
    (folder / "open-r1.txt").write_text("1\n1 2\n")
    (folder / "open-r2.txt").write_text("2\n3 1\n2 4\n")
    path = folder / "event.toml"
    path.write_text(
        '[event]\nname = "Relay Congress"\nround = 1\ntime_control = "180+2"\n\n'
        '[server]\nhost = "127.0.0.1"\nport = 8080\narbiter_token = "arbiter-secret"\n\n'
        '[storage]\npath = "journal.db"\n\n[[sections]]\nname = "OPEN"\n'
        '[sections.pairing]\ntrf = "open.trf"\npairings = "open-r{round}.txt"\n'
        "[[sections.boards]]\nnumber = 1\n" + mqtt_table(broker, "hall-a")
    )
    return path


async def test_boards_a_new_round_adds_are_announced_and_take_commands(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    config = section_config(tmp_path / "a", mosquitto)
    relay_config = relay_settings(mosquitto, "r1")
    async with running_relay(relay_config) as relay, running_daemon(config) as daemon:
        view = relay.view
        await wait_for(lambda: view.owner_of(1) == "hall-a", 10, "board 1 announced")
        assert view.owner_of(2) is None
        daemon.rounds.next_round("OPEN", force=True)
        await wait_for(lambda: relay.hub.state(2) is not None, 10, "board 2 on the relay")
        await wait_for(lambda: view.owner_of(2) == "hall-a", 10, "board 2 announced")
        async with Arbiter.connected(relay.server.port) as arbiter:
            reply = await arbiter.command({"type": "set_result", "board": 2, "result": "1-0"})
        assert reply["type"] == "ok", reply
        await wait_for(lambda: result_of(relay, 2) == ("1-0", BoardStatus.MANUAL), 10, "")
    assert arbiter_records(tmp_path / "a" / "journal.db") == [
        {"command": "set_result", "board": 2, "result": "1-0"}
    ]


async def test_a_lichess_refusal_on_a_relay_is_its_own_alert_acknowledged_there(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    hall_a = daemon_config(tmp_path / "a", mosquitto, "hall-a", [BoardSpec(1, None)])
    server = RecordingServer()
    await server.start()
    fake = FakeLichess(server)
    fake.gone.add(path_of("RelayRd1"))  # the round was deleted on lichess
    target = LichessTarget(token=GOOD, rounds={"2": "RelayRd1"}, base_url=server.url(""))
    settings = relay_settings(mosquitto, "r1", lichess=(target,), results="provisional")

    def refusals(relay: Relay) -> list[Alert]:
        return [a for a in relay.hub.open_alerts() if a.kind == "lichess_refused"]

    try:
        async with running_relay(settings) as relay, running_daemon(hall_a):
            await wait_for(lambda: len(refusals(relay)) == 1, 20, "the relay's refusal alert")
            (alert,) = refusals(relay)
            assert (alert.board, alert.details["status"]) == (0, 404)
            assert "No such round" in alert.action
            assert "restart the relay" in alert.action
            before = len(fake.to("RelayRd1"))
            async with Arbiter.connected(relay.server.port) as arbiter:
                reply = await arbiter.command({"type": "ack_alert", "id": alert.id})
            assert reply["type"] == "ok", reply
            assert refusals(relay) == []
            await wait_for(lambda: len(fake.to("RelayRd1")) > before, 20, "pushed again")
    finally:
        await server.close()
    assert arbiter_records(tmp_path / "a" / "journal.db") == []  # answered by the relay


async def test_with_the_event_key_a_daemon_claiming_a_live_daemons_board_is_refused(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    boards = [BoardSpec(1, None), BoardSpec(2, None)]
    hall_a = daemon_config(tmp_path / "a", mosquitto, "hall-a", boards, key=KEY)
    clash = daemon_config(
        tmp_path / "c", mosquitto, "hall-c", [BoardSpec(2, None), BoardSpec(3, None)], key=KEY
    )
    async with running_daemon(hall_a), running_relay(relay_settings(mosquitto, "r1", KEY)) as relay:
        await wait_for(lambda: relay.view.owner_of(2) == "hall-a", 10, "hall-a announced")
        await wait_for(lambda: relay.view.is_online("hall-a"), 10, "hall-a online")
        with pytest.raises(ConfigError) as caught:
            await Daemon.open(clash, DaemonOptions(port=0))
    assert caught.value.problems == (
        f'{clash}: mqtt: board 2 already belongs to daemon "hall-a", online on the broker:'
        " give each daemon its own boards",
    )
    assert not (tmp_path / "c" / "journal.db").exists()  # refused before anything was opened
    async with running_daemon(clash):  # hall-a is offline now: its boards may be taken over
        pass


async def test_a_second_daemon_with_the_same_id_is_reported(mosquitto: Mosquitto) -> None:
    settings = MqttSettings(
        host="127.0.0.1", port=mosquitto.port, prefix=PREFIX, daemon_id="x", keepalive=5
    )
    own = Ownership(daemon_id="x", boards=(1,))
    assert await check_ownership(settings, own, grace=0.2) == StartClaims()
    publisher = MqttPublisher(settings)  # a daemon "x" is online
    task = asyncio.create_task(publisher.run())
    try:
        await wait_for(lambda: publisher.link_state is MqttLinkState.CONNECTED, 10, "x online")
        problems = await check_ownership(settings, own, grace=0.2)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert problems == StartClaims(
        same_id='mqtt.daemon_id: "x" is online on the broker already (another daemon with the'
        " same id?): give each daemon its own mqtt.daemon_id"
    )
    assert await check_ownership(settings, own, grace=0.2) == StartClaims()  # it said offline


async def test_an_unreachable_broker_is_no_clash(mosquitto: Mosquitto) -> None:
    mosquitto.stop()
    settings = MqttSettings(host="127.0.0.1", port=mosquitto.port, prefix=PREFIX, time_limit=1.0)
    assert await check_ownership(settings, Ownership(daemon_id="x", boards=(1,))) is None
