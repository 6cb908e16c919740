"""The live console beside a running daemon: what it shows of it, and its keys.

What it shows is daemon/console/view.py's view; the keys set and confirm results
(daemon/console/keys.py).

Shared by ``dgtcast run`` and ``dgtcast demo``. The keys are read from the terminal the
console is on (standard input, in cbreak mode: no echo, one key at a time, Ctrl-C still
stops the daemon), on Linux and macOS; each request goes to the daemon as the arbiter
page's command would (journalled, answered), and the answer is shown under the boards.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import suppress

from rich.logging import RichHandler

from daemon.console.keys import (
    ConfirmRequest,
    KeyPrompt,
    KeyRequest,
    confirmable,
    contradictions,
    keys_in,
    press,
    section_problem,
    summary,
)
from daemon.console.view import ConsoleFrame, LiveConsole, memory_progress
from daemon.shell.app import Daemon

if sys.platform != "win32":
    import termios
    import tty

    @contextlib.contextmanager
    def _cbreak(fd: int) -> Iterator[None]:
        """Terminal ``fd`` in cbreak mode (keys one by one, no echo) inside the block."""
        saved = termios.tcgetattr(fd)
        tty.setcbreak(fd, termios.TCSANOW)
        try:
            yield
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)

else:

    @contextlib.contextmanager
    def _cbreak(fd: int) -> Iterator[None]:
        """Windows consoles are not read for keys (the console shows no prompt)."""
        yield


log = logging.getLogger(__name__)

__all__ = [
    "RESOLVED_SHOWN",
    "ConsoleKeys",
    "console_frame",
    "log_to_console",
    "serve_with_console",
]

#: How many of the last resolved alerts the console shows under the open ones.
RESOLVED_SHOWN = 3


def log_to_console(console: LiveConsole, level: str) -> None:
    """Log records at ``level`` and above print above the live console.

    Raises:
        ValueError: ``level`` is not a logging level name.
    """
    handler = RichHandler(console=console.console, show_path=False, markup=False)
    logging.basicConfig(level=level.upper(), handlers=[handler], format="%(message)s", force=True)


async def serve_with_console(
    console: LiveConsole, daemon: Daemon, stop: asyncio.Event, keys_from: int | None = None
) -> None:
    """Run ``daemon`` until ``stop``, the console following it twice a second.

    Args:
        keys_from: the terminal to read keys from (default: standard input, when it is
            a terminal).
    """
    keys = ConsoleKeys(daemon)
    fd = _stdin() if keys_from is None else keys_from
    with keys.reading(fd) as reading:
        frames = (lambda: console_frame(daemon, keys.prompt)) if reading else None
        follow = asyncio.create_task(console.follow(frames or (lambda: console_frame(daemon))))
        try:
            await daemon.run(stop)
        finally:
            follow.cancel()
            with suppress(asyncio.CancelledError):
                await follow


def _stdin() -> int | None:
    """Standard input's descriptor, or None when there is none (closed, replaced)."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def console_frame(daemon: Daemon, keys: KeyPrompt | None = None) -> ConsoleFrame:
    """What the live console shows of ``daemon`` now."""
    sections = daemon.core.config.sections
    rounds = ", ".join(
        f"{s.name} round {s.event.round}" if s.name else f"round {s.event.round}" for s in sections
    )
    name = sections[0].event.name if sections else ""
    title = f"{name}: {rounds}   viewer {daemon.address}/"
    boards = sorted(daemon.hub.states(), key=lambda state: state.board)
    return ConsoleFrame(
        title=title,
        boards=boards,
        alerts=daemon.hub.open_alerts(),
        resolved=daemon.hub.resolved_alerts(RESOLVED_SHOWN),
        progress=memory_progress(boards),
        keys=keys,
    )


class ConsoleKeys:
    """The console's keys: a prompt, and its requests carried out on ``daemon``."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.prompt = KeyPrompt()
        self._tasks: set[asyncio.Task[str]] = set()

    def feed(self, text: str) -> None:
        """Keys typed; a request they complete is sent to the daemon."""
        for key in keys_in(text):
            self.prompt, request = press(self.prompt, key)
            if request is not None:
                task = asyncio.get_running_loop().create_task(self.carry_out(request))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def carry_out(self, request: KeyRequest) -> str:
        """Send ``request``'s commands; show and return the answer."""
        states = sorted(self.daemon.hub.states(), key=lambda state: state.board)
        section = request.section if isinstance(request, ConfirmRequest) else ""
        answer = section_problem(states, section, request.board)
        if answer is None:
            commands = (
                request.commands(states)
                if isinstance(request, ConfirmRequest)
                else request.commands()
            )
            answers: list[tuple[int, str | None]] = []
            warnings: list[str] = []
            for command in commands:
                try:
                    reply = await self.daemon.service.execute(command)
                except Exception:
                    log.exception("console command %s failed", command)
                    answers.append((command.board, "internal error (see the log)"))
                    continue
                answers.append((command.board, None if reply.ok else reply.reason))
                warnings += contradictions(reply.details)
            everyone = isinstance(request, ConfirmRequest) and request.board is None
            answer = summary(request, answers, confirmable(states, section)[1] if everyone else ())
            answer = " ".join([answer, *(f"warning: {w} (c to confirm)" for w in warnings)])
        self.prompt = KeyPrompt(action=self.prompt.action, text=self.prompt.text, reply=answer)
        return answer

    @contextlib.contextmanager
    def reading(self, fd: int | None) -> Iterator[bool]:
        """Read keys from terminal ``fd`` inside the block (True), if it is one."""
        if fd is None or not os.isatty(fd) or sys.platform == "win32":
            yield False
            return
        loop = asyncio.get_running_loop()
        with _cbreak(fd):
            loop.add_reader(fd, self._read, fd)
            try:
                yield True
            finally:
                loop.remove_reader(fd)

    def _read(self, fd: int) -> None:
        try:
            data = os.read(fd, 256)
        except OSError:
            data = b""
        if not data:  # the terminal is gone: stop reading it
            asyncio.get_running_loop().remove_reader(fd)
            return
        self.feed(data.decode("utf-8", "ignore"))
