"""``dgtcast clocks set --config FILE``: set every e-board clock to the time control.

Each clock is set with SETNRUN, paused, each side to its colour's first period plus its
first increment (Fischer from move 1; under time odds White's and Black's differ, which
needs ``clock_white_side``), and a DGT 3000 shows the board number and the players'
surnames (dgt-protocol.md §7.5, §8). SETNRUN carries no increment and no period: while
the daemon runs, it adds them (daemon/round/mode23.py). Clocks not in mode 23 refuse (ack0
0x40) and are reported; so are boards that do not answer.
Run it before the daemon (which holds the ports while it runs: there, arbiters use the
``set_clocks`` command).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from daemon.config.model import Config, load_config_or_report
from daemon.shell import runtime
from daemon.shell.pipeline import ClockSetResult, board_supervisor, set_clock
from drivers.dgt.aio.supervisor import LinkUp

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``set`` and ``--config``."""
    parser.add_argument("action", choices=["set"], help="set: set every e-board clock")
    parser.add_argument("--config", required=True, help="the round's TOML configuration")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per board")


def run(args: argparse.Namespace) -> int:
    """Set the clocks; exit 1 when any clock was not set, 2 on a bad configuration."""
    config = load_config_or_report(args.config)
    if config is None:
        return 2
    results = runtime.run(set_all(config, patience=args.timeout))
    for result in results:
        state = "set" if result.ok else f"NOT SET: {result.reason}"
        print(f"board {result.board}: {state}")
    if not results:
        print("no board has an e-board port or serial", file=sys.stderr)
    return 0 if all(r.ok for r in results) else 1


async def set_all(config: Config, *, patience: float) -> list[ClockSetResult]:
    """Connect to every e-board at once and set its clock."""
    numbers = [board.number for board in config.boards if board.has_eboard]
    jobs = [_set_one(config, number, patience) for number in numbers]
    return list(await asyncio.gather(*jobs))


async def _set_one(config: Config, number: int, patience: float) -> ClockSetResult:
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
