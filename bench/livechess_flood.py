"""Viewer latency while LiveChess clients flood the daemon (issue 26).

Run ``.venv/bin/python bench/livechess_flood.py [--boards 3] [--seconds 30] [--flood 0 5]``.

The set-up of ``bench/livechess_latency.py`` (a farm of emulated boards on ptys playing
real games at blitz pace, the daemon in its own process with ``[livechess]`` enabled,
every process timing with ``time.monotonic()``) and, in processes of their own:

* **watch**: a spectator on ``ws://…/ws``; each move's latency from its last serial
  byte to the spectator (``latency.watch_feed``);
* **probe**: a viewer asking ``GET /round.pgn`` and sending a ``ping`` on its spectator
  connection every 100 ms; the round trip of each;
* **flood** × N: a LiveChess client as the attack of issue 26 was: it subscribes
  1,000 times to the boards and sets up a position of its own on each feed (distinct
  FENs), again and again for the whole run, over one connection, and reads nothing
  back after its first answers.

Printed per flood size: the spectator's move latency (median, p99, max) and the
probe's round trips (median, p99, max, and how many took over 100 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import chess
from common import (
    Child,
    median,
    percentile,
    process_cpu_seconds,
    send_line,
    stdin_lines,
    write_round_config,
)
from latency import GRACE, LatencyRun, match_moves, watch_feed
from livechess_latency import _daemon, _farm, _free_port
from websockets.asyncio.client import connect

__all__ = ["main"]

SUBSCRIPTIONS = 1000


def _serials(port: int) -> list[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1.0/eboards", timeout=30) as r:
        return [board["serialnr"] for board in json.loads(r.read())]


def _positions(count: int) -> list[str]:
    """``count`` distinct legal positions (random-looking walks from the start)."""
    fens: list[str] = []
    board = chess.Board()
    step = 0
    while len(fens) < count:
        moves = list(board.legal_moves)
        if not moves or board.ply() > 60:
            board = chess.Board()
            step += 1
            continue
        board.push(moves[(len(fens) * 7 + step) % len(moves)])
        fens.append(board.fen())
    return fens


async def flood(args: argparse.Namespace) -> None:
    """Subscribe and set up distinct positions, again and again, until told to stop."""
    serials = await asyncio.to_thread(_serials, args.port)
    fens = _positions(SUBSCRIPTIONS)
    url = f"ws://127.0.0.1:{args.port}/api/v1.0"
    sent = 0
    stop = asyncio.Event()

    async def until_stop() -> None:
        async for message in stdin_lines():
            if message.get("stop"):
                break
        stop.set()

    watcher = asyncio.create_task(until_stop())
    send_line({"ready": True})
    while not stop.is_set():
        async with connect(url, max_size=None, compression=None) as ws:
            for feed in range(SUBSCRIPTIONS):
                serial = serials[feed % len(serials)]
                param = {"feed": "eboardevent", "id": feed, "param": {"serialnr": serial}}
                await ws.send(json.dumps({"call": "subscribe", "id": 2 * feed, "param": param}))
                setup = {"id": feed, "method": "setup", "param": {"fen": fens[feed]}}
                await ws.send(json.dumps({"call": "call", "id": 2 * feed + 1, "param": setup}))
                sent += 2
                if stop.is_set():
                    break
            ws.transport.pause_reading()  # reads nothing more
            try:
                async with asyncio.timeout(2.0):
                    await stop.wait()
            except TimeoutError:
                pass
    watcher.cancel()
    send_line({"sent": sent})


async def probe(args: argparse.Namespace) -> None:
    """Round trips of ``GET /round.pgn`` and of a spectator's ``ping``, every 100 ms."""
    http: list[float] = []
    pings: list[float] = []
    stop = asyncio.Event()

    async def until_stop() -> None:
        async for message in stdin_lines():
            if message.get("stop"):
                break
        stop.set()

    async def get() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", args.port)
        writer.write(f"GET /round.pgn HTTP/1.1\r\nHost: 127.0.0.1:{args.port}\r\n\r\n".encode())
        await reader.readline()
        writer.close()

    watcher = asyncio.create_task(until_stop())
    async with connect(f"ws://127.0.0.1:{args.port}/ws", max_size=None) as ws:
        await ws.recv()  # the snapshot
        send_line({"ready": True})
        while not stop.is_set():
            began = time.monotonic()
            await get()
            http.append(time.monotonic() - began)
            began = time.monotonic()
            await ws.send(json.dumps({"type": "ping"}))
            while json.loads(await ws.recv())["type"] != "pong":
                pass
            pings.append(time.monotonic() - began)
            await asyncio.sleep(0.1)
    watcher.cancel()
    send_line({"http": http, "pings": pings})


