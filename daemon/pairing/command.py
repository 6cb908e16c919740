"""Run the command configured for the result hand-off, without blocking the daemon.

After each saved change of the TRF the daemon may run a program on it, with the file's
path as the last argument: typically a script that, once the round is complete, runs
the pairing engine (JaVaFo, bbpPairings ``--dutch FILE -p OUT``) for the next round.
The command runs in its own process group; it is killed after a timeout, or when the
daemon stops. Its exit status and the end of its output are reported, never raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO

__all__ = ["CommandReport", "run_command"]

_OUTPUT_KEPT = 4000  # characters of a command's output kept for the report


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandReport:
    """How the configured command ended.

    Attributes:
        argv: what was run (the TRF's path last).
        exit_code: its exit status (negative: killed by that signal); None when it could
            not be started.
        timed_out: it ran past the timeout and was killed.
        output: the end of what it wrote (stdout and stderr).
    """

    argv: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    output: str

    @property
    def ok(self) -> bool:
        """Exit status 0."""
        return self.exit_code == 0


async def run_command(
    command: Sequence[str],
    trf_path: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    kill_after: float = 60.0,
) -> CommandReport:
    """Run ``command`` with the TRF's path as last argument; never raises for its failure.

    It runs in its own process group: after ``kill_after`` seconds, or when the caller
    cancels, it is killed with every process it started; processes it leaves running
    when it exits are stopped too. ``env`` is added to the daemon's environment.
    """
    argv = (*command, os.fspath(trf_path))
    with tempfile.TemporaryFile() as output:  # a pipe would stay open in what it leaves
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )
        except OSError as exc:
            message = f"cannot run {argv[0]}: {exc.strerror or exc}"
            return CommandReport(argv=argv, exit_code=None, timed_out=False, output=message)
        timed_out = False
        try:
            async with asyncio.timeout(kill_after):
                await process.wait()
        except TimeoutError:
            timed_out = True
        finally:
            await _kill(process)  # after a timeout or a cancel, and what it left running
        text = _tail(output)
    return CommandReport(argv=argv, exit_code=process.returncode, timed_out=timed_out, output=text)


def _tail(output: IO[bytes]) -> str:
    """The end of what the command wrote."""
    size = output.seek(0, os.SEEK_END)
    output.seek(max(0, size - 4 * _OUTPUT_KEPT))
    return output.read().decode("utf-8", errors="replace")[-_OUTPUT_KEPT:]


async def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        if sys.platform == "win32":  # no process groups: the command alone is killed
            process.kill()
        else:
            os.killpg(process.pid, signal.SIGKILL)
    await process.wait()
