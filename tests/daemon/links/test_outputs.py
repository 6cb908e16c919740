"""The daemon's outputs with real parts: a mosquitto broker and the PGN folder."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import aiomqtt
import chess.pgn

from broadcast.feed.commands import ConfirmResult
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.conftest import Serve
from tests.daemon.support import read_game, wait_for
from tests.mosquitto import Mosquitto


async def _collect(port: int, into: dict[str, Any], ready: asyncio.Event) -> None:
    async with aiomqtt.Client("127.0.0.1", port, identifier="dgtcast-test-subscriber") as client:
        await client.subscribe("dgtcast/#", qos=1)
        ready.set()
        async for message in client.messages:
            payload = message.payload
            assert isinstance(payload, bytes | bytearray)
            into.setdefault(str(message.topic), []).append(bytes(payload))


def _last_state(received: dict[str, Any]) -> dict[str, Any]:
    states = received.get("dgtcast/board/1/state") or [b"{}"]
    state: dict[str, Any] = json.loads(states[-1])
    state.setdefault("result", None)
    return state


async def test_mqtt_and_pgn_folder_follow_a_game(
    tmp_path: Path, games_dir: Path, serve: Serve
) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")  # ends in mate, 0-1
    received: dict[str, Any] = {}
    with Mosquitto(tmp_path / "broker") as broker:
        ready = asyncio.Event()
        subscriber = asyncio.create_task(_collect(broker.port, received, ready))
        await asyncio.wait_for(ready.wait(), 10)
        async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=4) as board:
            mqtt = {"host": "127.0.0.1", "port": broker.port}
            pgn_folder = {"path": str(tmp_path / "pgn")}
            tables = {"mqtt": mqtt, "pgn_folder": pgn_folder}
            async with serve(board, tables=tables) as daemon:
                await board.play(game, speed=25)
                await wait_for(lambda: daemon.core.engine.result_of(1) is not None, 10, "mate")
                reply = await daemon.service.execute(ConfirmResult(board=1))
                assert reply.ok
                await wait_for(lambda: "dgtcast/results" in received, 10, "result on MQTT")
                # board states and results leave the outbox in their own order: wait for
                # the state that carries the result (and so every move before it)
                await wait_for(lambda: _last_state(received)["result"] == "0-1", 10, "state")
                written_game = tmp_path / "pgn" / "round-2" / "game-1.pgn"
                await wait_for(  # public outputs get the result once confirmed
                    lambda: written_game.exists() and '"0-1"' in written_game.read_text(),
                    10,
                    "result in the PGN folder",
                )
        subscriber.cancel()  # and stopped while the broker is up: it disconnects cleanly
        with contextlib.suppress(asyncio.CancelledError):
            await subscriber
    state = _last_state(received)
    assert [m["uci"] for m in state["moves"]] == [m.uci() for m in game.mainline_moves()]
    assert state["result"] == "0-1"
    result = json.loads(received["dgtcast/results"][-1])
    assert result["board"] == 1
    assert result["result"] == "0-1"
    folder = tmp_path / "pgn" / "round-2"
    with (folder / "game-1.pgn").open() as handle:
        written = chess.pgn.read_game(handle)
    assert written is not None
    assert written.headers["Result"] == "0-1"
    assert [m.uci() for m in written.mainline_moves()] == [m.uci() for m in game.mainline_moves()]
    assert (folder / "games.pgn").read_text().count("[Event ") == 1
