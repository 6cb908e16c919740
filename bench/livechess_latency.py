"""Latency from the last serial byte of a move to a LiveChess ``eboardevent``, beside the
spectator feed's in the same run.

Run ``.venv/bin/python bench/livechess_latency.py [--boards 2 100] [--seconds 30]``.

The set-up of ``bench/latency.py`` (a farm of emulated boards on ptys playing real games
at blitz pace, the daemon in its own process, every process timing with
``time.monotonic()``), with ``[livechess] enabled = true`` in the daemon's
configuration and two watchers, each in a process of its own, at the same time:

* **spectator**: ``ws://…/ws``, the spectator feed (``latency.watch_feed``);
* **livechess**: ``ws://…:PORT/api/v1.0``, a LiveChess client as lichess's DGT page is
  one: it finds each board's serial number in the tournament resource
  (``eboards[N-1]`` is board N), subscribes to every board's ``eboardevent`` and notes
  when each ply first appears in ``san``.

Both are matched against the farm's lever presses by board and ply (a move's last
serial byte is the BWTIME its lever press sends, see ``bench/latency.py``). The LiveChess
path is the spectator's plus one step: the LiveChess server, a hub listener, wakes the
sender of each subscribed connection, which encodes the event (once per board) and
sends it. Each farm board has its own serial number, as in a hall.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import chess
from common import Child, send_line, stdin_lines, write_round_config
from farm import serve_farm
from latency import GRACE, LatencyRun, match_moves, watch_feed
from websockets.asyncio.client import connect

from daemon.shell.app import Daemon, DaemonOptions

__all__ = ["main", "measure", "watch_livechess"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def _farm(args: argparse.Namespace) -> None:
    await serve_farm(args.boards, Path(args.folder), args.seed)


async def _daemon(args: argparse.Namespace) -> None:
    daemon = await Daemon.open(args.config, DaemonOptions(port=0))
    await daemon.start()
    stop = asyncio.Event()
    task = asyncio.create_task(daemon.run(stop))
    assert daemon.livechess is not None
    await daemon.livechess.listening.wait()
    send_line({"port": daemon.server.port, "livechess": daemon.livechess.port})
    async for _ in stdin_lines():
        pass
    stop.set()
    await task


def _get(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1.0{path}", timeout=30) as r:
        return json.loads(r.read())


def _serials(port: int) -> dict[str, int]:
    """Board number of each serial, from the tournament resource (board N ↔ eboards[N-1])."""
    tournament = _get(port, "/tournaments")[0]
    serials = _get(port, f"/tournament/{tournament['uuid']}")["eboards"]
    return {serial: number for number, serial in enumerate(serials, 1) if serial is not None}


def _note_event(
    board: int, event: dict[str, Any], at: float, known: dict[int, list[str]], moves: list[Any]
) -> None:
    """Each ply new or changed in ``san`` since the board's previous event."""
    sans: list[str] = event["san"]
    before = known.get(board, [])
    common = 0
    while common < min(len(before), len(sans)) and before[common] == sans[common]:
        common += 1
    position = chess.Board(event["start"])
    for ply, san in enumerate(sans, 1):
        move = position.parse_san(san)
        if ply > common:
            moves.append([board, ply, move.uci(), at])
        position.push(move)
    known[board] = sans


async def watch_livechess(args: argparse.Namespace) -> None:
    """A LiveChess client on every board: each ply with its arrival time."""
    boards = await asyncio.to_thread(_serials, args.port)
    moves: list[list[Any]] = []
    known: dict[int, list[str]] = {}
    url = f"ws://127.0.0.1:{args.port}/api/v1.0"
    async with connect(url, max_size=None, compression=None) as ws:
        by_feed = dict(enumerate(boards.items(), 1))
        for feed, (serial, _) in by_feed.items():
            param = {"feed": "eboardevent", "id": feed, "param": {"serialnr": serial}}
            await ws.send(json.dumps({"call": "subscribe", "id": feed, "param": param}))

        async def consume() -> None:
            async for text in ws:
                at = time.monotonic()
                message = json.loads(text)
                if message["response"] == "feed":
                    board = by_feed[message["id"]][1]
                    _note_event(board, message["param"], at, known, moves)
                    if len(known) == args.boards and not ready.is_set():
                        ready.set()
                        send_line({"ready": True})

        ready = asyncio.Event()
        consumer = asyncio.create_task(consume())
        async for message in stdin_lines():
            if message.get("stop"):
                break
        consumer.cancel()
    send_line({"moves": moves})


