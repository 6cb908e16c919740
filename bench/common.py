"""Shared parts of the benchmarks: the machine, child processes, the board farm, idle
spectators, rounds, figures and the table.

The system benchmarks (``latency.py``, ``capacity.py``, ``memory.py``, ``recovery.py``) run
the daemon, the emulated boards (``bench/farm.py``, all in one process) and the
spectators as separate processes on one machine. They talk to each other in JSON lines
over stdin/stdout (:class:`Child`) and time events with ``time.monotonic()``:
CLOCK_MONOTONIC is one clock for every process of a Linux machine, so a time taken in one
process can be subtracted from a time taken in another.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import os
import platform
import resource
import statistics
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess.pgn

from broadcast.feed.commands import CommandReply
from drivers.emulator.clock import ClockSettings

__all__ = [
    "BENCH",
    "BLITZ_CLOCK",
    "NOISE",
    "ROOT",
    "THINK",
    "Child",
    "NoCommands",
    "Row",
    "format_table",
    "long_games",
    "machine",
    "median",
    "open_idle_spectators",
    "open_spectators",
    "percentile",
    "process_cpu_seconds",
    "process_rss_kib",
    "raise_fd_limit",
    "send_line",
    "shared_dir",
    "stdin_lines",
    "upgrade_request",
    "write_round_config",
]

#: Blitz, for every benchmark: 3 min + 2 s, thinking 0.5-5 human seconds a move, a little noise.
BLITZ_CLOCK = ClockSettings.from_text("3+2")
THINK = (0.5, 5.0)
NOISE = 0.05
BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
_TICKS = os.sysconf("SC_CLK_TCK")


def shared_dir() -> Path:
    """``../shared`` beside the checkout, or ``$DGTCAST_SHARED``."""
    return Path(os.environ.get("DGTCAST_SHARED", ROOT.parent / "shared"))


# --- The machine and its processes -----------------------------------------------------


def machine() -> str:
    """CPU model, cores and Python version, on one line."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0))
    return f"{model}, {cores} cores, Python {platform.python_version()} ({sys.platform})"


