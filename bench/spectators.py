"""A relay's spectator feed at a round's pace: every spectator, every move, within 1 s?

Run: ``.venv/bin/python bench/spectators.py [--spectators 1000 10000] [--rate 125]
[--seconds 20] [--interval 0.1] [--fixed-ticks] [--json]``; :func:`measure_apart` runs
one measurement in a process of its own (``--json``), so that what earlier ones freed
does not hide the memory per spectator.

Set-up: a :class:`~broadcast.web.server.BroadcastServer` and its hub alone in this process,
as in a relay (``frame_interval`` 0.1 s; the ticks keep to two thirds of the server's time,
so more spectators make them sparser: ``--fixed-ticks`` ticks every 0.1 s whatever they
cost, as a relay did before ticks were kept to its time: docs/performance.md, "Spectator
ticks"). A publisher plays a 500-board round at ``--rate`` moves a second (125: 500 boards
of blitz): each move is a new board state with one more ply, the other side's clock running
and ``clock_at`` = the wall-clock time of the publish, so the feed gives a ``move`` and a
``clock`` event for it. The spectators are real websocket connections on loopback from
``--workers`` client processes (a minimal protocol offering the ``dgtcast.batch``
subprotocol), each reading everything.

Play starts once every spectator has its snapshot (the server's write buffers empty).
Measured: for every chunk a spectator reads, how late its oldest event is (the wall
clock at arrival minus the first ``clock_at`` in it: the publish time of the oldest move
in the chunk); at the end, that every spectator's last ``seq`` is the hub's (every move
held) and how many had to start over from a snapshot; the server's CPU while playing,
hence spectators per core at that pace; its RSS per spectator. The client processes'
own CPU is reported too: when they are near a full core each, the lateness is theirs
as much as the server's, and the figure to trust is the server's CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import multiprocessing
import multiprocessing.connection
import os
import re
import resource
import subprocess
import sys
import time
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import NoCommands, machine, open_spectators, raise_fd_limit
from loopwatch import LoopWatch

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState, BoardStatus, MoveInfo
from broadcast.web.fanout import TICK_SHARE
from broadcast.web.server import BroadcastServer

__all__ = ["Figures", "main", "measure", "measure_apart"]

BOARDS = 500
_CLOCK_AT = re.compile(rb'"clock_at":([0-9.]+)')
_SEQ = re.compile(rb'"seq":([0-9]+)')


def cpu_seconds() -> float:
    """User + system CPU time of this process."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def rss_mib() -> float:
    """This process's resident set size, MiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


# --- Client side (worker processes) ---------------------------------------------------------


def _upgrade() -> bytes:
    key = "dGhlIHNhbXBsZSBub25jZQ=="
    return (
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        "Sec-WebSocket-Protocol: dgtcast.batch\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode()


class Reader(asyncio.Protocol):
    """A bare spectator: handshake, then note the lateness and the last seq of each chunk."""

    def __init__(self, lateness: array[float], ready: asyncio.Future[None]) -> None:
        self.lateness = lateness
        self.ready = ready
        self.head = b""
        self.tail = b""
        self.upgraded = False
        self.snapshots = 0
        self.last_seq = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(_UPGRADE)

    def data_received(self, data: bytes) -> None:
        if not self.upgraded:
            self.head += data
            if b"\r\n\r\n" not in self.head:
                return
            head, _, data = self.head.partition(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 101"):
                self.ready.set_exception(ConnectionError(head.decode(errors="replace")))
                return
            self.upgraded = True
        window = self.tail + data
        self.tail = window[-48:]
        if b'"type":"snapshot"' in data:
            self.snapshots += 1
            if not self.ready.done():
                self.ready.set_result(None)
        elif self.ready.done():
            found = _CLOCK_AT.search(window)
            if found is not None:
                self.lateness.append(time.time() - float(found.group(1)))
        seqs = _SEQ.findall(window[-200:])
        if seqs:
            self.last_seq = max(self.last_seq, int(seqs[-1]))


_UPGRADE = _upgrade()


async def _client_main(port: int, count: int, pipe: multiprocessing.connection.Connection) -> None:
    loop = asyncio.get_running_loop()
    lateness: array[float] = array("d")
    readers: list[Reader] = []

    def make(ready: asyncio.Future[None]) -> Reader:
        reader = Reader(lateness, ready)
        readers.append(reader)
        return reader

    transports = await open_spectators(port, count, make)
    pipe.send("ready")
    command = await loop.run_in_executor(None, pipe.recv)  # "go"
    del lateness[:]
    cpu = cpu_seconds()
    final = await loop.run_in_executor(None, pipe.recv)  # the hub's last seq, after play
    deadline = time.monotonic() + 30.0  # a stalled server may take a while
    while time.monotonic() < deadline and any(r.last_seq < final for r in readers):  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    cpu = cpu_seconds() - cpu
    values = sorted(lateness)
    pipe.send(
        {
            "command": command,
            "cpu": cpu,
            "chunks": len(values),
            "p50": values[len(values) // 2] if values else 0.0,
            "p99": values[int(len(values) * 0.99)] if values else 0.0,
            "max": values[-1] if values else 0.0,
            "late": sum(v > 1.0 for v in values),
            "behind": sum(r.last_seq < final for r in readers),
            "restarted": sum(r.snapshots > 1 for r in readers),
        }
    )
    for transport in transports:
        transport.close()


def client_process(port: int, count: int, pipe: multiprocessing.connection.Connection) -> None:
    """Entry point of one client worker."""
    raise_fd_limit()
    asyncio.run(_client_main(port, count, pipe))


# --- Server side ---------------------------------------------------------------------------


def board_state(board: int, plies: int, at: float) -> BoardState:
    """Board ``board`` ``plies`` plies into its game, its clock read at ``at``."""
    moves = tuple(
        MoveInfo(san=f"m{i}", uci="a2a3", clock=180.0 - i / 2, emt=1.0) for i in range(plies)
    )
    return BoardState(
        board=board,
        round=f"5.{board}",
        white=f"White Player {board}",
        black=f"Black Player {board}",
        moves=moves,
        last_move="a2a3" if plies else None,
        white_clock=180.0 - plies / 4,
        black_clock=180.0 - plies / 4,
        running="white" if plies % 2 == 0 else "black",
        clock_at=at,
        status=BoardStatus.ONLINE,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Figures:
    """One run's figures."""

    spectators: int
    interval: float
    rate: float
    seconds: float
    moves: int
    publisher_late_max: float  # how far the publisher fell behind its schedule, s
    fixed_ticks: bool  # every ``interval`` whatever the ticks cost
    ticks: int  # the fan-out's ticks while playing
    played: float  # the play's wall time, s
    server_cpu: float  # cores, while playing (the play's wall time: longer if behind)
    rss_per_spectator_kib: float
    clients: list[dict[str, Any]]
    loop: dict[str, Any]  # the server's loop pauses and collections (bench/loopwatch.py)

    @property
    def held_every_move(self) -> bool:
        """Whether every spectator ended at the hub's last event."""
        return all(c["behind"] == 0 for c in self.clients)

    @property
    def worst_s(self) -> float:
        """The latest any spectator got any move, s."""
        return max(float(c["max"]) for c in self.clients)

    @property
    def mean_spacing(self) -> float:
        """Seconds between two ticks on average while playing."""
        return self.played / self.ticks if self.ticks else float("inf")

    @property
    def way(self) -> str:
        """How the feed ticked, in words."""
        if self.fixed_ticks:
            return f"ticks every {self.interval:g} s"
        return f"ticks of {self.interval:g} s at least (every {self.mean_spacing:.2f} s)"

    @property
    def clients_saturated(self) -> bool:
        """Whether a client process used 90 % of a core or more (its own lag counts)."""
        return any(c["cpu"] / self.seconds >= 0.9 for c in self.clients)

    def summary(self) -> str:
        """One line of text."""
        p99 = max(c["p99"] for c in self.clients)
        late = sum(c["late"] for c in self.clients)
        restarted = sum(c["restarted"] for c in self.clients)
        behind = sum(c["behind"] for c in self.clients)
        client_cpu = ", ".join(f"{c['cpu'] / self.seconds:.0%}" for c in self.clients)
        per_core = self.spectators / self.server_cpu if self.server_cpu else float("inf")
        return (
            f"{self.spectators} spectators, {self.moves / self.seconds:.0f} moves/s, {self.way}: "
            f"move to spectator p99 {p99 * 1000:.0f} ms, worst {self.worst_s * 1000:.0f} ms "
            f"({late} chunks over 1 s); {behind} spectators missing moves at the end, "
            f"{restarted} restarted from a snapshot; server CPU {self.server_cpu:.0%} of a "
            f"core ({per_core:,.0f} spectators per core at this pace), "
            f"{self.rss_per_spectator_kib:.1f} KiB per spectator; publisher late by "
            f"{self.publisher_late_max * 1000:.0f} ms at most; server loop's longest pause "
            f"{self.loop['loop_max_ms']:.0f} ms ({self.loop['loop_max_cpu_ms']:.0f} ms of it on "
            f"the CPU), longest collection "
            f"{self.loop['gc_max_ms']:.0f} ms; client CPU {client_cpu}"
            + (" (clients saturated: their lag counts)" if self.clients_saturated else "")
        )