async def measure(
    boards: int, seconds: float, warmup: float = 5.0
) -> tuple[LatencyRun, LatencyRun]:
    """Play; returns (spectator feed, LiveChess feed) figures of the same moves."""
    with tempfile.TemporaryDirectory(prefix="dgtcast-bench-") as folder:
        work = Path(folder)
        children: list[Child] = []
        try:
            farm = await Child.start(
                "livechess_latency.py",
                ["--role", "farm", "--boards", str(boards), "--folder", str(work)],
                work / "farm.log",
            )
            children.append(farm)
            config = write_round_config(work, (await farm.receive(60))["ports"])
            config.write_text(
                config.read_text() + f"\n[livechess]\nenabled = true\nport = {_free_port()}\n"
            )
            started = time.monotonic()
            daemon = await Child.start(
                "livechess_latency.py",
                ["--role", "daemon", "--config", str(config)],
                work / "daemon.log",
            )
            children.insert(0, daemon)
            ports = await daemon.receive(120)
            watch = await Child.start(
                "latency.py",
                ["--role", "watch", "--port", str(ports["port"]), "--boards", str(boards)],
                work / "watch.log",
            )
            children.insert(0, watch)
            await watch.receive(60 + boards * 0.1)
            live = await Child.start(
                "livechess_latency.py",
                ["--role", "livechess", "--port", str(ports["livechess"]), "--boards", str(boards)],
                work / "livechess.log",
            )
            children.insert(0, live)
            await live.receive(60 + boards * 0.1)
            connect_s = time.monotonic() - started
            farm.send({"go": seconds, "stagger": 3.0})
            played = await farm.receive(seconds + 60)
            await asyncio.sleep(GRACE)
            runs = []
            for watcher in (watch, live):
                watcher.send({"stop": True})
                arrivals = (await watcher.receive(60))["moves"]
                latencies, lost, wrong = match_moves(
                    played["presses"], arrivals, played["go"] + warmup
                )
                runs.append(
                    LatencyRun(
                        boards=boards,
                        spectators=1,
                        seconds=seconds,
                        latencies=latencies,
                        lost=lost,
                        wrong=wrong,
                        daemon_cpu=0.0,
                        rss_idle_kib=0,
                        rss_end_kib=0,
                        connect_s=connect_s,
                    )
                )
            return runs[0], runs[1]
        finally:
            for child in children:
                await child.finish()


def _line(name: str, run: LatencyRun) -> str:
    return (
        f"{run.boards:>4} boards, {name:<22} median {run.median_ms:6.1f} ms, "
        f"p99 {run.quantile_ms(0.99):6.1f} ms, max {run.quantile_ms(1.0):6.1f} ms over "
        f"{run.moves} moves ({run.lost} lost, {run.wrong} misread)"
    )


_ROLES = {"farm": _farm, "daemon": _daemon, "livechess": watch_livechess, "watch": watch_feed}


def main(argv: list[str] | None = None) -> int:
    """Run a role (in a child) or measure every board count (the command line)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--boards", type=int, nargs="+", default=[2, 100])
    parser.add_argument("--seconds", type=float, default=30.0, help="play time per run")
    parser.add_argument("--role", choices=sorted(_ROLES), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role is not None:
        args.boards = args.boards[0]
        asyncio.run(_ROLES[args.role](args))
        return 0
    for boards in args.boards:
        feed, livechess = asyncio.run(measure(boards, args.seconds))
        print(_line("spectator feed:", feed), flush=True)
        print(_line("LiveChess eboardevent:", livechess), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
