"""Latency from the last serial byte of a move to a spectator's websocket message.

Run ``.venv/bin/python bench/latency.py [--boards 2 100 500] [--seconds 30] [--profile DIR]
[--clock-rate 60]``.

Four processes, so that the daemon's is measured alone (``time.monotonic()`` is
CLOCK_MONOTONIC, one clock for every process of the machine):

* **farm**: N e-boards with clocks on ptys, each the emulator's pure
  :class:`~drivers.emulator.firmware.BoardFirmware` served by one event loop. Each board
  plays a real game (``../shared/data/games``, 30+ plies) by the emulator's human
  (:class:`~drivers.emulator.player.HumanPlayer`) at blitz pace: 0.5-5 s thinking, hands
  and a lever press, about one ply every 4 s per board, clocks at 3+2 sending a BWTIME
  every second (UPDATE_NICE, docs/protocol.md §3). Boards start within ``stagger`` seconds
  of each other so that their seconds do not tick together.
* **daemon**: :class:`~daemon.shell.app.Daemon` serving a round of those N boards with its
  default settings: journal (SQLite, WAL) in a temporary folder on disk, feed live (no
  public delay).
* **spectator**: one websocket client of ``ws://…/ws`` (``websockets.asyncio.client``).
* this process: starts the others, reads their figures, matches them.

What is timed. The daemon publishes a move when the mover presses the clock lever
(docs/reconstruction.md, "Completing moves"); the board then sends a BWTIME whose
running side changed (10 bytes, §4, §7.2), and that message is the move's last serial
byte. The farm takes ``time.monotonic()`` right after ``os.write`` has handed that
message's last byte to the pty. The spectator takes ``time.monotonic()`` when the
``move`` event naming that board and ply has arrived (the first event holding it).
Latency is the difference; a move whose event never came within the grace period is
lost and counted as infinitely late. Moves of the first ``warmup`` seconds are not
counted. The span includes the pty, the driver, the journal commit (the daemon journals
every input before it publishes), the game tracker, the hub and the websocket send.

The daemon also watches its own event loop while the boards play
(``bench/loopwatch.py``: its longest pause, its garbage collections) and counts the
snapshots it wrote. ``--clock-rate N`` adds a clock storm (``bench/farm.py``: every
running clock reports N times a second).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import logging
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec

from common import (
    Child,
    median,
    open_idle_spectators,
    percentile,
    process_cpu_seconds,
    process_rss_kib,
    raise_fd_limit,
    send_line,
    stdin_lines,
    write_round_config,
)
from farm import serve_farm
from loopwatch import LoopWatch
from websockets.asyncio.client import connect

from daemon.round.snapshot import SnapshotPolicy
from daemon.shell.app import Daemon, DaemonOptions

__all__ = [
    "LatencyRun",
    "Load",
    "idle_crowd",
    "main",
    "match_moves",
    "measure",
    "note_feed_message",
    "watch_feed",
]

#: Seconds the spectator may lag behind the end of play before a move counts as lost.
GRACE = 2.0
P = ParamSpec("P")


async def _farm(args: argparse.Namespace) -> None:
    await serve_farm(args.boards, Path(args.folder), args.seed, args.clock_rate)


# --- The daemon and the spectator -----------------------------------------------------------


async def _daemon(args: argparse.Namespace) -> None:
    raise_fd_limit()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s %(message)s")
    started = time.monotonic()
    every = args.snapshot_every
    policy = None if every is None else SnapshotPolicy(every_seconds=every)
    options = DaemonOptions(port=0, snapshots=policy)
    daemon = await Daemon.open(args.config, options)
    built = time.monotonic() - started
    await daemon.start()
    stop = asyncio.Event()
    task = asyncio.create_task(daemon.run(stop))
    send_line({"port": daemon.server.port, "replayed": daemon.replayed, "construct_s": built})
    profiler = cProfile.Profile()
    watch, taken = LoopWatch(), 0
    _mark_work(daemon, watch)
    async for message in stdin_lines():
        if message.get("profile") == "start":
            profiler.enable()
        elif message.get("profile") == "stop":
            profiler.disable()
            profiler.dump_stats(args.profile)
        if message.get("watch") == "start":
            watch.start()
            taken = daemon.service.snapshots_written
        elif message.get("watch") == "stop":
            figures = watch.stop()
            figures["snapshots"] = daemon.service.snapshots_written - taken
            send_line(figures)
            continue
        send_line({"ok": True})
    stop.set()
    await task


def _spread_text(spread: dict[str, float], what: str, digits: int = 1) -> str:
    """Durations spread out by ``bench/loopwatch.py`` in words (empty without them)."""
    if not spread.get("count"):
        return ""
    return (
        f"; {spread['count']:.0f} {what}, median {spread['median_ms']:.{digits}f} ms,"
        f" p99 {spread['p99_ms']:.{digits}f} ms, max {spread['max_ms']:.1f} ms"
    )


def _mark_work(daemon: Daemon, watch: LoopWatch) -> None:
    """Have the loop watch see each snapshot the daemon starts (its fork, on the loop) and
    each journal write (a group's records and their commit, on the loop)."""
    service = daemon.service
    snapshot = _timed(watch, "snapshot", service._snapshot_in_child)
    write = _timed(watch, "journal commit", service._write)
    service._snapshot_in_child = snapshot  # type: ignore[method-assign]
    service._write = write  # type: ignore[method-assign]


def _timed(watch: LoopWatch, cause: str, call: Callable[P, None]) -> Callable[P, None]:
    """``call``, each run of it marked as ``cause`` on ``watch``."""

    def timed(*args: P.args, **kwargs: P.kwargs) -> None:
        began = time.monotonic()
        try:
            call(*args, **kwargs)
        finally:
            watch.mark(cause, began, time.monotonic())

    return timed


async def watch_feed(args: argparse.Namespace) -> None:
    """One spectator: every move event with its arrival time; says when all are online."""
    moves: list[list[Any]] = []
    status: dict[int, str] = {}
    ready = False
    async with connect(f"ws://127.0.0.1:{args.port}/ws", max_size=None, compression=None) as ws:

        async def consume() -> None:
            nonlocal ready
            async for text in ws:
                at = time.monotonic()
                message = json.loads(text)
                note_feed_message(message, at, status, moves)
                online = sum(value == "online" for value in status.values())
                if not ready and online == args.boards:
                    ready = True
                    send_line({"ready": True})
                elif not ready:
                    print(f"{online} online", file=sys.stderr, flush=True)

        consumer = asyncio.create_task(consume())
        async for message in stdin_lines():
            if message.get("stop"):
                break
        consumer.cancel()
    send_line({"moves": moves})


async def idle_crowd(args: argparse.Namespace) -> None:
    """Idle spectators: websocket connections that read every frame and do nothing."""
    raise_fd_limit()
    transports = await open_idle_spectators(args.port, args.spectators)
    send_line({"ready": len(transports)})
    async for _ in stdin_lines():
        pass
    for transport in transports:
        transport.close()


def note_feed_message(
    message: dict[str, Any], at: float, status: dict[int, str], moves: list[Any]
) -> None:
    kind = message["type"]
    if kind == "snapshot":
        status.update((board["board"], board["status"]) for board in message["boards"])
    elif kind == "board":
        status[message["board"]] = message["state"]["status"]
    elif kind == "status":
        status[message["board"]] = message["status"]
    elif kind in ("move", "correction"):
        for index, move in enumerate(message["moves"]):
            moves.append([message["board"], message["ply"] + 1 + index, move["uci"], at])


# --- Measuring --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class LatencyRun:
    """The figures of one run.

    Attributes:
        boards: e-boards playing.
        spectators: websocket spectators connected (the measuring one included).
        seconds: how long they played (moves of the first ``warmup`` s not counted).
        latencies: seconds from a move's last serial byte to the spectator, per move.
        lost: moves whose event did not arrive within the grace period.
        wrong: moves whose event named another move (a misread).
        daemon_cpu: CPU seconds the daemon used while the boards played and the grace
            period after.
        rss_idle_kib / rss_end_kib: the daemon's RSS with every board connected, and
            after play.
        connect_s: from starting the daemon to every board online at the spectator.
        storm: clock-storm reports the farm wrote (``--clock-rate``).
        loop: the daemon's loop and collector figures while playing (``LoopWatch``)
            and the snapshots it wrote.
    """

    boards: int
    spectators: int
    seconds: float
    latencies: list[float]
    lost: int
    wrong: int
    daemon_cpu: float
    rss_idle_kib: int
    rss_end_kib: int
    connect_s: float
    storm: int = 0
    loop: dict[str, Any] | None = None
    load: str = ""  # the machine's load average when the run ended

    @property
    def readings_per_s(self) -> float:
        """Clock-storm reports per second of play."""
        return self.storm / self.seconds

    def cpu_per_reading_us(self) -> float:
        """Daemon CPU per clock reading of the storm (everything else included), µs."""
        return self.daemon_cpu / max(1, self.storm) * 1e6

    def cpu_per_move_ms(self) -> float:
        """Daemon CPU per move played (every input of the play included), ms."""
        return self.daemon_cpu / max(1, self.moves) * 1e3

    def loop_text(self) -> str:
        """The loop figures in words (empty without them)."""
        if not self.loop:
            return ""
        loop = self.loop
        return (
            f"loop's longest pause {loop['loop_max_ms']:.1f} ms "
            f"({loop.get('loop_max_cpu_ms', 0):.1f} ms of it on the CPU; "
            f"{loop['pauses_over']['10']} over 10 ms), {loop['snapshots']} snapshots, "
            f"longest collection {loop['gc_max_ms']:.1f} ms ({loop['gc_full_count']} full"
            + "".join(f", {ms:g}" for ms in loop.get("gc_full_ms", ()))
            + (" ms)" if loop.get("gc_full_ms") else ")")
            + _spread_text(loop.get("gc_young", {}), "younger collections")
            + _spread_text(loop.get("marked", {}).get("journal commit", {}), "journal commits", 2)
            + "; pauses over 10 ms: "
            + ", ".join(f"{n} {cause}" for cause, n in loop.get("pauses_by_cause", {}).items())
        )

    @property
    def moves(self) -> int:
        """Moves counted."""
        return len(self.latencies) + self.lost

    def quantile_ms(self, fraction: float) -> float:
        """A latency quantile in milliseconds; lost moves count as infinitely late."""
        return percentile(self.latencies + [math.inf] * self.lost, fraction) * 1000

    @property
    def median_ms(self) -> float:
        """Median latency, ms."""
        return median(self.latencies + [math.inf] * self.lost) * 1000

    @property
    def cpu_load(self) -> float:
        """The daemon's CPU use while playing (and the grace period after), in cores."""
        return self.daemon_cpu / (self.seconds + GRACE)

    def summary(self) -> str:
        """One line of text."""
        return (
            f"{self.boards:>4} boards, {self.spectators} spectators: "
            f"median {self.median_ms:6.1f} ms, p99 {self.quantile_ms(0.99):6.1f} ms, "
            f"max {self.quantile_ms(1.0):6.1f} ms "
            f"over {self.moves} moves ({self.lost} lost, {self.wrong} misread); daemon CPU "
            f"{self.cpu_load:.0%} of a core; RSS {self.rss_idle_kib / 1024:.0f} MiB connected, "
            f"{self.rss_end_kib / 1024:.0f} MiB after play; connect {self.connect_s:.1f} s"
            + (f"; storm {self.readings_per_s:,.0f} readings/s" if self.storm else "")
            + (f"; {self.loop_text()}" if self.loop else "")
        )


def match_moves(
    presses: list[list[Any]], arrivals: list[list[Any]], since: float
) -> tuple[list[float], int, int]:
    """Pair lever presses with the spectator's move events by board and ply.

    Args:
        presses: ``[board, ply, uci, time]`` of each move's last serial byte.
        arrivals: ``[board, ply, uci, time]`` of each move the spectator received.
        since: presses before this time are not counted.

    Returns:
        (latencies in seconds, lost moves, misread moves).
    """
    first: dict[tuple[int, int], tuple[str, float]] = {}
    for board, ply, uci, at in arrivals:
        first.setdefault((board, ply), (uci, at))
    latencies: list[float] = []
    lost = wrong = 0
    for board, ply, uci, at in presses:
        if at < since:
            continue
        seen = first.get((board, ply))
        if seen is None:
            lost += 1
        elif seen[0] != uci:
            wrong += 1
        else:
            latencies.append(seen[1] - at)
    return latencies, lost, wrong


def _child_args(role: str, *args: object) -> list[str]:
    return ["--role", role, *(str(a) for a in args)]


@dataclass(frozen=True, slots=True, kw_only=True)
class Load:
    """What one run puts on the daemon.

    Attributes:
        boards: e-boards playing at blitz pace.
        seconds: how long they play.
        spectators: idle websocket spectators besides the measuring one (another process).
        warmup: moves of the first seconds are not counted.
        stagger: boards start within this many seconds of each other.
        seed: seeds the players.
        profile: write a cProfile file of the daemon's play here.
        clock_rate: reports per second of the clock storm (0: none).
        snapshot_every: seconds between snapshots at most (None: the default policy).
    """

    boards: int
    seconds: float
    spectators: int = 0
    warmup: float = 5.0
    stagger: float = 3.0
    seed: int = 1
    profile: Path | None = None
    clock_rate: float = 0.0
    snapshot_every: float | None = None


async def measure(load: Load) -> LatencyRun:
    """Run farm, daemon and spectators; play; match the moves."""
    with tempfile.TemporaryDirectory(prefix="dgtcast-bench-") as folder:
        work = Path(folder)
        children: list[Child] = []
        try:
            farm_args = _child_args("farm", "--boards", load.boards, "--folder", work)
            farm_args += ["--seed", str(load.seed), "--clock-rate", str(load.clock_rate)]
            farm = await Child.start("latency.py", farm_args, work / "farm.log")
            children.append(farm)
            config = write_round_config(work, (await farm.receive(60))["ports"])
            started = time.monotonic()
            profile = load.profile or work / "daemon.prof"
            daemon_args = _child_args("daemon", "--config", config, "--profile", profile)
            if load.snapshot_every is not None:
                daemon_args += ["--snapshot-every", str(load.snapshot_every)]
            daemon = await Child.start("latency.py", daemon_args, work / "daemon.log")
            children.insert(0, daemon)
            port = (await daemon.receive(120))["port"]
            if load.spectators:
                crowd_args = _child_args("crowd", "--port", port, "--spectators", load.spectators)
                crowd = await Child.start("latency.py", crowd_args, work / "crowd.log")
                children.insert(0, crowd)
                await crowd.receive(60 + load.spectators * 0.01)
            watch_args = _child_args("watch", "--port", port, "--boards", load.boards)
            watch = await Child.start("latency.py", watch_args, work / "watch.log")
            children.insert(0, watch)
            await watch.receive(60 + load.boards * 0.1)
            connect_s = time.monotonic() - started
            return await _play_and_match(load, farm, daemon, watch, connect_s)
        finally:
            for child in children:
                await child.finish()


async def _play_and_match(
    load: Load, farm: Child, daemon: Child, watch: Child, connect_s: float
) -> LatencyRun:
    rss_idle = process_rss_kib(daemon.pid)
    cpu = process_cpu_seconds(daemon.pid)
    if load.profile is not None:
        daemon.send({"profile": "start"})
        await daemon.receive(10)
    daemon.send({"watch": "start"})
    await daemon.receive(10)
    farm.send({"go": load.seconds, "stagger": load.stagger})
    played = await farm.receive(load.seconds + 60)
    await asyncio.sleep(GRACE)
    cpu = process_cpu_seconds(daemon.pid) - cpu
    daemon.send({"watch": "stop"})
    loop = await daemon.receive(30)
    rss_end = process_rss_kib(daemon.pid)
    if load.profile is not None:
        daemon.send({"profile": "stop"})
        await daemon.receive(60)
    watch.send({"stop": True})
    arrivals = (await watch.receive(60))["moves"]
    since = played["go"] + load.warmup
    latencies, lost, wrong = match_moves(played["presses"], arrivals, since)
    errors = [line for line in daemon.log_tail(200).splitlines() if "ERROR" in line]
    if errors or played["connected"] != load.boards:
        on = played["connected"]
        raise RuntimeError(f"the daemon failed ({on} boards connected):{daemon.log_tail()}")
    return LatencyRun(
        boards=load.boards,
        spectators=load.spectators + 1,
        seconds=load.seconds,
        latencies=latencies,
        lost=lost,
        wrong=wrong,
        daemon_cpu=cpu,
        rss_idle_kib=rss_idle,
        rss_end_kib=rss_end,
        connect_s=connect_s,
        storm=int(played.get("storm", 0)),
        loop=loop,
        load=f"load {os.getloadavg()[0]:.1f}",
    )


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--boards", type=int, nargs="+", default=[2, 100, 500])
    parser.add_argument("--seconds", type=float, default=30.0, help="play time per run")
    parser.add_argument("--spectators", type=int, default=0, help="idle spectators besides one")
    parser.add_argument("--profile", type=Path, help="folder for cProfile files of the daemon")
    parser.add_argument("--clock-rate", type=float, default=0.0, help="clock storm, reports/s")
    parser.add_argument("--snapshot-every", type=float, help="seconds between snapshots at most")
    parser.add_argument("--role", choices=sorted(_ROLES), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


_ROLES = {"farm": _farm, "daemon": _daemon, "watch": watch_feed, "crowd": idle_crowd}


def main(argv: list[str] | None = None) -> int:
    """Run a role (in a child) or measure every board count (the command line)."""
    args = _parse(argv)
    if args.role is not None:
        args.boards = args.boards[0]
        asyncio.run(_ROLES[args.role](args))
        return 0
    for boards in args.boards:
        profile = None
        if args.profile is not None:
            args.profile.mkdir(parents=True, exist_ok=True)
            profile = args.profile / f"daemon-{boards}.prof"
        load = Load(
            boards=boards,
            seconds=args.seconds,
            spectators=args.spectators,
            profile=profile,
            clock_rate=args.clock_rate,
            snapshot_every=args.snapshot_every,
        )
        print(asyncio.run(measure(load)).summary(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
