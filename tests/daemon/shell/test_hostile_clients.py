"""Hostile clients on every surface of a real daemon at once (issue 26): a token flood
on the arbiter channel from one address and from addresses rotating over 127.0.0.0/8,
LiveChess clients subscribing and setting up positions by the hundred, and commands for
boards the round does not have. The arbiter still gets in, the viewer is served,
SIGTERM stops the daemon, nothing refused is journalled, and no traceback is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import chess
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidMessage

from broadcast.feed.commands import SetResult
from daemon.journal.inputs import ARBITER
from daemon.journal.store import Journal
from daemon.round.codec import command_payload
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from tests.broadcast.feed_client import http_get
from tests.daemon.config_file import TomlTable
from tests.daemon.support import BoardSpec, running_daemon, write_config
from tests.serving import DGTCAST
from tests.waiting import wait_until

TOKEN = "arbiter-secret"  # write_config's default
SERIAL = "23946"
HELD = 20  # wrong-token connections from the arbiter's own address, left waiting
ROTATING = 300  # wrong tokens from addresses rotating over 127.0.0.0/8
LIVECHESS_CLIENTS = 3
SETUPS = 150  # per LiveChess client, each a position of its own


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.asynccontextmanager
async def _daemon_process(config: Path) -> AsyncIterator[tuple[asyncio.subprocess.Process, int]]:
    """``dgtcast run`` in its own process; yields it and its broadcast port."""
    process = await asyncio.create_subprocess_exec(
        str(DGTCAST), "run", "--config", str(config), "--http-port", "0",
        cwd=config.parent, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    try:
        async with asyncio.timeout(60):
            while True:
                line = (await process.stdout.readline()).decode()
                assert line, "the daemon ended before serving"
                if line.startswith("viewer:"):
                    break
        yield process, int(line.rsplit(":", 1)[1].strip(" /\n"))
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def _guess(url: str, token: str, source: str, *, wait: bool) -> ClientConnection | None:
    """Send a wrong token from ``source``; keep the connection open unless ``wait``
    (then read the answer if it comes soon, and close)."""
    ws = await connect(url, local_addr=(source, 0), open_timeout=20)
    await ws.send(json.dumps({"type": "auth", "token": token}))
    if not wait:
        return ws
    with contextlib.suppress(TimeoutError, Exception):
        async with asyncio.timeout(0.2):
            await ws.recv()
    await ws.close()
    return None


async def _rotating_guesses(url: str) -> None:
    for batch in range(0, ROTATING, 20):
        sources = [f"127.0.{(i // 250) + 1}.{(i % 250) + 2}" for i in range(batch, batch + 20)]
        await asyncio.gather(*(_guess(url, f"guess-{s}", s, wait=True) for s in sources))


async def _livechess_flood(port: int) -> ClientConnection:
    """Subscribe and set up a position of its own on every feed, as fast as it can send;
    the connection is left open, reading nothing."""
    ws = await connect(f"ws://127.0.0.1:{port}/api/v1.0", max_size=None, open_timeout=20)
    ws.transport.pause_reading()
    board = chess.Board()
    for feed in range(SETUPS):
        param = {"feed": "eboardevent", "id": feed, "param": {"serialnr": SERIAL}}
        await ws.send(json.dumps({"call": "subscribe", "id": 2 * feed, "param": param}))
        moves = list(board.legal_moves)
        board.push(moves[feed % len(moves)])
        if board.is_game_over():
            board = chess.Board()
        setup = {"id": feed, "method": "setup", "param": {"fen": board.fen()}}
        await ws.send(json.dumps({"call": "call", "id": 2 * feed + 1, "param": setup}))
    return ws


async def _arbiter_gets_in(url: str) -> dict[str, object]:
    async with connect(url, open_timeout=20) as ws:
        await ws.send(json.dumps({"type": "auth", "token": TOKEN}))
        answer: dict[str, object] = json.loads(await ws.recv())
    return answer


async def test_every_surface_flooded_at_once_and_sigterm_stops_the_daemon(
    tmp_path: Path,
) -> None:
    livechess = _free_port()
    async with EmulatedBoard(identity=BoardIdentity(serial=SERIAL)) as eboard:
        tables: dict[str, TomlTable] = {"livechess": {"enabled": True, "port": livechess}}
        config = write_config(tmp_path, [BoardSpec(1, str(eboard.path))], tables=tables)
        async with _daemon_process(config) as (process, port):
            url = f"ws://127.0.0.1:{port}/ws/arbiter"

            async def heard() -> bool:
                answer = await http_get(livechess, "/api/v1.0/eboards")
                return SERIAL in answer.body.decode()

            async with asyncio.timeout(60):
                while not await heard():  # noqa: ASYNC110 - another process: no event to wait on
                    await asyncio.sleep(0.1)
            held = [await _guess(url, f"held-{n}", "127.0.0.1", wait=False) for n in range(HELD)]
            rotating = asyncio.create_task(_rotating_guesses(url))
            livechess_floods = [
                asyncio.create_task(_livechess_flood(livechess)) for _ in range(LIVECHESS_CLIENTS)
            ]
            async with asyncio.timeout(30):  # before: over 5 minutes
                answer = await _arbiter_gets_in(url)
            assert answer["type"] == "snapshot", answer
            viewer = await http_get(port, "/round.pgn")
            assert viewer.status == 200
            await rotating
            stuck = await asyncio.gather(*livechess_floods)
            process.send_signal(signal.SIGTERM)  # guesses held, LiveChess clients not reading
            async with asyncio.timeout(15):  # before: it did not stop (SIGKILL was needed)
                _, err = await process.communicate()
            for ws in [*held, *stuck]:
                assert ws is not None
                ws.transport.abort()
    assert process.returncode == 0
    log = err.decode()
    assert "Traceback" not in log
    assert "Lock is not acquired" not in log
    wrong = [line for line in log.splitlines() if "wrong arbiter token" in line]
    assert 1 <= len(wrong) <= 3, wrong  # one line every 10 s in all, not one per guess


async def test_refused_commands_leave_no_record_and_do_not_come_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = write_config(tmp_path, [BoardSpec(1, None), BoardSpec(2, None)])
    commands = [
        ({"type": "set_result", "board": 5000, "result": "1-0"}, "no board 5000"),
        ({"type": "confirm_result", "board": 9999}, "no board 9999"),
        ({"type": "accept_position", "board": 77}, "no board 77"),
        ({"type": "ack_alert", "id": 4321}, "no alert 4321"),
        ({"type": "confirm_result", "board": 1}, "board 1 has no result to confirm"),
        ({"type": "accept_position", "board": 1}, "board 1 has no e-board"),
        (
            {"type": "set_result", "board": 10**30, "result": "1-0"},
            "'board' must be a positive integer up to 9999",
        ),
    ]
    async with running_daemon(config) as daemon:
        journal_path = daemon.journal.path
        before = daemon.journal.last_seq
        async with connect(f"ws://127.0.0.1:{daemon.server.port}/ws/arbiter") as ws:
            await ws.send(json.dumps({"type": "auth", "token": TOKEN}))
            assert json.loads(await ws.recv())["type"] == "snapshot"
            for ref, (command, reason) in enumerate(commands):
                await ws.send(json.dumps({**command, "ref": ref}))
                while (reply := json.loads(await ws.recv()))["type"] not in ("ok", "error"):
                    pass
                assert reply == {"type": "error", "ref": ref, "reason": reason}
            await ws.send(json.dumps({"type": "set_result", "board": 2, "result": "1-0"}))
            while (reply := json.loads(await ws.recv()))["type"] not in ("ok", "error"):
                pass
            assert reply["type"] == "ok", "a command for a board of the round is carried out"
        await wait_until(lambda: daemon.journal.last_seq > before, 10, "the result journalled")
    with Journal(journal_path, read_only=True) as journal:
        boards = {record.board for record in journal.records()}
        commands_kept = [dict(r.payload) for r in journal.records(kinds={ARBITER})]
    assert not boards & {77, 5000, 9999}
    assert commands_kept == [command_payload(SetResult(board=2, result="1-0"))]
    with caplog.at_level(logging.WARNING):
        async with running_daemon(config):
            pass
    assert not any("the journal holds boards" in r.getMessage() for r in caplog.records)


async def test_one_address_s_connections_are_counted_over_both_ports(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        [BoardSpec(1, None)],
        server={"max_connections_per_client": 4},
        tables={"livechess": {"enabled": True}},
    )
    async with running_daemon(config, livechess_port=0) as daemon:
        assert daemon.livechess is not None
        livechess = f"ws://127.0.0.1:{daemon.livechess.port}/api/v1.0"
        spectators = [
            await connect(f"ws://127.0.0.1:{daemon.server.port}/ws", open_timeout=20)
            for _ in range(3)
        ]
        tool = await connect(livechess, open_timeout=20)  # the fourth, on the other port
        with pytest.raises(InvalidMessage):  # the fifth: closed at once
            await connect(livechess, open_timeout=20)
        other = await connect(livechess, open_timeout=20, local_addr=("127.0.0.2", 0))
        for ws in [*spectators, tool, other]:
            await ws.close()
