"""``dgtcast clocks set --config FILE``: set the e-board clocks to the time control.

Each clock is set with SETNRUN, paused, each side to its colour's first period plus its
first increment (Fischer from move 1; under time odds White's and Black's differ, which
needs ``clock_white_side``), and a DGT 3000 shows the board number and the players'
surnames (docs/protocol.md §7.5, §8). SETNRUN carries no increment and no period: while
the daemon runs, it adds them (daemon/mode23/control.py). Clocks not in mode 23 refuse (ack0
0x40) and are reported; so are boards that do not answer.

While the daemon runs (it holds the ports), the command goes to it over its arbiter
channel, as ``dgtcast round next`` does (the ``set_clocks`` command of the arbiter page's
"Set clocks"): the daemon sets the clocks and decides afresh who adds their increments.
When no daemon answers there, the clocks are set on the ports directly; ``--direct``
goes to the ports without asking a daemon. ``--board N`` and ``--section NAME`` choose
the clocks.

Exit codes: 0 every chosen clock set, 1 one was not (or the daemon refused), 2 bad
configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from websockets.exceptions import WebSocketException

from broadcast.feed.commands import SetClocks
from daemon.commands.arbiter_client import NotSignedIn, daemon_url
from daemon.commands.options import add_http_port
from daemon.commands.round import next_round
from daemon.config.model import Config, load_config_or_report
from daemon.shell import runtime

if TYPE_CHECKING:  # the boards' side, imported when the ports are used (no daemon answers)
    from daemon.shell.clock_set import ClockSetResult

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``set`` with ``--config``, ``--board``, ``--section``, ``--direct``, ``--http-port``."""
    parser.add_argument("action", choices=["set"], help="set: set the e-board clocks")
    parser.add_argument("--config", required=True, help="the round's TOML configuration")
    parser.add_argument("--board", type=int, help="only this board's clock")
    parser.add_argument("--section", help="only this section's clocks")
    parser.add_argument(
        "--direct",
        action="store_true",
        help="set them on the serial ports, without asking a running daemon",
    )
    add_http_port(parser, "the running daemon's HTTP port, if not [server] port")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per board")


def run(args: argparse.Namespace) -> int:
    """Set the clocks; exit 1 when any clock was not set, 2 on a bad configuration."""
    config = load_config_or_report(args.config)
    if config is None:
        return 2
    command = SetClocks(board=args.board, section=args.section)
    if not args.direct:
        try:
            reply = runtime.run(_ask_daemon(config, command, args.http_port, args.timeout))
        except (OSError, WebSocketException, NotSignedIn) as exc:
            url = daemon_url(config, args.http_port)
            print(f"no daemon answers at {url} ({exc}): setting the clocks on the ports")
        except TimeoutError:
            print(f"dgtcast: the daemon did not answer within {args.timeout:g} s", file=sys.stderr)
            return 1
        else:
            return _show_reply(reply)
    results = runtime.run(set_all(config, patience=args.timeout, command=command))
    for result in results:
        state = "set" if result.ok else f"NOT SET: {result.reason}"
        print(f"board {result.board}: {state}")
    if not results:
        print("no chosen board has an e-board port or serial", file=sys.stderr)
    return 0 if results and all(r.ok for r in results) else 1


async def _ask_daemon(
    config: Config, command: SetClocks, port: int | None, seconds: float
) -> dict[str, Any]:
    """The running daemon's answer to ``set_clocks`` (each clock takes a moment)."""
    async with asyncio.timeout(seconds * 3):
        return await next_round(config, command, port=port)


def _show_reply(reply: dict[str, Any]) -> int:
    """Print the daemon's answer: one line per clock, as the direct mode does."""
    details = reply.get("details") or {}
    for board in details.get("set", []):
        print(f"board {board}: set")
    for board, reason in (details.get("failed") or {}).items():
        print(f"board {board}: NOT SET: {reason}")
    if reply.get("type") != "ok":
        if not details:
            print(
                f"dgtcast: clocks not set: {reply.get('reason', 'no reason given')}",
                file=sys.stderr,
            )
        return 1
    return 0


async def set_all(
    config: Config, *, patience: float, command: SetClocks | None = None
) -> list[ClockSetResult]:
    """Connect to every chosen e-board at once and set its clock."""
    board = None if command is None else command.board
    section = None if command is None else command.section
    numbers = [
        b.number
        for b in config.boards
        if b.has_eboard
        and (board is None or b.number == board)
        and (section is None or config.section_of(b.number).name == section)
    ]
    jobs = [_set_one(config, number, patience) for number in numbers]
    return list(await asyncio.gather(*jobs))


async def _set_one(config: Config, number: int, patience: float) -> ClockSetResult:
    from daemon.shell.clock_set import ClockSetResult, set_clock
    from daemon.shell.pipeline import board_supervisor
    from drivers.dgt.aio.supervisor import LinkUp

    board = config.board(number)
    supervisor = board_supervisor(board)
    async with supervisor:
        try:
            async with asyncio.timeout(patience):
                async for _, report in supervisor.reports():
                    if isinstance(report, LinkUp):
                        return await set_clock(supervisor, board, config.section_of(number))
        except TimeoutError:
            pass
    return ClockSetResult(board=number, ok=False, reason="board did not answer")
