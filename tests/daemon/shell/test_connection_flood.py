"""One client's connection flood under a low open-file limit (issue 17.4), through the
real daemon, and a real relay, each in a process of its own.

The server runs with 200 open files at most (soft and hard, so it cannot raise it). One
client opens 300 connections and sends nothing. Other clients must still be served, and
the log must not fill with a traceback per failed accept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import signal
import socket
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from tests.daemon.support import BoardSpec, write_config
from tests.mosquitto import Mosquitto
from tests.relay.support import relay_file
from tests.serving import dgtcast

OPEN_FILES = 200
FLOOD = 300


def _low_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))


async def _get(port: int, path: str, source: str) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    status = await reader.readline()
    writer.close()
    return status


@pytest.mark.parametrize("server", ["daemon", "relay"])
async def test_a_flood_of_idle_connections_leaves_others_served(
    tmp_path: Path, server: str
) -> None:
    with contextlib.ExitStack() as stack:
        if server == "daemon":
            config = write_config(tmp_path, [BoardSpec(1, None)])
            args = ["run", "--config", str(config), "--http-port", "0"]
        else:
            broker = stack.enter_context(Mosquitto(tmp_path / "mosquitto"))
            args = [
                "relay",
                "--config",
                str(relay_file(tmp_path, broker, "r1")),
                "--http-port",
                "0",
            ]
        await _flood(tmp_path, args)


async def _flood(tmp_path: Path, args: list[str]) -> None:
    process = await asyncio.create_subprocess_exec(
        *dgtcast(*args),
        cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        preexec_fn=_low_limit,
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stderr is not None
    flood: list[socket.socket] = []
    try:
        port = None
        async with asyncio.timeout(60):
            while port is None:
                line = (await process.stdout.readline()).decode()
                assert line, "the server ended before serving"
                if line.startswith("viewer:"):
                    port = int(line.rsplit(":", 1)[1].strip(" /\n"))
        for _ in range(FLOOD):
            sock = socket.socket()
            sock.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                sock.connect(("127.0.0.1", port))
            flood.append(sock)
        await asyncio.sleep(0)
        async with asyncio.timeout(60):
            async with connect(
                f"ws://127.0.0.1:{port}/ws", local_addr=("127.0.0.2", 0)
            ) as spectator:
                snapshot = json.loads(await spectator.recv())
            assert snapshot["type"] == "snapshot"
            assert (await _get(port, "/arbiter", "127.0.0.3")).startswith(b"HTTP/1.1 200")
    finally:
        for sock in flood:
            sock.close()
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(60):
            _, err = await process.communicate()
    assert process.returncode == 0
    log = err.decode()
    assert "Traceback" not in log
    assert log.count("cannot accept connections") <= 1
    refused = [line for line in log.splitlines() if "closed at once" in line]
    assert refused, "the flood's connections beyond the client's share were refused"
