"""``dgtcast result set`` and ``dgtcast result confirm``: results on the running daemon.

``dgtcast result set BOARD RESULT`` and ``dgtcast result confirm BOARD`` (or ``--all``)
are the arbiter page's **Set result** and **Confirm**, from the terminal, against the daemon
that ``dgtcast run --config FILE`` started (its arbiter channel, as ``dgtcast round
next``: daemon/commands/arbiter_client.py). A set result is provisional until it is
confirmed; a confirmed one goes into the section's TRF at once. ``confirm --all``
confirms every result that awaits confirmation (``--section``: of one section) and
lists the boards that have none yet. RESULT is any result the page sets; a shell reads
``-+`` and ``--`` as options, so they are also words (``black-by-forfeit``,
``double-forfeit``; ``white-by-forfeit`` for ``+-``) or follow a ``--``
(``set 21 -- --``). A RESULT that is none is a one-line error (exit code 2).

Exit codes: 0 done, 1 refused (each reason printed) or no daemon answering, 2 bad usage
or configuration.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from broadcast.feed.commands import ConfirmResult, SetResult
from daemon.commands.arbiter_client import ArbiterSession, reach_daemon
from daemon.commands.options import add_http_port, board_number
from daemon.config.model import load_config_or_report
from daemon.console.keys import (
    ConfirmRequest,
    Request,
    SetRequest,
    confirmable,
    contradictions,
    parse_result,
    refusal,
    section_problem,
)

__all__ = ["add_arguments", "run"]


#: ``result set``'s help for RESULT.
RESULT_HELP = (
    "1-0, 0-1, 1/2-1/2 (or 1/2), +-, * (quoted: '*'), and the forfeits as words:"
    " white-by-forfeit (+-), black-by-forfeit (-+), double-forfeit (--); -+ and -- also"
    " after a -- (set 21 -- --)"
)


def _given(value: str | list[str]) -> str:
    """The RESULT as typed: argparse of some Python versions drops each ``--``, so
    ``set 21 -- --`` leaves an empty list where the double forfeit was."""
    return "--" if value == [] else str(value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``set BOARD RESULT`` and ``confirm BOARD|--all``, each with ``--config``,
    ``--section``, ``--http-port``, ``--timeout``."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    put = actions.add_parser("set", help="set a board's result (provisional until confirmed)")
    put.add_argument("board", type=board_number, help="the board number")
    put.add_argument("result", help=RESULT_HELP)
    confirm = actions.add_parser("confirm", help="confirm a board's result, or every one")
    which = confirm.add_mutually_exclusive_group(required=True)
    which.add_argument("board", type=board_number, nargs="?", help="the board number")
    which.add_argument("--all", action="store_true", help="every result that awaits confirmation")
    for sub in (put, confirm):
        sub.add_argument("--config", required=True, help="the configuration the daemon runs")
        sub.add_argument("--section", default="", help="only boards of this section")
        add_http_port(sub, "the daemon's HTTP port, if not [server] port")
        sub.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for it")


def run(args: argparse.Namespace) -> int:
    """Send the commands and print each answer."""
    request: Request
    if args.action == "set":
        try:
            request = SetRequest(board=args.board, result=parse_result(_given(args.result)))
        except ValueError as exc:
            print(f"dgtcast result set: {exc}", file=sys.stderr)
            return 2
    else:
        request = ConfirmRequest(board=None if args.all else args.board, section=args.section)
    config = load_config_or_report(args.config)
    if config is None:
        return 2

    async def carry_out(session: ArbiterSession) -> int:
        return await send(session, request, args.section)

    return reach_daemon(config, args.http_port, args.timeout, carry_out)


async def send(session: ArbiterSession, request: Request, section: str = "") -> int:
    """Carry ``request`` out on the daemon; print what happened; the exit code."""
    board = request.board
    problem = section_problem(session.boards, section, board)
    if problem is not None:
        print(f"dgtcast: {problem}", file=sys.stderr)
        return 1
    if isinstance(request, SetRequest):
        commands: Sequence[SetResult | ConfirmResult] = request.commands()
        done = f"{request.result} set (provisional until confirmed)"
    else:
        commands = request.commands(session.boards)
        done = "confirmed"
    code = 0
    for command in commands:
        reply = await session.send(command)
        if reply.get("type") == "ok":
            result = _shown(session, command.board, request)
            print(f"board {command.board}: {result}{done}")
            for warning in contradictions(reply.get("details") or {}):
                print(f"warning: {warning}", file=sys.stderr)
                print(
                    f"  to keep it: dgtcast result confirm {command.board} --config FILE",
                    file=sys.stderr,
                )
        else:
            print(refusal(command.board, str(reply.get("reason", "refused"))), file=sys.stderr)
            code = 1
    if isinstance(request, ConfirmRequest) and request.board is None:
        _left(session, request.section, confirmed=len(commands))
    return code


def _shown(session: ArbiterSession, board: int, request: Request) -> str:
    """``1-0 `` before "confirmed" (the result the daemon held); "" for a set."""
    if isinstance(request, SetRequest):
        return ""
    state = next((s for s in session.boards if s.board == board), None)
    return "" if state is None or state.result == "*" else f"{state.result} "


def _left(session: ArbiterSession, section: str, *, confirmed: int) -> None:
    missing = confirmable(session.boards, section)[1]
    if not confirmed and not missing:
        print("every result is confirmed already")
    if missing:
        boards = ", ".join(str(b) for b in missing)
        print(f"no result yet: board{'s' if len(missing) > 1 else ''} {boards}")