def raise_fd_limit() -> int:
    """Raise the open-file limit to the hard limit; returns the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def process_rss_kib(pid: int) -> int:
    """Resident set size of a process, KiB (``VmRSS`` of /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


# --- Child processes speaking JSON lines ---------------------------------------------------


class Child:
    """A benchmark process: JSON lines in on its stdin, out on its stdout.

    Its stderr goes to ``log`` (read it with :meth:`log_tail` when something failed).
    """

    def __init__(self, process: asyncio.subprocess.Process, log: Path) -> None:
        self.process = process
        self.log = log

    @classmethod
    async def start(cls, script: str, args: Sequence[str], log: Path) -> Child:
        """Run ``python bench/<script> <args>`` with this interpreter."""
        with log.open("wb") as stderr:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                str(BENCH / script),
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                limit=64 * 1024 * 1024,
            )
        return cls(process, log)

    @property
    def pid(self) -> int:
        """The process id."""
        return self.process.pid

    def send(self, message: dict[str, Any]) -> None:
        """Write one JSON line to the child's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")

    async def receive(self, within: float) -> dict[str, Any]:
        """The child's next JSON line.

        Raises:
            RuntimeError: the child ended, or said nothing within ``within`` seconds.
        """
        assert self.process.stdout is not None
        try:
            async with asyncio.timeout(within):
                line = await self.process.stdout.readline()
        except TimeoutError:
            tail = self.log_tail()
            raise RuntimeError(f"{self.log.stem}: no answer in {within:g} s{tail}") from None
        if not line:
            raise RuntimeError(f"{self.log.stem}: ended{self.log_tail()}")
        message: dict[str, Any] = json.loads(line)
        return message

    async def finish(self, within: float = 30.0) -> None:
        """Close its stdin (the child's cue to stop) and wait; kill it if it lingers."""
        assert self.process.stdin is not None
        if not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            async with asyncio.timeout(within):
                await self.process.wait()
        except TimeoutError:
            self.process.kill()
            await self.process.wait()

    def log_tail(self, lines: int = 15) -> str:
        """The end of the child's stderr, for error messages."""
        try:
            text = self.log.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        return "".join(f"\n  | {line}" for line in text)


async def stdin_lines() -> AsyncIterator[dict[str, Any]]:
    """JSON lines from this process's stdin until it is closed (in a child)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        message: dict[str, Any] = json.loads(line)
        yield message


def send_line(message: dict[str, Any]) -> None:
    """Write one JSON line to this process's stdout (in a child)."""
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


# --- Idle spectators ----------------------------------------------------------------------


class _IdleSpectator(asyncio.Protocol):
    """A bare websocket client of ``/ws``: the handshake, then every frame read and dropped."""

    def __init__(self, upgraded: asyncio.Future[None]) -> None:
        self.upgraded = upgraded
        self.head = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(upgrade_request())

    def data_received(self, data: bytes) -> None:
        if self.upgraded.done():
            return
        self.head += data
        if b"\r\n\r\n" in self.head:
            if self.head.startswith(b"HTTP/1.1 101"):
                self.upgraded.set_result(None)
            else:
                self.upgraded.set_exception(
                    ConnectionError(self.head[:80].decode(errors="replace"))
                )

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.upgraded.done():
            self.upgraded.set_exception(ConnectionError("closed during the handshake"))


def upgrade_request() -> bytes:
    """The request a bare websocket client of ``/ws`` opens with (a fresh key each time)."""
    key = base64.b64encode(os.urandom(16)).decode()
    return (
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    ).encode()


async def open_spectators(
    port: int, count: int, client: Callable[[asyncio.Future[None]], asyncio.Protocol]
) -> list[asyncio.Transport]:
    """Open ``count`` websocket clients of ``ws://127.0.0.1:port/ws``, 100 handshakes at once.

    ``client(ready)`` makes each one's protocol, which sets ``ready`` once it is in.
    """
    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(100)
    transports: list[asyncio.Transport] = []

    async def one() -> None:
        async with gate:
            ready: asyncio.Future[None] = loop.create_future()
            transport, _ = await loop.create_connection(lambda: client(ready), "127.0.0.1", port)
            transports.append(transport)
            async with asyncio.timeout(30):
                await ready

    await asyncio.gather(*(one() for _ in range(count)))
    return transports


async def open_idle_spectators(port: int, count: int) -> list[asyncio.Transport]:
    """Open ``count`` idle spectators of ``ws://127.0.0.1:port/ws``."""
    return await open_spectators(port, count, _IdleSpectator)


# --- Rounds and games --------------------------------------------------------------------


def write_round_config(
    folder: Path, ports: Sequence[str | None], *, time_control: str = "180+2"
) -> Path:
    """A round with one board per port (None: a board without e-board), journal in folder."""
    lines = [
        "[event]",
        'name = "Benchmark Open"',
        "round = 1",
        f'time_control = "{time_control}"',
        'default_time = "1h"',
        "",
        "[server]",
        'host = "127.0.0.1"',
        "port = 8080",
        "max_connections_per_client = 0  # every spectator of the bench comes from 127.0.0.1",
        "",
        "[storage]",
        'path = "journal.db"',
        "",
    ]
    for number, port in enumerate(ports, 1):
        lines += ["[[boards]]", f"number = {number}"]
        if port is not None:
            lines.append(f'port = "{port}"')
        lines += [f'white = "White, Player {number}"', f'black = "Black, Player {number}"', ""]
    path = folder / "round.toml"
    path.write_text("\n".join(lines))
    return path


def long_games(min_plies: int = 30) -> list[chess.pgn.Game]:
    """The real games of ``../shared/data/games`` with at least ``min_plies`` plies."""
    games = []
    for path in sorted((shared_dir() / "data" / "games").glob("*.pgn")):
        with path.open() as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                if sum(1 for _ in game.mainline_moves()) >= min_plies:
                    games.append(game)
    if not games:
        raise RuntimeError(f"no games of {min_plies}+ plies in {shared_dir() / 'data/games'}")
    return games


# --- Figures -----------------------------------------------------------------------------


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` quantile (0..1) by the nearest-rank method; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(fraction * len(ordered))))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    """The median, NaN for no values."""
    return statistics.median(values) if values else float("nan")


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One line of the benchmark table.

    Attributes:
        number: the issue's item (1-7).
        what: the quantity measured.
        case: the conditions (boards, spectators, chunking, ...).
        figure: the result, with its unit.
        goal: the issue's goal and whether it is met, if it sets one.
    """

    number: int
    what: str
    case: str
    figure: str
    goal: str = ""


_HEADINGS = ("#", "what", "case", "figure", "goal")


def format_table(rows: Iterable[Row], *, markdown: bool = False) -> str:
    """The rows as an aligned text table, or as a Markdown table."""
    cells = [(str(r.number), r.what, r.case, r.figure, r.goal) for r in rows]
    if markdown:
        lines = ["| " + " | ".join(_HEADINGS) + " |", "|" + "---|" * len(_HEADINGS)]
        lines += ["| " + " | ".join(c) + " |" for c in cells]
        return "\n".join(lines)
    widths = [max(len(c[i]) for c in [_HEADINGS, *cells]) for i in range(len(_HEADINGS))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(_HEADINGS, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(cell, widths, strict=True)) for cell in cells]
    return "\n".join(line.rstrip() for line in lines)


class NoCommands:
    """The arbiter command handler of a benchmark's server: it takes none."""

    async def execute(self, command: object) -> CommandReply:
        return CommandReply(ok=False, reason="benchmark")
