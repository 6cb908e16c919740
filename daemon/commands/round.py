"""``dgtcast round next``: move the running daemon's event (or a section) to the next round.

It talks to the daemon that ``dgtcast run --config FILE`` started, over its arbiter
channel (``ws://host:port/ws/arbiter``, the ``[server]`` address and arbiter token of
the same file, or ``DGTCAST_ARBITER_TOKEN``), and sends ``next_round``: nothing is
edited and nothing restarts. The daemon answers with the sections moved, or why not
(results not confirmed: each board is listed; ``--force`` moves on anyway).

Exit codes: 0 moved on, 1 refused or no daemon answering, 2 bad configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Coroutine
from typing import Any

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidHandshake, WebSocketException

from broadcast.feed.messages import ArbiterCommand, NextRound, command_to_json
from daemon.config.model import Config, load_config_or_report
from daemon.shell import runtime

__all__ = ["add_arguments", "channel_url", "next_round", "run"]

_REF = "dgtcast-round-next"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``next`` with ``--config``, ``--section``, ``--force``, ``--port``."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    nxt = actions.add_parser("next", help="move the running daemon on to the next round")
    nxt.add_argument("--config", required=True, help="the configuration the daemon runs")
    nxt.add_argument("--section", default="", help="only this section (default: every one)")
    nxt.add_argument(
        "--force", action="store_true", help="move on although results are not confirmed"
    )
    nxt.add_argument("--port", type=int, help="the daemon's port, if not [server] port")
    nxt.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for it")


def run(args: argparse.Namespace) -> int:
    """Send ``next_round`` and print the daemon's answer."""
    config = load_config_or_report(args.config)
    if config is None:
        return 2
    command = NextRound(section=args.section, force=args.force)
    try:
        reply = runtime.run(_within(args.timeout, next_round(config, command, port=args.port)))
    except (OSError, TimeoutError, WebSocketException) as exc:
        print(
            f"dgtcast: no daemon answers at {channel_url(config, args.port)}: {exc}",
            file=sys.stderr,
        )
        return 1
    return _show(reply)


async def _within(seconds: float, job: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
    async with asyncio.timeout(seconds):
        return await job


def channel_url(config: Config, port: int | None) -> str:
    """The running daemon's arbiter channel, from its configuration."""
    host = config.server.host
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"ws://{host}:{port or config.server.port}/ws/arbiter"


async def next_round(
    config: Config, command: ArbiterCommand, *, port: int | None = None
) -> dict[str, Any]:
    """Send ``command`` on the daemon's arbiter channel; its ``ok`` or ``error`` answer
    (``next_round``; ``dgtcast clocks set`` sends ``set_clocks`` the same way).

    Raises:
        OSError, TimeoutError, websockets.exceptions.WebSocketException: no daemon, or
            it closed the channel (a bad token: the answer says so).
    """
    token = config.server.arbiter_token
    if token is None:
        return {"type": "error", "reason": "[server] arbiter_token is needed to reach the daemon"}
    async with connect(channel_url(config, port)) as ws:
        await ws.send(json.dumps({"type": "auth", "token": token}))
        await ws.send(json.dumps({**command_to_json(command), "ref": _REF}))
        async for message in ws:
            data = json.loads(message)
            if data.get("type") in ("ok", "error") and data.get("ref") in (_REF, None):
                return dict(data)
    raise InvalidHandshake("the daemon closed the arbiter channel without an answer")


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
