"""E-board battery levels end to end (issue 12): the real driver asks emulated boards on
ptys (a Bluetooth board at 84 %, then 61 % and charging; a USB board that stays silent),
the daemon journals the levels, and a real LiveChess client (``eboards``) and a real
spectator (``ws://…/ws``) see them; a restarted daemon keeps them from its journal."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from daemon.journal.inputs import BATTERY
from daemon.journal.store import Journal
from daemon.shell.app import Daemon
from drivers.dgt.battery import BATTERY_MISSES
from drivers.dgt.commands import RequestBattery
from drivers.dgt.device_core import DeviceTimeouts
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from tests.broadcast.feed_client import FeedModel, recv_json
from tests.daemon.support import FAST_TRACKER, BoardSpec, running_daemon, wait_for, write_config
from tests.livechess.client import LiveChessClient

#: The battery asked every 0.3 s instead of every minute.
TIMEOUTS = DeviceTimeouts(quiet=3.0, probe=3.0, battery=0.3)
LIVECHESS = {"livechess": {"enabled": True}}
BLUETOOTH, USB = "23946", "07425"


@asynccontextmanager
async def daemon_on(config: Path, *, snapshot: bool = True) -> AsyncIterator[Daemon]:
    """A daemon on ``config``; ``snapshot=False``: one whose settings differ from the last
    run's, so the snapshot its clean stop left is not used and every input is replayed."""
    tracker = FAST_TRACKER if snapshot else dataclasses.replace(FAST_TRACKER, settle_time=0.31)
    async with running_daemon(
        config, tracker=tracker, livechess_port=0, device_timeouts=TIMEOUTS
    ) as daemon:
        yield daemon


@asynccontextmanager
async def livechess_client(daemon: Daemon) -> AsyncIterator[LiveChessClient]:
    server = daemon.livechess
    assert server is not None
    await wait_for(server.listening.is_set, 10, "LiveChess API listening")
    async with connect(f"ws://127.0.0.1:{server.port}/api/v1.0", open_timeout=10) as ws:
        yield LiveChessClient(ws)


async def batteries(client: LiveChessClient) -> dict[str, Any]:
    """``battery`` of each listed e-board, by serial number."""
    answer = await client.call("eboards")
    return {board["serialnr"]: board["battery"] for board in answer["param"]}


async def eboards_until(client: LiveChessClient, wanted: dict[str, Any]) -> None:
    async with asyncio.timeout(20):
        while await batteries(client) != wanted:  # noqa: ASYNC110 - asked of the server
            await asyncio.sleep(0.05)


async def spectator_until(ws: Any, model: FeedModel, board: int, **fields: Any) -> None:
    async with asyncio.timeout(20):
        while any(model.boards.get(board, {}).get(k) != v for k, v in fields.items()):
            model.apply(await recv_json(ws, 20))


def battery_records(journal_path: Path) -> list[tuple[int, dict[str, Any]]]:
    with Journal(journal_path, read_only=True) as journal:
        return [(r.board, r.payload) for r in journal.records(kinds={BATTERY})]


@pytest.mark.parametrize("snapshot", [True, False], ids=["from-snapshot", "replayed"])
async def test_battery_levels_reach_livechess_and_spectators_and_survive_a_restart(
    tmp_path: Path, snapshot: bool
) -> None:
    bluetooth = BoardIdentity.from_serial(BLUETOOTH).bluetooth(84)
    async with (
        EmulatedBoard(identity=bluetooth, seed=3) as one,
        EmulatedBoard(identity=BoardIdentity.from_serial(USB), seed=4) as two,
    ):
        specs = [BoardSpec(1, str(one.path)), BoardSpec(2, str(two.path))]
        config = write_config(tmp_path, specs, tables=LIVECHESS)
        async with daemon_on(config) as daemon, livechess_client(daemon) as client:
            await eboards_until(client, {BLUETOOTH: "84%", USB: None})
            async with connect(f"ws://127.0.0.1:{daemon.server.port}/ws") as ws:
                model = FeedModel()
                model.apply(await recv_json(ws, 20))  # the snapshot
                assert model.boards[1]["battery"] == 84
                assert model.boards[2]["battery"] is None
                one.firmware.identity = bluetooth.bluetooth(61, charging=True)
                await spectator_until(ws, model, 1, battery=61, battery_charging=True)
            await eboards_until(client, {BLUETOOTH: "61%", USB: None})
            polls = one.firmware.commands.count(RequestBattery())
            await wait_for(
                lambda: one.firmware.commands.count(RequestBattery()) >= polls + 5,
                20,
                "the Bluetooth board asked on",
            )
            state = daemon.hub.state(1)
            assert state is not None
            assert (state.battery, state.battery_charging) == (61, True)
        # Asked every 0.3 s, answered every time: journalled only when the level changed.
        assert battery_records(tmp_path / "journal.db") == [
            (1, {"percent": 84, "charging": False}),
            (1, {"percent": 61, "charging": True}),
        ]
        assert two.firmware.commands.count(RequestBattery()) == BATTERY_MISSES
        one.unplug()
        restarted = daemon_on(config, snapshot=snapshot)
        async with restarted as daemon, livechess_client(daemon) as client:
            assert (daemon.service.replayed_from > 0) is snapshot
            # Board 1 is not heard again: its level comes from the journal.
            assert await batteries(client) == {BLUETOOTH: "61%", USB: None}
            await wait_for(lambda: daemon.sessions[2].online.is_set(), 10, "board 2 back")
            state = daemon.hub.state(1)
            assert state is not None
            assert (state.battery, state.battery_charging) == (61, True)
