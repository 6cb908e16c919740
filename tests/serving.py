"""Running what serves and stopping it, the one way tests do: a daemon or a relay in the
test's own event loop (:func:`serving`), or ``dgtcast`` in a process of its own.

The ``dgtcast`` command line is built here and nowhere else (:func:`dgtcast`,
:func:`dgtcast_run`): the console script of the environment the tests run in, a free port
unless a test gives one. :func:`start_dgtcast` waits for the URL a serving command prints;
:func:`stop_process` stops a process with SIGTERM (a clean stop) or SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

__all__ = [
    "DGTCAST",
    "START_LIMIT",
    "STOP_LIMIT",
    "Started",
    "dgtcast",
    "dgtcast_run",
    "serving",
    "spawn_dgtcast",
    "start_dgtcast",
    "stop_process",
]

#: The ``dgtcast`` console script of the environment the tests run in.
DGTCAST = Path(sys.executable).parent / "dgtcast"
#: Seconds a start (to the URL or device printed) may take before the test fails: a loaded
#: machine starts a Python process slowly; a test waits for the line, not for the time.
START_LIMIT = 60.0
#: Seconds a stop may take before the test fails.
STOP_LIMIT = 15.0
_URL = re.compile(rb"^\s*viewer:\s+http://[\d.]+:(\d+)/")
_PR_SET_PDEATHSIG = 1  # prctl(2)


class Server(Protocol):
    """What serves until told to stop: :class:`~daemon.shell.app.Daemon`, a relay."""

    async def start(self) -> None: ...
    async def run(self, stop: asyncio.Event) -> None: ...


S = TypeVar("S", bound=Server)


@contextlib.asynccontextmanager
async def serving(server: S) -> AsyncIterator[S]:
    """``server`` started and running until the block ends, then stopped cleanly."""
    await server.start()
    stop = asyncio.Event()
    task = asyncio.create_task(server.run(stop))
    try:
        yield server
    finally:
        stop.set()
        # not asyncio.wait_for: a task that does not end when cancelled would hang the
        # test (and the run) instead of failing it
        done, _ = await asyncio.wait({task}, timeout=STOP_LIMIT)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=5.0)
            raise AssertionError(f"{type(server).__name__} did not stop within {STOP_LIMIT} s")
        task.result()


def dgtcast(*args: str) -> list[str]:
    """The command line ``dgtcast ARGS``."""
    return [str(DGTCAST), *args]


def dgtcast_run(config: Path, *flags: str, port: int = 0) -> list[str]:
    """``dgtcast run --config CONFIG --http-port PORT FLAGS``; port 0 takes a free one."""
    return dgtcast("run", "--config", str(config), "--http-port", str(port), *flags)


def _die_with_the_test() -> None:
    """In the child before it runs: be killed when the test's process ends, however it
    ends. A daemon left behind by a killed worker would hold on to its ptys and, once the
    system gives their numbers to another run's emulated boards, open theirs ("/dev/pts/7
    is in use")."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


async def spawn_dgtcast(
    argv: list[str], *, log: Path, stdout: int = asyncio.subprocess.DEVNULL
) -> asyncio.subprocess.Process:
    """``argv`` (from :func:`dgtcast`) in its own process, its stderr appended to ``log``;
    it does not outlive the test's process."""
    with log.open("ab") as sink:
        return await asyncio.create_subprocess_exec(
            *argv, stdout=stdout, stderr=sink, preexec_fn=_die_with_the_test
        )


@dataclass
class Started:
    """A ``dgtcast`` process and the port it serves on."""

    process: asyncio.subprocess.Process
    port: int


async def start_dgtcast(*args: str, log: Path, time_limit: float = START_LIMIT) -> Started:
    """``dgtcast <args>`` in its own process; waits for the URL it prints.

    Its stderr (the log) goes to ``log``; a process that exits first fails the test, one
    that does not print its URL within ``time_limit`` is killed and fails it.
    """
    process = await spawn_dgtcast(dgtcast(*args), log=log, stdout=asyncio.subprocess.PIPE)
    assert process.stdout is not None
    try:
        async with asyncio.timeout(time_limit):
            while line := await process.stdout.readline():
                if match := _URL.match(line):
                    return Started(process=process, port=int(match.group(1)))
    except BaseException:  # not started in time, or the test cancelled: none left behind
        await stop_process(process, kill=True)
        raise
    await process.wait()
    raise AssertionError(f"dgtcast {' '.join(args)} exited with {process.returncode}")


async def stop_process(process: asyncio.subprocess.Process, *, kill: bool = False) -> int:
    """SIGTERM (a clean stop) or SIGKILL; returns the exit code."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL if kill else signal.SIGTERM)
    return await asyncio.wait_for(process.wait(), STOP_LIMIT)