def _figures(name: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    slow = sum(1 for v in ms if v > 100)
    return (
        f"{name:<20} median {median(ms):6.1f} ms, p99 {percentile(ms, 0.99):7.1f} ms,"
        f" max {max(ms):7.1f} ms, {slow} of {len(ms)} over 100 ms"
    )


async def measure(boards: int, seconds: float, floods: int, warmup: float = 5.0) -> list[str]:
    """One run with ``floods`` flooding LiveChess clients; the figures' lines."""
    with tempfile.TemporaryDirectory(prefix="dgtcast-bench-") as folder:
        work = Path(folder)
        children: list[Child] = []
        try:
            farm = await Child.start(
                "livechess_flood.py",
                ["--role", "farm", "--boards", str(boards), "--folder", str(work)],
                work / "farm.log",
            )
            children.append(farm)
            config = write_round_config(work, (await farm.receive(60))["ports"])
            config.write_text(
                config.read_text() + f"\n[livechess]\nenabled = true\nport = {_free_port()}\n"
            )
            daemon = await Child.start(
                "livechess_flood.py", ["--role", "daemon", "--config", str(config)], work / "d.log"
            )
            children.insert(0, daemon)
            ports = await daemon.receive(120)
            port = str(ports["port"])
            watch = await Child.start(
                "livechess_flood.py",
                ["--role", "watch", "--port", port, "--boards", str(boards)],
                work / "watch.log",
            )
            children.insert(0, watch)
            await watch.receive(60 + boards * 0.1)
            probing = await Child.start(
                "livechess_flood.py", ["--role", "probe", "--port", port], work / "probe.log"
            )
            children.insert(0, probing)
            await probing.receive(60)
            flooders = []
            for n in range(floods):
                flooder = await Child.start(
                    "livechess_flood.py",
                    ["--role", "flood", "--port", str(ports["livechess"])],
                    work / f"flood-{n}.log",
                )
                children.insert(0, flooder)
                flooders.append(flooder)
                await flooder.receive(60)
            cpu_before, began = process_cpu_seconds(daemon.pid), time.monotonic()
            farm.send({"go": seconds, "stagger": 3.0})
            played = await farm.receive(seconds + 120)
            await asyncio.sleep(GRACE)
            cpu = (process_cpu_seconds(daemon.pid) - cpu_before) / (time.monotonic() - began)
            sent = 0
            for flooder in flooders:
                flooder.send({"stop": True})
                sent += (await flooder.receive(60))["sent"]
            probing.send({"stop": True})
            trips = await probing.receive(60)
            watch.send({"stop": True})
            arrivals = (await watch.receive(60))["moves"]
            latencies, lost, wrong = match_moves(played["presses"], arrivals, played["go"] + warmup)
            run = LatencyRun(
                boards=boards,
                spectators=1,
                seconds=seconds,
                latencies=latencies,
                lost=lost,
                wrong=wrong,
                daemon_cpu=0.0,
                rss_idle_kib=0,
                rss_end_kib=0,
                connect_s=0.0,
            )
            return [
                f"{boards} boards, {floods} flooding LiveChess clients ({sent:,} calls sent),"
                f" daemon CPU {cpu:.0%}, machine load {os.getloadavg()[0]:.1f}:",
                f"  {'spectator moves':<20} median {run.median_ms:6.1f} ms,"
                f" p99 {run.quantile_ms(0.99):7.1f} ms, max {run.quantile_ms(1.0):7.1f} ms"
                f" over {run.moves} moves ({run.lost} lost, {run.wrong} misread)",
                "  " + _figures("GET /round.pgn", trips["http"]),
                "  " + _figures("spectator ping", trips["pings"]),
            ]
        finally:
            for child in children:
                await child.finish()


_ROLES: dict[str, Any] = {
    "farm": _farm,
    "daemon": _daemon,
    "watch": watch_feed,
    "probe": probe,
    "flood": flood,
}


def main(argv: list[str] | None = None) -> int:
    """Run a role (in a child) or measure every flood size (the command line)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--boards", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=30.0, help="play time per run")
    parser.add_argument("--flood", type=int, nargs="+", default=[0, 5])
    parser.add_argument("--role", choices=sorted(_ROLES), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role is not None:
        asyncio.run(_ROLES[args.role](args))
        return 0
    for floods in args.flood:
        for line in asyncio.run(measure(args.boards, args.seconds, floods)):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
