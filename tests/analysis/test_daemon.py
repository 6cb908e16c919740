"""The analysis in a real daemon: spectators, MQTT and relays get evaluations, arbiters never.

A daemon with an emulated e-board (board 1), a board without one (board 2), a real
mosquitto broker, a relay on it and the real Stockfish. The spectators' feed, the
``/eval`` topic and the relay's feed carry the evaluation of each e-board's public
position (the board without one, no move made there, gets none); the arbiter
channel, live and on the same hub chain, never carries one.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import AsyncIterator
from typing import Any

import aiomqtt
import chess.pgn
from websockets.asyncio.client import connect

from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.support import BoardSpec, running_daemon, wait_for, write_config
from tests.mosquitto import Mosquitto
from tests.relay.support import PREFIX, TOKEN, mqtt_table, relay_settings, running_relay

GAME = "1. e4 e5 2. Nf3 Nc6 3. Bb5 *"
ANALYSIS = "\n[analysis]\nenabled = true\ndepth = 8\n"


class Listener:
    """Every message of one websocket, and the latest evaluation of each board."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.evaluations: dict[int, dict[str, Any]] = {}
        self.fens: dict[int, str] = {}  # each board's position as this client was told
        self.early: list[str] = []  # evaluations of positions not shown to it yet

    def receive(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        kind = message.get("type")
        for state in message.get("boards", []):
            self.fens[state["board"]] = state["fen"]
        if kind == "board":
            self.fens[message["board"]] = message["state"]["fen"]
        elif kind in ("move", "correction", "takeback"):
            self.fens[message["board"]] = message["fen"]
        evaluations = message.get("evaluations", [])
        if kind == "eval":
            evaluations = [message["evaluation"]]
        for evaluation in evaluations:
            board = evaluation["board"]
            self.evaluations[board] = evaluation
            scored = evaluation["cp"] is not None or evaluation["mate"] is not None
            if scored and position(evaluation["fen"]) != position(self.fens.get(board, "")):
                self.early.append(f"board {board}: {evaluation['fen']} on {self.fens.get(board)}")

    def shows(self, board: int, fen: str) -> bool:
        evaluation = self.evaluations.get(board)
        return evaluation is not None and evaluation["fen"] == fen and evaluation["depth"] >= 8


def position(fen: str) -> str:
    return " ".join(fen.split()[:4])


@contextlib.asynccontextmanager
async def listening(url: str, first: dict[str, Any] | None = None) -> AsyncIterator[Listener]:
    listener = Listener()

    async def follow() -> None:
        async with connect(url) as ws:
            if first is not None:
                await ws.send(json.dumps(first))
            async for text in ws:
                assert isinstance(text, str)
                data = json.loads(text)
                for message in data if isinstance(data, list) else [data]:
                    listener.receive(message)

    task = asyncio.create_task(follow())
    try:
        yield listener
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def collect_topics(port: int, into: dict[str, list[bytes]], ready: asyncio.Event) -> None:
    async with aiomqtt.Client("127.0.0.1", port, identifier="analysis-test-subscriber") as client:
        await client.subscribe(f"{PREFIX}/board/+/eval", qos=1)
        ready.set()
        async for message in client.messages:
            assert isinstance(message.payload, bytes | bytearray)
            into.setdefault(str(message.topic), []).append(bytes(message.payload))


async def test_evaluations_reach_spectators_mqtt_and_relays_never_arbiters(
    tmp_path: Any, mosquitto: Mosquitto
) -> None:
    game = chess.pgn.read_game(io.StringIO(GAME))
    assert game is not None
    final = game.end().board().fen()
    topics: dict[str, list[bytes]] = {}
    ready = asyncio.Event()
    subscriber = asyncio.create_task(collect_topics(mosquitto.port, topics, ready))
    await asyncio.wait_for(ready.wait(), 10)
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=5) as board:
        config = write_config(
            tmp_path,
            [BoardSpec(1, str(board.path)), BoardSpec(2, None)],
            results="provisional",  # no delay, no results held back: one hub chain at most
            extra=mqtt_table(mosquitto, "hall") + ANALYSIS,
        )
        async with (
            running_daemon(config) as daemon,
            running_relay(relay_settings(mosquitto, "relay-1")) as relay,
            running_relay(relay_settings(mosquitto, "relay-2", delay=3.0)) as later,
        ):
            port, relay_port = daemon.server.port, relay.server.port
            auth = {"type": "auth", "token": TOKEN}
            async with (
                listening(f"ws://127.0.0.1:{port}/ws/arbiter", auth) as arbiter,
                listening(f"ws://127.0.0.1:{port}/ws") as spectator,
                listening(f"ws://127.0.0.1:{relay_port}/ws") as relayed,
                listening(f"ws://127.0.0.1:{later.server.port}/ws") as delayed,
            ):
                await wait_for(daemon.sessions[1].online.is_set, 10, "board 1 online")
                await board.play(game, speed=25)
                await wait_for(lambda: spectator.shows(1, final), 60, "board 1's evaluation")
                await wait_for(lambda: relayed.shows(1, final), 60, "on the relay")
                # A relay 3 s behind the daemon holds each evaluation until its position
                # is public there: never before the move that made it.
                await wait_for(lambda: delayed.shows(1, final), 60, "on the delayed relay")

                def on_topic() -> dict[str, Any]:
                    found: dict[str, Any] = json.loads(topics[f"{PREFIX}/board/1/eval"][-1])
                    return found

                await wait_for(
                    lambda: f"{PREFIX}/board/1/eval" in topics and on_topic()["fen"] == final,
                    30,
                    "on MQTT",
                )
                async with listening(f"ws://127.0.0.1:{port}/ws") as newcomer:
                    await wait_for(lambda: newcomer.shows(1, final), 10, "in the snapshot")
                    assert newcomer.messages[0]["type"] == "snapshot"
                await wait_for(lambda: len(arbiter.messages) > 2, 10, "the arbiter's feed")
    subscriber.cancel()
    await asyncio.gather(subscriber, return_exceptions=True)
    assert 2 not in spectator.evaluations  # no e-board and no move: no game to evaluate
    evaluation = spectator.evaluations[1]
    assert evaluation["cp"] is not None or evaluation["mate"] is not None
    assert evaluation["line"]
    assert on_topic() == evaluation
    assert arbiter.messages[0]["type"] == "snapshot"
    assert "evaluations" not in arbiter.messages[0]
    assert not [m for m in arbiter.messages if m.get("type") == "eval"]
    for listener in (spectator, relayed, delayed):
        assert listener.early == []
    assert [m for m in delayed.messages if m.get("type") == "eval"]  # held, then sent live
    assert any(m.get("type") == "move" for m in arbiter.messages)  # it did follow the game
