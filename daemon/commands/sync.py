"""``dgtcast sync rebuild`` and ``dgtcast sync accept``: a board out of sync, from the terminal.

``dgtcast sync rebuild BOARD`` is the arbiter page's **Rebuild from memory**: the board's
session reads the board's memory again now and recovers the moves played since the last
position the record and the board agreed on (what the daemon also does by itself, with a
back-off, while the board stays out of sync: docs/faults.md). ``dgtcast sync accept
BOARD`` is **Accept position**: the game goes on from the board as it stands, the moves
up to the last agreement kept, the jump marked in the PGN. Both talk to the daemon that
``dgtcast run --config FILE`` started (its arbiter channel, as ``dgtcast result``:
daemon/commands/arbiter_client.py) and print its answer.

Exit codes: 0 done, 1 refused (the reason printed) or no daemon answering, 2 bad usage or
configuration.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from daemon.commands.options import add_http_port, board_number

if TYPE_CHECKING:  # what sending needs is imported to send: --help needs none of it
    from daemon.commands.arbiter_client import ArbiterSession

__all__ = ["add_arguments", "run"]

#: What each action does, as ``dgtcast sync ACTION --help`` and the answer say it.
_DONE = {
    "rebuild": "its memory is being read: the moves it holds since the last agreement are"
    " recovered (the alert says what came of it)",
    "accept": "the game goes on from the board's position",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``rebuild BOARD`` and ``accept BOARD``, each with ``--config``, ``--http-port``,
    ``--timeout``."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    rebuild = actions.add_parser(
        "rebuild", help="read a board's memory again now and recover the moves it holds"
    )
    accept = actions.add_parser(
        "accept", help="the game goes on from the position on the board (the jump is marked)"
    )
    for sub in (rebuild, accept):
        sub.add_argument("board", type=board_number, help="the board number")
        sub.add_argument("--config", required=True, help="the configuration the daemon runs")
        add_http_port(sub, "the daemon's HTTP port, if not [server] port")
        sub.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for it")


def run(args: argparse.Namespace) -> int:
    """Send the command and print the answer."""
    from broadcast.feed.commands import AcceptPosition, RebuildFromMemory
    from daemon.commands.arbiter_client import reach_daemon
    from daemon.config.model import load_config_or_report
    from daemon.console.keys import refusal

    config = load_config_or_report(args.config)
    if config is None:
        return 2
    command = (
        RebuildFromMemory(board=args.board)
        if args.action == "rebuild"
        else AcceptPosition(board=args.board)
    )

    async def carry_out(session: ArbiterSession) -> int:
        reply = await session.send(command)
        if reply.get("type") != "ok":
            print(refusal(args.board, str(reply.get("reason", "refused"))), file=sys.stderr)
            return 1
        print(f"board {args.board}: {_DONE[args.action]}")
        for alert in (reply.get("details") or {}).get("alerts", []):
            note = (alert.get("history") or [{}])[-1].get("note", "")
            if note:
                print(f"  alert {alert.get('id')} ({alert.get('kind')}): {note}")
        return 0

    return reach_daemon(config, args.http_port, args.timeout, carry_out)
