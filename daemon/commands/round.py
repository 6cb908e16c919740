"""``dgtcast round next``: move the running daemon's event (or a section) to the next round.

It talks to the daemon that ``dgtcast run --config FILE`` started, over its arbiter
channel (daemon/commands/arbiter_client.py: the ``[server]`` address of the same file
and the token that reaches it), and sends ``next_round``: nothing is edited and nothing
restarts. The daemon answers with the sections moved, or why not (results not
confirmed: each board is listed; ``--force`` moves on anyway).

Exit codes: 0 moved on, 1 refused or no daemon answering, 2 bad configuration.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from daemon.commands.options import add_http_port

if TYPE_CHECKING:  # what sending needs is imported to send: --help needs none of it
    from broadcast.feed.commands import ArbiterCommand
    from daemon.commands.arbiter_client import ArbiterSession
    from daemon.config.model import Config

__all__ = ["add_arguments", "next_round", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``next`` with ``--config``, ``--section``, ``--force``, ``--http-port``."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    nxt = actions.add_parser("next", help="move the running daemon on to the next round")
    nxt.add_argument("--config", required=True, help="the configuration the daemon runs")
    nxt.add_argument("--section", default="", help="only this section (default: every one)")
    nxt.add_argument(
        "--force", action="store_true", help="move on although results are not confirmed"
    )
    add_http_port(nxt, "the daemon's HTTP port, if not [server] port")
    nxt.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for it")


def run(args: argparse.Namespace) -> int:
    """Send ``next_round`` and print the daemon's answer."""
    from broadcast.feed.commands import NextRound
    from daemon.commands.arbiter_client import reach_daemon
    from daemon.config.model import load_config_or_report

    config = load_config_or_report(args.config)
    if config is None:
        return 2
    command = NextRound(section=args.section, force=args.force)

    async def move_on(session: ArbiterSession) -> int:
        return _show(await session.send(command))

    return reach_daemon(config, args.http_port, args.timeout, move_on)


async def next_round(
    config: Config, command: ArbiterCommand, *, port: int | None = None
) -> dict[str, Any]:
    """Send ``command`` on the daemon's arbiter channel; its ``ok`` or ``error`` answer
    (``next_round``; ``dgtcast clocks set`` sends ``set_clocks`` the same way).

    Raises:
        NotSignedIn: no token reaches the daemon, or it refused the token.
        OSError, TimeoutError, websockets.exceptions.WebSocketException: no daemon.
    """
    from daemon.commands.arbiter_client import arbiter_session

    async with arbiter_session(config, http_port=port) as session:
        return await session.send(command)


def _show(reply: dict[str, Any]) -> int:
    if reply.get("type") != "ok":
        print(f"dgtcast: not moved on: {reply.get('reason', 'no reason given')}", file=sys.stderr)
        return 1
    details = reply.get("details", {})
    for item in details.get("pending", []):
        state = "no result" if item["result"] is None else f"{item['result']} not confirmed"
        where = f"{item['section']} board" if item["section"] else "board"
        print(f"left unconfirmed: {where} {item['board']}: {state}")
    for section in details.get("sections", []):
        name = section["section"] or "the event"
        print(f"{name}: round {section['round']} ({section['boards']} boards)")
    return 0
