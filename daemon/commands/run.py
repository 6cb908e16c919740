"""``dgtcast run --config FILE``: run a round until Ctrl-C or SIGTERM.

On a terminal the live console (daemon/console/view.py) shows every board and the open alerts,
with warnings above it; elsewhere (a pipe, a file, systemd) the output is log lines.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING

from broadcast.web.listen import ListenError
from daemon.commands.options import add_http_port
from daemon.config.model import ConfigError, format_config_errors, is_every_interface
from daemon.journal.identity import abandon_journal
from daemon.journal.records import JournalError
from daemon.pairing import PairingFileError
from daemon.shell import runtime
from daemon.shell.app import Daemon, DaemonOptions
from daemon.shell.logs import configure_logging, wanted
from daemon.shell.startup import unless_stopped

if TYPE_CHECKING:
    from daemon.console.view import LiveConsole

__all__ = ["add_arguments", "arbiter_address", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config``, ``--set-clocks``, ``--http-port``, ``--new-journal``, ``--log-level``."""
    parser.add_argument("--config", required=True, help="the round's TOML configuration")
    parser.add_argument(
        "--set-clocks",
        action="store_true",
        help="set every e-board clock to the time control at start (clocks in mode 23)",
    )
    add_http_port(parser, "listen on this HTTP port instead of [server] port")
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
    console = None if args.plain or not wanted() else _live_console()
    options = DaemonOptions(
        set_clocks_at_start=args.set_clocks,
        port=args.http_port,
        new_journal=args.new_journal,
        alert_log=console is None,  # the log is the arbiter's view
    )
    if console is None:
        configure_logging(args.log_level or "INFO")
    else:
        from daemon.console.link import log_to_console  # rich: on a terminal only

        log_to_console(console, args.log_level or "WARNING")
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
            abandon_journal(daemon.journal)  # a refused start leaves no new journal behind
            raise
        _print_urls(daemon)
        if console is None:
            await daemon.run(stop)
        else:
            from daemon.console.link import serve_with_console

            await serve_with_console(console, daemon, stop)
    finally:
        remove()
    return 0


def _live_console() -> LiveConsole:
    """The live console, on a terminal; rich and the console are imported for it only
    (log lines, the usual output of a daemon, need neither: some 50 ms of start-up)."""
    from daemon.console.view import LiveConsole

    return LiveConsole()


def _print_urls(daemon: Daemon) -> None:
    base = daemon.address
    print(f"viewer:  {base}/", flush=True)
    print(f"arbiter: {arbiter_address(base, daemon)}", flush=True)
    print(f"PGN:     {base}/round.pgn", flush=True)
    if is_every_interface(daemon.config.server.host):  # the arbiters' phones, too
        name, port = socket.gethostname(), daemon.server.port
        print(f"other machines: http://{name}:{port}/ (or this machine's address)", flush=True)


def arbiter_address(base: str, daemon: Daemon) -> str:
    """The arbiter page; with the daemon's own token in it when none is configured.

    The token is in the fragment (``#token=…``): the page reads it, the browser never
    sends it to a server or keeps it in the address bar (docs/configuration.md).
    """
    token = daemon.token
    if token is not None and token.local and token.value is not None:
        return f"{base}/arbiter#token={token.value}"
    return f"{base}/arbiter  (sign in with the arbiters' token)"