async def _publish(hub: Hub, rate: float, seconds: float) -> tuple[int, float]:
    """Play moves at ``rate`` a second for ``seconds``; returns (moves, worst lateness)."""
    loop = asyncio.get_running_loop()
    plies = dict.fromkeys(range(1, BOARDS + 1), 2)
    start = loop.time()
    moves, worst = 0, 0.0
    while (due := start + moves / rate) < start + seconds:
        now = loop.time()
        if due > now:
            await asyncio.sleep(due - now)
        else:  # behind: catch up, but let the server's other work run in between
            worst = max(worst, now - due)
            await asyncio.sleep(0)
        board = moves % BOARDS + 1
        plies[board] += 1
        hub.publish_board(board_state(board, plies[board], time.time()))
        moves += 1
    return moves, worst


async def measure(
    spectators: int,
    rate: float,
    seconds: float,
    interval: float,
    workers: int = 2,
    *,
    freeze: bool = True,
    fixed_ticks: bool = False,
) -> Figures:
    """Connect the spectators, play, collect."""
    hub = Hub(ring_size=8192)
    now = time.time()
    for board in range(1, BOARDS + 1):
        hub.publish_board(board_state(board, 2, now))
    loop = asyncio.get_running_loop()
    rss_before = rss_mib()
    server = BroadcastServer(
        hub,
        NoCommands(),
        backlog=4096,
        frame_interval=interval,
        tick_share=None if fixed_ticks else TICK_SHARE,
    )
    async with server:
        pipes, processes = [], []
        for index in range(workers):
            ours, theirs = multiprocessing.Pipe()
            share = spectators // workers + (index < spectators % workers)
            process = multiprocessing.Process(
                target=client_process, args=(server.port, share, theirs), daemon=True
            )
            process.start()
            pipes.append(ours)
            processes.append(process)
        for pipe in pipes:
            assert await loop.run_in_executor(None, pipe.recv) == "ready"
        settled = time.monotonic() + 120.0  # every snapshot written out, then read
        while any(server.spectator_buffers()) and time.monotonic() < settled:  # noqa: ASYNC110
            await asyncio.sleep(0.1)
        await asyncio.sleep(2.0)
        if freeze:  # the connections live on: out of the collector's full passes
            gc.collect()
            gc.freeze()
        rss_after = rss_mib()
        for pipe in pipes:
            pipe.send("go")
        cpu, began, ticks = cpu_seconds(), time.monotonic(), server.fanout.ticks
        watch = LoopWatch()
        watch.start()
        moves, late = await _publish(hub, rate, seconds)
        cpu = cpu_seconds() - cpu
        played = time.monotonic() - began  # longer than ``seconds`` when it fell behind
        ticks = server.fanout.ticks - ticks
        loop_figures = watch.stop()
        for pipe in pipes:
            pipe.send(hub.seq)
        clients = [await loop.run_in_executor(None, pipe.recv) for pipe in pipes]
        for process in processes:
            await loop.run_in_executor(None, process.join, 30)
    gc.unfreeze()
    return Figures(
        spectators=spectators,
        interval=interval,
        rate=rate,
        seconds=seconds,
        moves=moves,
        publisher_late_max=late,
        fixed_ticks=fixed_ticks,
        ticks=ticks,
        played=played,
        server_cpu=cpu / played,
        rss_per_spectator_kib=(rss_after - rss_before) * 1024 / spectators,
        clients=clients,
        loop=loop_figures,
    )


