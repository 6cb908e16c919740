"""The live console beside a running daemon (daemon/shell/console.py): what it shows of it.

Shared by ``dgtcast run`` and ``dgtcast demo``.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress

from rich.logging import RichHandler

from daemon.shell.app import Daemon
from daemon.shell.console import ConsoleFrame, LiveConsole, memory_progress

__all__ = ["RESOLVED_SHOWN", "console_frame", "log_to_console", "serve_with_console"]

#: How many of the last resolved alerts the console shows under the open ones.
RESOLVED_SHOWN = 3


def log_to_console(console: LiveConsole, level: str) -> None:
    """Log records at ``level`` and above print above the live console.

    Raises:
        ValueError: ``level`` is not a logging level name.
    """
    handler = RichHandler(console=console.console, show_path=False, markup=False)
    logging.basicConfig(level=level.upper(), handlers=[handler], format="%(message)s", force=True)


async def serve_with_console(console: LiveConsole, daemon: Daemon, stop: asyncio.Event) -> None:
    """Run ``daemon`` until ``stop``, the console following it twice a second."""
    follow = asyncio.create_task(console.follow(lambda: console_frame(daemon)))
    try:
        await daemon.run(stop)
    finally:
        follow.cancel()
        with suppress(asyncio.CancelledError):
            await follow


def console_frame(daemon: Daemon) -> ConsoleFrame:
    """What the live console shows of ``daemon`` now."""
    sections = daemon.core.config.sections
    rounds = ", ".join(
        f"{s.name} round {s.event.round}" if s.name else f"round {s.event.round}" for s in sections
    )
    name = sections[0].event.name if sections else ""
    server = daemon.config.server
    title = f"{name}: {rounds}   viewer http://{server.host}:{daemon.server.port}/"
    boards = sorted(daemon.hub.states(), key=lambda state: state.board)
    return ConsoleFrame(
        title=title,
        boards=boards,
        alerts=daemon.hub.open_alerts(),
        resolved=daemon.hub.resolved_alerts(RESOLVED_SHOWN),
        progress=memory_progress(boards),
    )
