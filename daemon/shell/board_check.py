"""At start-up, every configured e-board that does not answer is named, with the fix.

A board can be missing (no such path, cable out, board off), unreadable (the user may
not open serial ports: on Linux, not in the ``dialout`` group; another program holds the
port) or another board (``serial`` given, and the ports answer with other serial
numbers). :func:`explain_board` turns the supervisor's last connect attempt into one line
with the reason and the fix; the daemon logs it at WARNING for each board still offline
a few seconds after start (:func:`warn_unanswered`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Mapping, Sequence

from daemon.config.model import BoardConfig
from daemon.shell.pipeline import BoardSession
from drivers.dgt.aio.ports import PortSpec, emulated_port_of
from drivers.dgt.aio.probe import (
    FIX_BUSY,
    FIX_MISSING,
    FIX_OTHER_SERIAL,
    PortProblem,
    explain_path,
)

__all__ = ["explain_board", "warn_unanswered"]

log = logging.getLogger(__name__)


def explain_board(
    board: BoardConfig, problems: Sequence[PortProblem], held: Mapping[str, str] | None = None
) -> str:
    """Why the board gave no link, and what to do, in one line.

    Args:
        board: the configured board.
        problems: the supervisor's last connect attempt, one per port tried.
        held: serial numbers of the boards this daemon holds, by real port path (busy
            for this board's supervisor, but no fault).
    """
    held = held or {}
    problems = [_held(p, held) for p in problems]
    where = board.port or "any serial port"
    if board.port is not None and not PortSpec.from_str(board.port).is_glob:
        problem = explain_path(board.port)
        if problem is not None:
            return f"{problem.reason}; fix: {problem.fix}"
    others = [p for p in problems if p.fix == FIX_OTHER_SERIAL]
    faults = [p for p in problems if p.fix != FIX_OTHER_SERIAL]
    busy = [p.port for p in faults if p.fix == FIX_BUSY]
    found = ", ".join(p.reason.rsplit(" ", 1)[-1] for p in others) or "none"
    if board.serial is not None and busy and len(busy) == len(faults):
        # which board a port in use holds is not known: it may be this one, or any other
        ports = ", ".join(busy)
        verb = "is" if len(busy) == 1 else "are"
        return (
            f"no board with serial {board.serial} answers on {where} (serials found:"
            f" {found}); {ports} {verb} in use by another program and may hold it;"
            f" fix: {FIX_BUSY}"
        )
    if faults:
        return f"{faults[0].reason}; fix: {faults[0].fix}"
    if board.serial is not None:
        return (
            f"no board with serial {board.serial} answers on {where} (serials found:"
            f" {found}); fix: {FIX_MISSING}, or correct the serial in [[boards]]"
        )
    return f"no serial port matches {where}; fix: {FIX_MISSING}"


def _held(problem: PortProblem, held: Mapping[str, str]) -> PortProblem:
    serial = held.get(os.path.realpath(problem.port))
    if serial is None:
        return problem
    reason = f"{problem.port} holds the board with serial {serial}"
    return PortProblem(port=problem.port, reason=reason, fix=FIX_OTHER_SERIAL)


async def warn_unanswered(
    sessions: Mapping[int, BoardSession], *, patience: float = 5.0
) -> list[int]:
    """Wait up to ``patience`` seconds for every e-board; warn about the others.

    Returns the numbers of the boards warned about.
    """
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(patience):
            await asyncio.gather(*(s.online.wait() for s in sessions.values()))
    silent = [n for n, s in sorted(sessions.items()) if not s.online.is_set()]
    held = {}
    for session in sessions.values():
        device = session.supervisor.device
        if device is not None and device.identity is not None:
            held[device.path] = device.identity.serial.text
    for number in silent:
        session = sessions[number]
        reason = explain_board(session.board, session.supervisor.last_problems, held)
        log.warning("board %d has no e-board link: %s", number, reason)
    _warn_emulated(sessions)
    return silent


def _warn_emulated(sessions: Mapping[int, BoardSession]) -> None:
    """An e-board that is an emulator (``dgtcast emulate``) is fine in a rehearsal, and a
    mistake in an event: said once at start."""
    for number, session in sorted(sessions.items()):
        device = session.supervisor.device
        link = None if device is None else emulated_port_of(device.path)
        if link is not None:
            log.warning(
                "board %d is an emulated board (dgtcast emulate, %s): a rehearsal; stop the"
                " emulators before the event",
                number,
                link,
            )
