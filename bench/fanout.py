"""Fan-out of one move to 1,000, 5,000 and 10,000 websocket spectators, on loopback.

Run: ``.venv/bin/python bench/fanout.py [--spectators 1000 5000 10000] [--rounds 5]``

Set-up: the :class:`BroadcastServer` and its :class:`Hub` run in this process, alone on
its event loop. The spectators are real websocket connections (handshake and frames on
TCP loopback) opened by separate client processes (``--workers``, 2 by default), each
holding a share of them on one asyncio loop with a minimal client protocol, so that the
figures are the server's, not a client library's. The machine is shared: on a 2-core
box the client processes compete with the server for CPU, which makes the times
pessimistic.

For each round one move is published on board 1 of a 20-board round; the fan-out time
runs from ``hub.publish_board`` to the moment the last spectator has read the move
event (CLOCK_MONOTONIC, which all processes share). Printed per spectator count: the
time to connect everyone, the fan-out (median and worst round), the median spectator's
latency, the server's CPU time per fan-out, and the server's resident memory (RSS)
before and after the spectators connected.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import os
import resource
import statistics
import time
from dataclasses import dataclass, field

from common import NoCommands, open_spectators, raise_fd_limit, upgrade_request

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState, BoardStatus, MoveInfo
from broadcast.web.server import BroadcastServer

__all__ = ["main"]

LINE = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5"]


def rss_mib() -> float:
    """This process's resident set size, MiB (from /proc/self/status)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds() -> float:
    """User + system CPU time of this process."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --- Client side (worker processes) ---------------------------------------------------


@dataclass
class Watch:
    """What the spectators of one worker are waiting for."""

    marker: bytes = b""
    seen: list[float] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    expected: int = 0


class Spectator(asyncio.Protocol):
    """A bare websocket client: handshake, then look for the marker in the frames."""

    def __init__(self, watch: Watch, ready: asyncio.Future[None]) -> None:
        self.watch = watch
        self.ready = ready
        self.head = b""
        self.tail = b""
        self.upgraded = False
        self.found: bytes = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(upgrade_request())

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
        if not self.ready.done() and b'"type":"snapshot"' in data:
            self.ready.set_result(None)
        self._look(data)

    def _look(self, data: bytes) -> None:
        marker = self.watch.marker
        window = self.tail + data
        self.tail = window[-64:]
        if marker and self.found != marker and marker in window:
            self.found = marker
            self.watch.seen.append(time.monotonic())
            if len(self.watch.seen) == self.watch.expected:
                self.watch.done.set()


async def _client_main(port: int, count: int, pipe: multiprocessing.connection.Connection) -> None:
    loop = asyncio.get_running_loop()
    watch = Watch(expected=count)
    transports = await open_spectators(port, count, lambda ready: Spectator(watch, ready))
    pipe.send("ready")
    while True:
        command = await loop.run_in_executor(None, pipe.recv)
        if command is None:
            break
        watch.marker, watch.seen = command, []
        watch.done.clear()
        pipe.send("armed")
        await asyncio.wait_for(watch.done.wait(), 60)
        pipe.send((min(watch.seen), statistics.median(watch.seen), max(watch.seen)))
    for transport in transports:
        transport.close()


def client_process(port: int, count: int, pipe: multiprocessing.connection.Connection) -> None:
    """Entry point of one client worker."""
    raise_fd_limit()
    asyncio.run(_client_main(port, count, pipe))


# --- Server side -------------------------------------------------------------------------


def board_state(board: int, plies: int) -> BoardState:
    """A plausible board of a round, ``plies`` plies into the game."""
    moves = tuple(
        MoveInfo(san=san, uci="a2a3", clock=5400.0 - 40 * i) for i, san in enumerate(LINE[:plies])
    )
    return BoardState(
        board=board,
        round="5",
        white=f"White Player {board}",
        black=f"Black Player {board}",
        moves=moves,
        white_clock=5400.0,
        black_clock=5400.0,
        running="white" if plies % 2 == 0 else "black",
        clock_at=time.time(),
        status=BoardStatus.ONLINE,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Figures:
    """The measurements of one spectator count."""

    spectators: int
    connect_s: float
    fanout_s: list[float]
    median_latency_s: list[float]
    cpu_s: list[float]
    rss_before_mib: float
    rss_after_mib: float


async def _round(
    hub: Hub, pipes: list[multiprocessing.connection.Connection], plies: int
) -> tuple[float, float, float]:
    loop = asyncio.get_running_loop()
    marker = f'{{"type":"move","seq":{hub.seq + 1},'.encode()
    for pipe in pipes:
        pipe.send(marker)
    for pipe in pipes:
        assert await loop.run_in_executor(None, pipe.recv) == "armed"
    cpu0 = cpu_seconds()
    start = time.monotonic()
    hub.publish_board(board_state(1, plies))
    results = [await loop.run_in_executor(None, pipe.recv) for pipe in pipes]
    cpu = cpu_seconds() - cpu0
    last = max(r[2] for r in results)
    median = statistics.median(r[1] for r in results)
    return last - start, median - start, cpu


async def measure(spectators: int, workers: int, rounds: int) -> Figures:
    """Connect ``spectators`` clients, publish ``rounds`` moves, return the figures."""
    hub = Hub()
    for board in range(1, 21):
        hub.publish_board(board_state(board, 2))
    rss_before = rss_mib()
    loop = asyncio.get_running_loop()
    async with BroadcastServer(hub, NoCommands(), backlog=4096) as server:
        started = time.monotonic()
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
        connect_s = time.monotonic() - started
        assert server.spectator_count == spectators
        rss_after = rss_mib()
        samples = [await _round(hub, pipes, 3 + r) for r in range(rounds)]
        for pipe in pipes:
            pipe.send(None)
        for process in processes:
            await loop.run_in_executor(None, process.join, 30)
    return Figures(
        spectators=spectators,
        connect_s=connect_s,
        fanout_s=[s[0] for s in samples],
        median_latency_s=[s[1] for s in samples],
        cpu_s=[s[2] for s in samples],
        rss_before_mib=rss_before,
        rss_after_mib=rss_after,
    )


def report(figures: Figures) -> str:
    """One block of text for one spectator count."""
    ms = 1000.0
    per_conn_kib = (figures.rss_after_mib - figures.rss_before_mib) * 1024 / figures.spectators
    return "\n".join(
        [
            f"{figures.spectators} spectators",
            f"  connect all:       {figures.connect_s:.2f} s",
            f"  fan-out of a move: median {statistics.median(figures.fanout_s) * ms:.1f} ms, "
            f"worst {max(figures.fanout_s) * ms:.1f} ms over {len(figures.fanout_s)} moves",
            f"  median spectator:  {statistics.median(figures.median_latency_s) * ms:.1f} ms",
            f"  server CPU:        {statistics.median(figures.cpu_s) * ms:.1f} ms per fan-out",
            f"  server RSS:        {figures.rss_before_mib:.1f} MiB before, "
            f"{figures.rss_after_mib:.1f} MiB connected ({per_conn_kib:.1f} KiB per spectator)",
        ]
    )


def main() -> None:
    """Parse the arguments, run every spectator count, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--spectators", type=int, nargs="+", default=[1000, 5000, 10000])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    limit = raise_fd_limit()
    print(f"open-file limit {limit}, {os.cpu_count()} CPUs, {args.workers} client processes")
    for spectators in args.spectators:
        if spectators + 100 > limit:
            print(f"{spectators} spectators: skipped, the open-file limit is {limit}")
            continue
        figures = asyncio.run(measure(spectators, args.workers, args.rounds))
        print(report(figures), flush=True)


if __name__ == "__main__":
    main()
