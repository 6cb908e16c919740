"""Shared parts of the benchmarks: the machine, child processes, the board farm, idle
spectators, rounds, figures and the table.

The system benchmarks (``latency.py``, ``capacity.py``, ``memory.py``, ``recovery.py``) run
the daemon, the emulated boards (:class:`FarmBoard`, all in one process) and the
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
import random
import resource
import statistics
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess.pgn

from drivers.emulator.clock import ChessClock, ClockSettings
from drivers.emulator.firmware import BoardFirmware, BoardMode
from drivers.emulator.player import HumanPlayer, PressLever
from drivers.emulator.pty import VirtualSerialPort

__all__ = [
    "BENCH",
    "BLITZ_CLOCK",
    "NOISE",
    "ROOT",
    "THINK",
    "Child",
    "FarmBoard",
    "Row",
    "format_table",
    "long_games",
    "machine",
    "median",
    "open_idle_spectators",
    "percentile",
    "process_cpu_seconds",
    "process_rss_kib",
    "raise_fd_limit",
    "send_line",
    "serve_farm",
    "shared_dir",
    "stdin_lines",
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
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )

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


async def open_idle_spectators(port: int, count: int) -> list[asyncio.Transport]:
    """Open ``count`` idle spectators of ``ws://127.0.0.1:port/ws`` (100 handshakes at once)."""
    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(100)
    transports: list[asyncio.Transport] = []

    async def one() -> None:
        async with gate:
            upgraded: asyncio.Future[None] = loop.create_future()
            transport, _ = await loop.create_connection(
                lambda: _IdleSpectator(upgraded), "127.0.0.1", port
            )
            transports.append(transport)
            async with asyncio.timeout(30):
                await upgraded

    await asyncio.gather(*(one() for _ in range(count)))
    return transports


# --- The farm: many e-boards in one process -------------------------------------------------


class FarmBoard:
    """One emulated e-board and clock on a pty, playing one game on the farm's loop.

    Args:
        number: the board number.
        path: where the pty's symlink goes.
        game: the game its players play.
        seed: seeds the players.
    """

    def __init__(self, number: int, path: Path, game: chess.pgn.Game, seed: int) -> None:
        self.number = number
        self.port = VirtualSerialPort(path)
        self.moves = [move.uci() for move in game.mainline_moves()]
        player = HumanPlayer(seed=seed, speed=1.0, noise=NOISE, think=THINK)
        self._schedule = player.play(game)
        self._loop = asyncio.get_running_loop()
        self.firmware = BoardFirmware(clock=ChessClock(BLITZ_CLOCK), now=self._loop.time())
        self._out = bytearray()
        self._sent = 0
        self._writing = False
        self._marks: deque[tuple[int, int]] = deque()  # (byte offset of the end, ply)
        #: (ply, time.monotonic() right after its lever message's last byte was written)
        self.presses: list[tuple[int, float]] = []
        self._tick: asyncio.TimerHandle | None = None
        self._action: asyncio.TimerHandle | None = None
        self._origin = 0.0
        self._next = 0
        self._plies = 0

    @property
    def connected(self) -> bool:
        """Whether a driver has put the board in UPDATE_NICE mode (§3)."""
        return self.firmware.mode is BoardMode.UPDATE_NICE

    def open(self) -> None:
        """Plug the board in."""
        self.port.open()
        self._loop.add_reader(self.port.master_fd, self._readable)

    def close(self) -> None:
        """Stop playing and pull the cable."""
        self.stop()
        if self._tick is not None:
            self._tick.cancel()
        self._loop.remove_reader(self.port.master_fd)
        self._loop.remove_writer(self.port.master_fd)
        self.port.close()

    def start(self, origin: float) -> None:
        """Play the game, its schedule counted from ``origin`` (loop time)."""
        self._origin = origin
        self._arm_action()

    def stop(self) -> None:
        """Stop making moves (the clock keeps running)."""
        if self._action is not None:
            self._action.cancel()
            self._action = None

    def _arm_action(self) -> None:
        if self._next < len(self._schedule):
            at = self._origin + self._schedule[self._next].at
            self._action = self._loop.call_at(at, self._act)

    def _act(self) -> None:
        action = self._schedule[self._next].action
        self._next += 1
        self.firmware.receive_action(action, self._loop.time())
        ply = None
        if isinstance(action, PressLever):
            self._plies += 1
            ply = self._plies
        self._flush(ply)
        self._arm_action()

    def _readable(self) -> None:
        try:
            data = os.read(self.port.master_fd, 4096)
        except OSError:  # EAGAIN, or EIO while nobody holds the slave end
            return
        self.firmware.receive_data(data, self._loop.time())
        self._flush()

    def _on_tick(self) -> None:
        self._tick = None
        self.firmware.receive_tick(self._loop.time())
        self._flush()

    def _flush(self, ply: int | None = None) -> None:
        self._out += self.firmware.data_to_send()
        if ply is not None:
            self._marks.append((self._sent + len(self._out), ply))
        self._write()
        deadline = self.firmware.next_deadline(self._loop.time())
        if self._tick is not None and self._tick.when() != deadline:
            self._tick.cancel()
            self._tick = None
        if self._tick is None and deadline is not None:
            self._tick = self._loop.call_at(deadline, self._on_tick)

    def _write(self) -> None:
        if self._out:
            try:
                written = os.write(self.port.master_fd, self._out)
            except BlockingIOError:
                written = 0
            now = time.monotonic()
            del self._out[:written]
            self._sent += written
            while self._marks and self._marks[0][0] <= self._sent:
                self.presses.append((self._marks.popleft()[1], now))
        if bool(self._out) != self._writing:
            self._writing = bool(self._out)
            if self._writing:
                self._loop.add_writer(self.port.master_fd, self._write)
            else:
                self._loop.remove_writer(self.port.master_fd)


async def serve_farm(count: int, folder: Path, seed: int) -> None:
    """The farm process: ``count`` boards on ptys in ``folder``, driven over stdin/stdout.

    Says ``{"ports": [...]}``; then each ``{"go": seconds, "stagger": seconds}`` plays
    and answers with every lever press (board, ply, move, time of its last byte).
    """
    raise_fd_limit()
    games = long_games()
    boards = [
        FarmBoard(n, folder / f"board-{n}", games[(n - 1) % len(games)], seed * 7919 + n)
        for n in range(1, count + 1)
    ]
    for board in boards:
        board.open()
    send_line({"ports": [str(board.port.path) for board in boards]})
    async for message in stdin_lines():
        if "go" in message:
            send_line(await _play(boards, float(message["go"]), float(message["stagger"])))
    for board in boards:
        board.close()


async def _play(boards: list[FarmBoard], seconds: float, stagger: float) -> dict[str, Any]:
    loop, rng = asyncio.get_running_loop(), random.Random(len(boards))
    origin = loop.time()
    for board in boards:
        board.start(origin + rng.uniform(0.0, stagger))
    await asyncio.sleep(seconds)
    for board in boards:
        board.stop()
    presses = [
        [board.number, ply, board.moves[ply - 1], at]
        for board in boards
        for ply, at in board.presses
        if ply <= len(board.moves)
    ]
    connected = sum(board.connected for board in boards)
    return {"go": origin, "presses": presses, "connected": connected}


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
