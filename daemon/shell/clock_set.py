"""Setting e-board clocks to the time control, and which clocks a ``set_clocks`` names.

:func:`set_clock` sets one clock with SETNRUN, paused, each side to its colour's first
period plus its first increment, and shows the board on a DGT 3000 (docs/protocol.md
§7.5, §8); the daemon's sessions (``--set-clocks``, **Set clocks**, ``dgtcast clocks
set`` through the arbiter channel) and ``dgtcast clocks set`` on the ports use it alike.
:func:`choose_clocks` picks the boards a ``set_clocks`` command names (every one, a
board's, a section's) and :func:`clock_reply` answers the arbiter. :class:`DaemonClocks`
sets a running daemon's clocks: on the arbiter's ``set_clocks``, or at start
(``--set-clocks``) as each e-board answers.
"""

from __future__ import annotations

import asyncio
import logging
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from broadcast.feed.commands import CommandReply, SetClocks
from daemon.config.model import BoardConfig
from daemon.config.sections import Section
from daemon.round.core import RoundCore
from drivers.dgt.aio.link import ClockRefused, DgtLinkError, LinkClosed
from drivers.dgt.aio.supervisor import BoardSupervisor
from drivers.dgt.commands import ClockAscii, ClockSetAndRun

__all__ = [
    "ClockSetResult",
    "ClockedBoard",
    "DaemonClocks",
    "choose_clocks",
    "clock_reply",
    "clock_text",
    "set_clock",
    "start_times",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockSetResult:
    """What happened when one board's clock was set."""

    board: int
    ok: bool
    reason: str = ""


def _not_online(board: int) -> str:
    """Why a clock was not set when its e-board does not answer (yet), and what to do."""
    return f"its e-board is not online; once it answers: dgtcast clocks set --board {board}"


def clock_text(board: BoardConfig) -> str:
    """Eight characters for a DGT 3000 display: the board number and both surnames.

    ``"1 SmiDoe"`` for board 1, Smith v Doe: as much of each surname as fits.
    """
    prefix = f"{board.number} "
    room = max(0, (8 - len(prefix)) // 2)
    names = [_surname(board.white)[:room], _surname(board.black)[:room]]
    return (prefix + "".join(names))[:8]


def _surname(name: str) -> str:
    """The surname in plain ASCII (accents dropped): the display has no other letters."""
    plain = unicodedata.normalize("NFKD", name.split(",")[0]).encode("ascii", "ignore")
    return plain.decode("ascii").replace(" ", "")


def start_times(board: BoardConfig, section: Section) -> tuple[int, int] | str:
    """(left, right) seconds a clock is set to before the game, or why it cannot be set.

    Each side gets its colour's first period plus its first increment (Fischer clocks
    start so, docs/protocol.md §7.2 "Observed"). Under time odds the sides differ, so
    White's side must be known (``clock_white_side``).
    """
    rules = section.event.clock_rules
    white, black = rules.white.start_seconds, rules.black.start_seconds
    if white == black:
        return white, black
    if board.clock_white_side is None:
        return "time odds: set clock_white_side so White's time goes on White's side"
    return (white, black) if board.clock_white_side == "left" else (black, white)


async def set_clock(
    supervisor: BoardSupervisor,
    board: BoardConfig,
    section: Section,
    on_set: Callable[[int, int], None] | None = None,
) -> ClockSetResult:
    """Set one clock to the time control, paused, and show the board (mode 23, §7.5, §8).

    SETNRUN sets both times and what runs; the clock itself adds nothing in mode 23, so
    the daemon adds increments and periods while it runs (daemon/mode23/control.py).
    ``on_set`` is called with the times set (left, right) as soon as the clock
    acknowledged them (a lever press may follow before the text is shown).
    """
    times = start_times(board, section)
    if isinstance(times, str):
        return ClockSetResult(board=board.number, ok=False, reason=times)
    command = ClockSetAndRun(
        left_seconds=times[0], right_seconds=times[1], run="paused", toggle_on_lever=True
    )
    try:
        await supervisor.send_clock(command)
    except ClockRefused as exc:
        return ClockSetResult(board=board.number, ok=False, reason=f"refused ({exc})")
    except LinkClosed:
        return ClockSetResult(board=board.number, ok=False, reason=_not_online(board.number))
    except DgtLinkError as exc:
        return ClockSetResult(board=board.number, ok=False, reason=str(exc) or type(exc).__name__)
    if on_set is not None:
        on_set(*times)
    try:
        await supervisor.send_clock(ClockAscii(text=clock_text(board)))
    except DgtLinkError as exc:
        log.info("board %d: no text display (%s)", board.number, exc)
    return ClockSetResult(board=board.number, ok=True)


def choose_clocks(sections: Mapping[int, str], command: SetClocks | None) -> list[int] | str:
    """The boards (of ``sections``: e-board number -> its section) whose clocks ``command``
    names, in order; or why none, when it names a board or a section without one."""
    board = None if command is None else command.board
    section = None if command is None else command.section
    chosen = [
        number
        for number, name in sorted(sections.items())
        if (board is None or number == board) and (section is None or name == section)
    ]
    if chosen or (board is None and section is None):
        return chosen
    what = [f"board {board}" if board else "", f'section "{section}"' if section else ""]
    return f"no e-board clock to set: {' in '.join(w for w in what if w)} has none"


def clock_reply(results: Sequence[ClockSetResult]) -> CommandReply:
    """The arbiter's answer: the clocks set, and each one not set with why."""
    failed = {str(r.board): r.reason for r in results if not r.ok}
    done = [r.board for r in results if r.ok]
    if failed:
        reasons = "; ".join(f"board {b}: {why}" for b, why in failed.items())
        return CommandReply(ok=False, reason=reasons, details={"set": done, "failed": failed})
    return CommandReply(ok=True, details={"set": done})


class ClockedBoard(Protocol):
    """An e-board's session as its clock is set (daemon/shell/pipeline.py)."""

    online: asyncio.Event

    async def set_clock(self, section: Section) -> ClockSetResult: ...


class DaemonClocks:
    """The e-board clocks of a running daemon.

    Args:
        boards: each e-board's session, by board number.
        core: the round (each board's section, whether its game is under way).
    """

    def __init__(self, boards: Mapping[int, ClockedBoard], core: RoundCore) -> None:
        self.boards = boards
        self.core = core

    async def set_clocks(self, command: SetClocks | None = None) -> CommandReply:
        """Set the e-board clocks to their time control (arbiter ``set_clocks``): every
        one, or the board's or the section's that ``command`` names.

        Each clock set decides afresh who adds its increments (daemon/mode23/control.py).
        """
        games = self.core.games
        chosen = choose_clocks({n: games[n].section.name for n in self.boards}, command)
        if isinstance(chosen, str):
            return CommandReply(ok=False, reason=chosen)
        sessions = [(self.boards[n], games[n].section) for n in chosen]
        return clock_reply(await asyncio.gather(*(s.set_clock(sec) for s, sec in sessions)))

    async def set_when_online(self) -> None:
        """``--set-clocks``: each clock as soon as its e-board answers (a board missing
        holds no other back), unless its game is under way: a restart during the round
        keeps the clocks the players are using."""
        await asyncio.gather(*(self._set_when_online(n) for n in self.boards))

    async def _set_when_online(self, number: int) -> None:
        await self.boards[number].online.wait()
        if self.core.games[number].record.moves:
            log.info("= board %d: its game is under way, its clock is not set", number)
            return
        reply = await self.set_clocks(SetClocks(board=number))
        if reply.ok:
            log.info("= board %d: clock set at round start", number)
        else:
            log.warning("clock not set at round start: %s", reply.reason)