def measure_apart(
    spectators: int, rate: float, seconds: float, interval: float, *, fixed_ticks: bool = False
) -> Figures:
    """:func:`measure` in a new process (``--json``): its memory figure starts clean."""
    command = [
        sys.executable,
        str(Path(__file__)),
        "--json",
        "--spectators",
        str(spectators),
        "--rate",
        str(rate),
        "--seconds",
        str(seconds),
        "--interval",
        str(interval),
        *(["--fixed-ticks"] if fixed_ticks else []),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    return Figures(**json.loads(done.stdout.splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run every spectator count, print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--spectators", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--rate", type=float, default=125.0, help="moves a second")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--interval", type=float, default=0.1, help="the feed's tick, s")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-freeze", action="store_true", help="no gc.freeze() once connected")
    parser.add_argument(
        "--fixed-ticks", action="store_true", help="tick every --interval whatever it costs"
    )
    parser.add_argument("--json", action="store_true", help="print each run's figures as JSON")
    args = parser.parse_args(argv)
    limit = raise_fd_limit()
    if not args.json:
        print(f"{machine()}; load {os.getloadavg()[0]:.1f}; open-file limit {limit}", flush=True)
    for count in args.spectators:
        if count + 100 > limit:
            print(f"{count} spectators: skipped, the open-file limit is {limit}", file=sys.stderr)
            if args.json:
                return 1
            continue
        interval = args.interval
        figures = asyncio.run(
            measure(
                count,
                args.rate,
                args.seconds,
                interval,
                args.workers,
                freeze=not args.no_freeze,
                fixed_ticks=args.fixed_ticks,
            )
        )
        if args.json:
            print(json.dumps(dataclasses.asdict(figures)), flush=True)
        else:
            print(figures.summary(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
