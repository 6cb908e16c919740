"""Mode 23: presses made while the daemon was down get every increment nobody added.

Real daemon processes (``dgtcast run``, killed with ``kill -9``), an emulated mode 23 clock
on a pty that adds nothing by itself. While the daemon is down, each side presses 3 times
(more presses, and a gap across move 40 of a period control, run in virtual time:
tests/virtual); the board's memory holds each press with the time the clock showed, which
lacks the increments. After the restart:

* each move's ``[%clk]`` is the time the clock should have shown after its press: the
  logged time plus every increment (and period) the mover should have had up to and
  including that press;
* the clock is given what both sides lack, once: the side that pressed last shows
  exactly its last ``[%clk]``, the running side its own time plus what it lacked (never
  twice), also when the daemon is killed again while catching up, before the clock got it.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import chess.pgn
import pytest

from daemon.game.durations import TimeControl
from daemon.journal.store import Journal
from drivers.dgt import commands as cmd
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import HumanPlayer
from tests.daemon.recovery_support import play_part
from tests.daemon.support import (
    BoardSpec,
    journal_moves,
    journal_plies,
    play_after_each_increment,
    wait_for,
    write_config,
)
from tests.serving import START_LIMIT, dgtcast_run, spawn_dgtcast

pytestmark = pytest.mark.slow  # games played in real time (docs/development.md)

SPEED = 12.0


def _plies(journal: Path) -> int:
    return journal_plies(journal, 1)


def _sets_since_last_start(journal_path: Path) -> int:
    """Clock readings the last daemon set the clock to (``"set"``), as it journalled them
    (the clock's own count may still take a resend of the daemon before)."""
    with Journal(journal_path, read_only=True) as journal:
        records = list(journal.records(board=None, kinds={"start", "clock"}))
    starts = [i for i, record in enumerate(records) if record.kind == "start"]
    after = records[starts[-1] + 1 :] if starts else records
    return sum(1 for record in after if record.kind == "clock" and record.payload.get("set"))


def _sets(board: EmulatedBoard) -> int:
    """SETNRUN commands the clock received so far."""
    return sum(isinstance(c, cmd.ClockSetAndRun) for c in board.firmware.commands)


async def _start(config: Path, *flags: str) -> asyncio.subprocess.Process:
    argv = dgtcast_run(config, "--log-level", "WARNING", *flags)
    return await spawn_dgtcast(argv, log=config.parent / "daemon.log")


async def _kill(daemon: asyncio.subprocess.Process) -> None:
    os.kill(daemon.pid, signal.SIGKILL)
    await daemon.wait()


async def _play_live(board: EmulatedBoard, game: chess.pgn.Game, start: int, stop: int) -> None:
    """Plies ``start`` … ``stop`` with the daemon listening, each move made once the clock
    has the increment of the press before it: a reply inside that round trip is a limit
    of mode 23 (docs/daemon.md), and the round trip's length depends on the machine."""
    position = game.board()
    moves = list(game.mainline_moves())
    for move in moves[:start]:
        position.push(move)
    player = HumanPlayer(seed=start, speed=SPEED)
    schedule = player.play(moves[start:stop], start=position, start_clock=start == 0)
    await play_after_each_increment(board, schedule)


def _wanted(
    board: EmulatedBoard, control: TimeControl, gap: range, plies: int
) -> tuple[list[int], dict[str, int]]:
    """Each ply's ``[%clk]`` as the clock should have shown it, and what each side lacked
    after the gap. A press in ``gap`` got no increment on the clock (nor did the earlier
    ones of the gap); a live press got its own at once."""
    owed = {"left": 0, "right": 0}
    wanted = []
    for ply, (side, seconds) in enumerate(board.firmware.presses[:plies], start=1):
        added = control.added_after((ply + 1) // 2)
        if ply in gap:
            owed[side] += added
            wanted.append(seconds + owed[side])
        else:
            wanted.append(seconds + added)
    return wanted, owed


async def _scenario(
    tmp_path: Path,
    game: chess.pgn.Game,
    control_text: str,
    played: int,
    missed: int,
    *,
    killed_while_catching_up: bool = False,
) -> None:
    control = TimeControl.from_text(control_text)
    journal = tmp_path / "journal.db"
    clock = ClockSettings(base_seconds=control.base, increment_seconds=0, mode=23)
    total = played + missed + 2  # two live plies after the gap
    async with EmulatedBoard(clock=clock, seed=50 + missed) as board:
        config = write_config(
            tmp_path, [BoardSpec(1, str(board.path))], time_control=control_text, dgt_mode=23
        )
        daemon = await _start(config, "--set-clocks")
        try:
            await wait_for(lambda: board.clock.display_text is not None, START_LIMIT, "clock set")
            await _play_live(board, game, 0, played)
            await wait_for(lambda: _plies(journal) == played, 30, f"{played} plies live")
            await _kill(daemon)
            sets = _sets(board)  # every live increment is on the clock, resends included
            await play_part(board, game, played, played + missed, speed=SPEED)
            if killed_while_catching_up:
                board.firmware.drop_clock_reports = 10**9  # the daemon hears no clock ...
                daemon = await _start(config)
                await wait_for(lambda: _plies(journal) == played + missed, 60, "recovered")
                await _kill(daemon)  # ... and dies before it could give the clock anything
                board.firmware.drop_clock_reports = 0
                assert _sets_since_last_start(journal) == 0
            running = board.clock.running
            assert running is not None
            before, at = board.clock.remaining(running, board.now()), board.now()
            daemon = await _start(config)
            await wait_for(lambda: _plies(journal) == played + missed, 60, "recovered")
            await wait_for(lambda: _sets(board) > sets, 30, "the clock given its due")
            now = board.now()
            left, right = board.clock.remaining("left", now), board.clock.remaining("right", now)
            shown = {"left": left, "right": right}
            running_now = board.clock.running
            await _play_live(board, game, played + missed, total)
            await wait_for(lambda: _plies(journal) == total, 30, "two live plies")
        finally:
            if daemon.returncode is None:
                daemon.send_signal(signal.SIGTERM)
                await asyncio.wait_for(daemon.wait(), 20)
    gap = range(played + 1, played + missed + 1)
    wanted, owed = _wanted(board, control, gap, total)
    line = journal_moves(journal, 1)
    assert [m["uci"] for m in line] == [m.uci() for m in game.mainline_moves()][:total]
    clocks = [m["clock"] for m in line]
    for ply, (got, want) in enumerate(zip(clocks, wanted, strict=True), start=1):
        assert got == want, f"[%clk] of ply {ply}: {got} instead of {want}"
    assert running_now == running
    pressed_last = "left" if running == "right" else "right"
    assert shown[pressed_last] == wanted[played + missed - 1], "the last presser's clock"
    # The running side: its own time plus what it lacked, given once. The SETNRUN is made
    # from a reading a moment old, so it may give back that moment, never a second share.
    ran = now - at
    assert before - ran + owed[running] <= shown[running] + 1e-6
    assert shown[running] < before - ran + 2 * owed[running]
