"""``dgtcast run --config FILE``: run a round until Ctrl-C or SIGTERM.

On a terminal the live console (daemon/console.py) shows every board and the open alerts,
with warnings above it; elsewhere (a pipe, a file, systemd) the output is log lines.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from contextlib import nullcontext, suppress
from dataclasses import replace

from rich.logging import RichHandler

from broadcast.listen import ListenError
from daemon import runtime
from daemon.app import Daemon, DaemonOptions, unless_stopped
from daemon.config import ConfigError, format_config_errors
from daemon.console import ConsoleFrame, LiveConsole, wanted
from daemon.journal import JournalError
from daemon.logs import configure_logging
from daemon.pairing import PairingFileError

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config``, ``--set-clocks``, ``--port``, ``--new-journal``, ``--log-level``."""
    parser.add_argument("--config", required=True, help="the round's TOML configuration")
    parser.add_argument(
        "--set-clocks",
        action="store_true",
        help="set every e-board clock to the time control at start (clocks in mode 23)",
    )
    parser.add_argument("--port", type=int, help="listen on this port instead of [server] port")
    parser.add_argument(
        "--new-journal",
        action="store_true",
        help="when the journal belongs to another round, keep it and start one beside it",
    )
    parser.add_argument(
        "--log-level",
        help="DEBUG shows the wire trace (default INFO; WARNING under the live console)",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="log lines only, no live console (the default when not on a terminal)",
    )


def run(args: argparse.Namespace) -> int:
    """Run the daemon; exit code 2 on a bad configuration or an address it cannot use."""
    console = None if args.plain or not wanted() else LiveConsole()
    options = DaemonOptions(
        set_clocks_at_start=args.set_clocks, port=args.port, new_journal=args.new_journal
    )
    if console is None:
        configure_logging(args.log_level or "INFO")
    else:
        _log_to(console, args.log_level or "WARNING")
        options = replace(options, progress=console.progress)
    try:
        with console.shown() if console is not None else nullcontext():
            return runtime.run(_serve(args.config, options, console))
    except ConfigError as exc:
        print(format_config_errors(exc), file=sys.stderr)
        return 2
    except JournalError as exc:
        print(f"dgtcast: {exc}", file=sys.stderr)
        return 2
    except PairingFileError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except ListenError as exc:
        print(f"dgtcast: {exc}", file=sys.stderr)
        return 2


def _log_to(console: LiveConsole, level: str) -> None:
    handler = RichHandler(console=console.console, show_path=False, markup=False)
    logging.basicConfig(level=level.upper(), handlers=[handler], format="%(message)s", force=True)


async def _serve(config: str, options: DaemonOptions, console: LiveConsole | None) -> int:
    stop = asyncio.Event()
    remove = runtime.install_signal_handlers(stop)
    try:
        daemon = await unless_stopped(Daemon.open(config, options), stop)
        if daemon is None:
            return 0
        print(f"dgtcast: round replayed from the journal ({daemon.replayed} inputs)", flush=True)
        try:
            await daemon.start()
        except BaseException:
            daemon.journal.close()
            raise
        _print_urls(daemon)
        if console is None:
            await daemon.run(stop)
        else:
            await _run_with(console, daemon, stop)
    finally:
        remove()
    return 0


async def _run_with(console: LiveConsole, daemon: Daemon, stop: asyncio.Event) -> None:
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
    return ConsoleFrame(title=title, boards=boards, alerts=daemon.hub.open_alerts())


def _print_urls(daemon: Daemon) -> None:
    host = daemon.config.server.host
    base = f"http://{host}:{daemon.server.port}"
    print(f"viewer:  {base}/", flush=True)
    print(f"arbiter: {base}/arbiter", flush=True)
    print(f"PGN:     {base}/round.pgn", flush=True)
