"""What anyone who can write to the broker can do to a relay: nothing that lasts.

Hostile retained messages on a real mosquitto (issue 34, items 1 and 2): deep JSON, a
state without a position, a 30 MB PGN, a board of another topic, times far in the future.
The relay serves the real boards, ignores the rest with at most one WARNING line every
10 s, and never stops.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiomqtt
import httpx

from broadcast.feed.messages import BoardState, BoardStatus, MoveInfo, to_json_dict
from broadcast.relay.server import Relay
from tests.mosquitto import Mosquitto
from tests.relay.support import PREFIX, relay_file, relay_settings, running_relay
from tests.serving import start_dgtcast, stop_process
from tests.waiting import wait_until


def board(number: int, plies: int = 0, **changes: object) -> BoardState:
    """A board state as a daemon publishes it, ``plies`` moves into a game."""
    line = [("e4", "e2e4"), ("e5", "e7e5"), ("Nf3", "g1f3")]
    moves = tuple(MoveInfo(san=s, uci=u, clock=60.0) for s, u in line[:plies])
    state = BoardState(
        board=number,
        round="1",
        white=f"W{number}",
        black=f"B{number}",
        moves=moves,
        pgn=f'[Board "{number}"]\n\n' + " ".join(["1.", *(m.san for m in moves), "*"]),
        status=BoardStatus.ONLINE,
        updated_at=time.time(),
    )
    return dataclasses.replace(state, **changes)  # type: ignore[arg-type]


def encoded(state: BoardState, **changes: object) -> bytes:
    """The state's JSON with fields changed (``None``: removed)."""
    data = {**to_json_dict(state), **changes}
    return json.dumps({k: v for k, v in data.items() if v is not None}).encode()


async def publish(broker: Mosquitto, messages: list[tuple[str, bytes]]) -> None:
    """Publish retained, as any client of the broker may."""
    async with aiomqtt.Client("127.0.0.1", broker.port, identifier="hostile") as client:
        for topic, payload in messages:
            await client.publish(f"{PREFIX}/{topic}", payload, qos=1, retain=True)


def hostile_messages() -> list[tuple[str, bytes]]:
    """Every kind of message a relay reads, made wrong."""
    deep = b"[" * 100_000
    return [
        ("board/77/clocks", deep),
        ("board/78/state", encoded(board(78), fen=None)),
        ("board/79/state", encoded(board(79), pgn="1. e4 " * 5_000_000)),  # 30 MB
        ("board/80/state", encoded(board(80), pgn="1. e4 " * 100_000)),  # 600 KB of PGN
        ("board/81/state", encoded(board(3))),  # another board's state
        ("board/\u0663/state", encoded(board(3))),  # an Arabic-Indic digit 3
        ("board/82/state", encoded(board(82), fen="not a position")),
        ("board/83/state", deep),
        ("board/84/eval", deep),
        ("board/1/clocks", b'{"white": 1e999, "black": 5, "running": null, "at": 1e400}'),
        (
            "board/1/clocks",
            b'{"white": 1' + b"0" * 400 + b', "black": 5, "running": null, "at": 5}',
        ),
        ("daemon/evil/status", b"\xff" * 100),
        ("daemon/evil/alerts", deep),
        ("section/x/round/1", deep),
        ("section/x/standings", b"{" * 100_000),
    ]


async def test_hostile_retained_messages_never_stop_a_relay(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    await publish(mosquitto, [*hostile_messages(), ("board/1/state", encoded(board(1, 2)))])
    config = relay_file(tmp_path / "relay", mosquitto, "r1")
    log = tmp_path / "relay.log"
    relay = await start_dgtcast("relay", "--config", str(config), "--http-port", "0", log=log)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{relay.port}") as http:
            await shown_boards(http, until=lambda shown: 1 in shown)
            # published once the relay is subscribed: it comes after every retained message
            await publish(mosquitto, [("board/2/state", encoded(board(2)))])
            boards = await shown_boards(http, until=lambda shown: 2 in shown)
            assert set(boards) == {1, 2}
            pgn = (await http.get("/round.pgn")).text
            assert len(pgn) < 2_000
            assert "1. e4 e5" in pgn
        assert relay.process.returncode is None
    finally:
        assert await stop_process(relay.process) == 0
    lines = log.read_text(errors="replace").splitlines()
    assert not [line for line in lines if "Traceback" in line or "ERROR" in line]
    ignored = [line for line in lines if "ignored (" in line]
    assert len(ignored) == 1, ignored  # every bad message within 10 s: one line
    assert "message(s) ignored since the last line" in ignored[0]


async def shown_boards(
    http: httpx.AsyncClient, until: Callable[[dict[int, Any]], bool], within: float = 30.0
) -> dict[int, Any]:
    """The boards of ``/status.json`` once ``until`` holds for them."""
    async with asyncio.timeout(within):
        while True:
            status = (await http.get("/status.json")).json()
            boards = {b["board"]: b for b in status["boards"]}
            if until(boards):
                return boards
            await asyncio.sleep(0.05)


async def test_a_forged_time_holds_no_board_back(mosquitto: Mosquitto) -> None:
    clocks = {"white": 1.0, "black": 1.0, "running": "white", "at": 9e9}
    await publish(
        mosquitto,
        [
            ("board/2/state", encoded(board(2), updated_at=9e9, clock_at=9e9)),
            ("board/2/clocks", json.dumps(clocks).encode()),
        ],
    )
    async with running_relay(relay_settings(mosquitto, "r1")) as relay:
        await wait_until(lambda: relay.hub.state(2) is not None, what="the forged state")
        await publish(mosquitto, [("board/2/state", encoded(board(2, plies=2)))])
        await wait_until(lambda: _plies(relay, 2) == 2, what="the real state after it")
        reading = {"white": 50.0, "black": 60.0, "running": "black", "at": time.time()}
        await publish(mosquitto, [("board/2/clocks", json.dumps(reading).encode())])
        await wait_until(lambda: _white_clock(relay, 2) == 50.0, what="the real clocks")
        assert relay.view.ignored == 0  # taken as the receiver's time, not refused


def _plies(relay: Relay, number: int) -> int:
    state = relay.hub.state(number)
    return -1 if state is None else len(state.moves)


def _white_clock(relay: Relay, number: int) -> float | None:
    state = relay.hub.state(number)
    return None if state is None else state.white_clock
