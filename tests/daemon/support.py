"""Helpers for daemon tests: daemons around emulated boards, journal readers.

The configuration file is written by ``tests/daemon/config_file.py`` (re-exported here)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import signal
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

import chess
import chess.pgn

from base.backoff import BackoffPolicy
from daemon.cli import main
from daemon.game.state import TrackerSettings
from daemon.journal.inputs import clock_payload
from daemon.journal.records import JournalMissing
from daemon.journal.store import Journal
from daemon.mode23.control import IncrementState
from daemon.shell.app import Daemon, DaemonOptions
from drivers.dgt import commands as cmd
from drivers.dgt.device_core import DeviceTimeouts
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import PressLever, TimedAction
from drivers.observations import ClockObserved, ClockSide
from tests.daemon.config_file import BoardSpec, write_config
from tests.emulator.support import read_game
from tests.serving import START_LIMIT, dgtcast, dgtcast_run, serving, spawn_dgtcast
from tests.waiting import wait_until

__all__ = [
    "FAST_TIMEOUTS",
    "FAST_TRACKER",
    "BoardSpec",
    "clock_input",
    "emulator_process",
    "emulator_processes",
    "journal_moves",
    "play_after_each_increment",
    "press_readings",
    "read_game",
    "refused_start",
    "running_daemon",
    "second_half",
    "start_daemon",
    "wait_for",
    "write_config",
]

#: Tracker timers shortened for emulated play at high speed.
FAST_TRACKER = TrackerSettings(
    settle_time=0.3,
    clock_settle_time=2.0,
    out_of_sync_hold=1.0,
    result_settle_time=0.5,
    centre_king_hold=1.0,
)

#: Device timeouts for a daemon in the test's own process: its event loop shares a core
#: with the emulator and other workers, so a reply may be seconds late on a loaded machine
#: (the default second would close a healthy link: "closed by us").
FAST_TIMEOUTS = DeviceTimeouts(reply=3.0, quiet=3.0, probe=3.0)


@contextlib.asynccontextmanager
async def running_daemon(
    config: Path,
    *,
    tracker: TrackerSettings = FAST_TRACKER,
    set_clocks: bool = False,
    board_patience: float = 5.0,
    livechess_port: int | None = None,
    device_timeouts: DeviceTimeouts = FAST_TIMEOUTS,
) -> AsyncIterator[Daemon]:
    """A daemon serving ``config`` on a free port, stopped cleanly on exit."""
    options = DaemonOptions(
        tracker=tracker,
        port=0,
        device_timeouts=device_timeouts,
        backoff=BackoffPolicy(initial=0.05, maximum=0.5),
        set_clocks_at_start=set_clocks,
        board_patience=board_patience,
        livechess_port=livechess_port,
    )
    daemon = await Daemon.open(config, options)
    async with serving(daemon):
        yield daemon


async def wait_for(predicate: Callable[[], bool], within: float, what: str) -> None:
    """Poll ``predicate`` until true; fail the test with ``what`` after ``within`` seconds."""
    await wait_until(predicate, within, what)


async def start_daemon(config: Path) -> asyncio.subprocess.Process:
    """``dgtcast run`` in its own process; its log goes to ``daemon.log`` beside the config."""
    argv = dgtcast_run(config, "--log-level", "WARNING")
    return await spawn_dgtcast(argv, log=config.parent / "daemon.log")


def refused_start(config: Path, *flags: str) -> str:
    """``dgtcast run`` that must refuse to start: it returns 2 (asserted); its stderr.

    Run in this process, as the console script runs it (in the configuration's folder):
    a refusal is decided before anything serves, and a process of its own would spend
    most of its second importing. A daemon that starts instead of refusing fails the
    test after :data:`~tests.serving.START_LIMIT` seconds.
    """
    err = io.StringIO()
    with (
        contextlib.chdir(config.parent),
        contextlib.redirect_stdout(io.StringIO()),  # no terminal: no live console
        contextlib.redirect_stderr(err),
        _at_most(START_LIMIT),
    ):
        code = main(dgtcast_run(config, *flags)[1:])
    assert code == 2, err.getvalue()
    return err.getvalue()


@contextlib.contextmanager
def _at_most(seconds: float) -> Iterator[None]:
    """The block interrupted by ``TimeoutError`` once ``seconds`` have passed."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def second_half(game: chess.pgn.Game, plies: int) -> chess.pgn.Game:
    """The rest of ``game`` after ``plies``, as a game from that position."""
    moves = list(game.mainline_moves())
    board = game.board()
    for move in moves[:plies]:
        board.push(move)
    rest = chess.pgn.Game()
    rest.setup(board)
    node: chess.pgn.GameNode = rest
    for move in moves[plies:]:
        node = node.add_variation(move)
    rest.headers["Result"] = game.headers.get("Result", "*")
    return rest


def journal_count(journal_path: Path, kind: str, board: int | None = None) -> int:
    """Records of ``kind`` (on ``board``) so far; 0 while there is no journal yet (a daemon
    starting: no file, or one it has only begun to create)."""
    try:
        journal = Journal(journal_path, read_only=True)
    except JournalMissing:
        return 0
    with journal:
        return sum(1 for _ in journal.records(board=board, kinds={kind}))


def journal_plies(journal_path: Path, board: int) -> int:
    """Plies of the journal's main line on ``board`` so far; 0 while there is no journal."""
    try:
        return len(journal_moves(journal_path, board))
    except JournalMissing:
        return 0


def journal_moves(journal_path: Path, board: int) -> list[dict[str, Any]]:
    """The main line the journal's move records leave (withdrawals applied)."""
    line: list[dict[str, Any]] = []
    with Journal(journal_path, read_only=True) as journal:
        for record in journal.records(board=board):
            if record.kind == "game.GameStarted":
                line.clear()
            elif record.kind == "game.MoveMade":
                del line[record.payload["ply"] - 1 :]
                line.append(record.payload)
            elif record.kind == "game.MovesWithdrawn":
                del line[record.payload["from_ply"] - 1 :]
    return line


def press_readings(journal_path: Path, board: int, white_side: str) -> dict[str, list[int]]:
    """Each side's time right after each of its lever presses, from the raw clock inputs.

    A press shows as the running side changing from the presser to the other side; the
    reading that first shows it carries the presser's time with the increment added.
    """
    sides = {white_side: "white", ("right" if white_side == "left" else "left"): "black"}
    presses: dict[str, list[int]] = {"white": [], "black": []}
    running = None
    with Journal(journal_path, read_only=True) as journal:
        for record in journal.records(board=board, kinds={"clock"}):
            now = record.payload["running"]
            if running is not None and now is not None and now != running:
                presses[sides[running]].append(int(record.payload[running]))
            running = now if now is not None else running
    return presses


def clock_input(
    left: int, right: int, running: str | None, lever: str | None = None
) -> dict[str, Any]:
    """A clock reading as the board session journals it (no flag fallen, a clock cabled);
    the lever is up on the running side unless ``lever`` says otherwise."""
    reading = ClockObserved(
        left_seconds=left,
        right_seconds=right,
        left_flag=False,
        right_flag=False,
        running=None if running is None else ClockSide(running),
        lever=ClockSide(lever or running or "left"),
        connected=True,
        at=0.0,
    )
    return clock_payload(reading)


def _setnruns(board: EmulatedBoard) -> int:
    return sum(isinstance(c, cmd.ClockSetAndRun) for c in board.firmware.commands)


def _setting(daemon: Daemon) -> bool:
    """Whether a session of ``daemon`` waits for a clock's ack to a SETNRUN (mode 23)."""
    return any(
        session.core.increments is not None
        and session.core.increments.state is IncrementState.SETTING
        for session in daemon.sessions.values()
    )


async def play_after_each_increment(
    board: EmulatedBoard, schedule: list[TimedAction], *, daemon: Daemon | None = None
) -> None:
    """The schedule, each move made once the clock has the daemon's SETNRUN for the press
    before it and the daemon has read the clock's answer: a reply inside that round trip
    is a limit of mode 23 (docs/faults.md), and how long the round trip takes depends on
    how busy the machine is, not on the players. The last press is not waited for: after
    a mate the game is over, and whether the daemon still sets the clock then depends on
    whether it saw the mate before the press. With ``daemon`` (in this process), each
    move waits until its sessions have taken the clock's ack, not only read it."""
    presses = [i for i, timed in enumerate(schedule) if isinstance(timed.action, PressLever)]
    last = presses[-1] if presses else -1
    if daemon is not None:
        await wait_for(lambda: not _setting(daemon), 15, "the clock's ack taken")
    start, part = 0.0, []
    for index, timed in enumerate(schedule):
        part.append(replace(timed, at=timed.at - start))
        if isinstance(timed.action, PressLever) and index != last:
            sent = _setnruns(board)
            await board.perform(part)
            await wait_for(lambda: _setnruns(board) > sent, 15, "the increment set")  # noqa: B023
            await board.drained()  # and the daemon has read the clock's ack
            if daemon is not None:
                await wait_for(lambda: not _setting(daemon), 15, "the clock's ack taken")
            start, part = timed.at, []
    await board.perform(part)


@contextlib.asynccontextmanager
async def emulator_process(pgn: Path, serial: str, *options: str) -> AsyncIterator[Path]:
    """``dgtcast emulate --serial SERIAL`` as a process (stopped with Ctrl-C on exit); its
    device path, in the folder of emulated ports (tests/conftest.py)."""
    async with emulator_processes((pgn, serial, options)) as (path,):
        yield path


@contextlib.asynccontextmanager
async def emulator_processes(*boards: tuple[Path, str, Sequence[str]]) -> AsyncIterator[list[Path]]:
    """:func:`emulator_process` for each ``(pgn, serial, options)``, all started at once
    and stopped at once (each is a Python start-up, a second or more on a busy machine);
    their device paths, in order."""
    processes: list[asyncio.subprocess.Process] = []
    try:
        for pgn, serial, options in boards:
            processes.append(
                await asyncio.create_subprocess_exec(
                    *dgtcast("emulate", "--pgn", str(pgn), "--serial", serial, *options),
                    stdout=asyncio.subprocess.PIPE,
                )
            )
        yield list(await asyncio.gather(*(_device_of(process) for process in processes)))
    finally:
        running = [process for process in processes if process.returncode is None]
        for process in running:
            process.send_signal(signal.SIGINT)
        async with asyncio.timeout(30):
            for process in running:
                await process.wait()


async def _device_of(process: asyncio.subprocess.Process) -> Path:
    """The device path an emulator prints first."""
    assert process.stdout is not None
    async with asyncio.timeout(START_LIMIT):
        line = (await process.stdout.readline()).decode()
    assert line.startswith("device: "), line
    return Path(line.removeprefix("device: ").strip())
