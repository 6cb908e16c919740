"""The board farm of the benchmarks: many emulated e-boards and clocks in one process.

Each :class:`FarmBoard` is a firmware, a clock and a human player on a pty of its own;
:func:`serve_farm` runs them as a child process driven by JSON lines (``bench/common.py``).

A *clock storm* (``clock_rate``) makes each clock report that many times a second while
it runs, besides the firmware's own reports: a BWTIME whose running side shows its time
and, every other report, one second more (a clock whose seconds jitter), so that every
report differs from the last and reaches the daemon's core (the board session drops
repeats). The running side and the lever never change in them: moves stay the players'.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
import time
from collections import deque
from pathlib import Path
from typing import Any

import chess.pgn
from common import (
    BLITZ_CLOCK,
    NOISE,
    THINK,
    long_games,
    raise_fd_limit,
    send_line,
    stdin_lines,
)

from drivers.dgt.boardside import encode_event
from drivers.dgt.events import ClockTimes
from drivers.emulator.clock import ChessClock
from drivers.emulator.firmware import BoardFirmware, BoardIdentity, BoardMode
from drivers.emulator.player import HumanPlayer, PressLever
from drivers.emulator.pty import VirtualSerialPort

__all__ = ["FarmBoard", "serve_farm"]


class FarmBoard:
    """One emulated e-board and clock on a pty, playing one game on the farm's loop.

    Args:
        number: the board number.
        path: where the pty's symlink goes.
        game: the game its players play.
        seed: seeds the players.
    """

    def __init__(
        self, number: int, path: Path, game: chess.pgn.Game, seed: int, clock_rate: float = 0.0
    ) -> None:
        self.number = number
        self.clock_rate = clock_rate
        #: Storm reports written (see the module docstring).
        self.storm_reports = 0
        self._storm: asyncio.TimerHandle | None = None
        self.port = VirtualSerialPort(path)
        self.moves = [move.uci() for move in game.mainline_moves()]
        player = HumanPlayer(seed=seed, speed=1.0, noise=NOISE, think=THINK)
        self._schedule = player.play(game)
        self._loop = asyncio.get_running_loop()
        self.firmware = BoardFirmware(
            clock=ChessClock(BLITZ_CLOCK),
            identity=BoardIdentity(serial=f"{number:05d}"),  # each board its own, as in a hall
            now=self._loop.time(),
        )
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
        if self.clock_rate > 0:
            self._storm = self._loop.call_at(origin, self._report)

    def stop(self) -> None:
        """Stop making moves (the clock keeps running)."""
        if self._action is not None:
            self._action.cancel()
            self._action = None
        if self._storm is not None:
            self._storm.cancel()
            self._storm = None

    def _report(self) -> None:
        """One report of the clock storm (only while the clock runs)."""
        now = self._loop.time()
        self._storm = self._loop.call_at(now + 1.0 / self.clock_rate, self._report)
        times = self.firmware.clock_times(now)
        if not times.running or not self.connected:
            return
        self.storm_reports += 1
        self._out += encode_event(_jittered(times, self.storm_reports % 2 == 1))
        self._write()

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


def _jittered(times: ClockTimes, jitter: bool) -> ClockTimes:
    """``times`` with the running side's seconds one off when ``jitter``."""
    if not jitter:
        return times
    side = "right" if times.right_high else "left"
    face = getattr(times, side)
    seconds = face.seconds + 1 if face.seconds < 59 else face.seconds - 1
    return dataclasses.replace(times, **{side: dataclasses.replace(face, seconds=seconds)})


async def serve_farm(count: int, folder: Path, seed: int, clock_rate: float = 0.0) -> None:
    """The farm process: ``count`` boards on ptys in ``folder``, driven over stdin/stdout.

    Says ``{"ports": [...]}``; then each ``{"go": seconds, "stagger": seconds}`` plays
    and answers with every lever press (board, ply, move, time of its last byte).
    """
    raise_fd_limit()
    games = long_games()
    boards = [
        FarmBoard(
            n, folder / f"board-{n}", games[(n - 1) % len(games)], seed * 7919 + n, clock_rate
        )
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
    storm = sum(board.storm_reports for board in boards)
    return {"go": origin, "presses": presses, "connected": connected, "storm": storm}
