"""What the emulated clock showed, one JSON line per lever press and per SetNRun.

``dgtcast emulate --record FILE`` writes it (docs/emulator.md) so that a rehearsal can
compare the ``[%clk]`` of each move with what the clock really showed: the daemon sees
the board through the line, the record is the clock's own side of the story.

Lines (times are the emulator's clock, ``time.monotonic()`` seconds, which every process
of a Linux machine shares; clock times are whole seconds as the display shows them):

* ``{"event": "press", "ply": 12, "side": "right", "color": "black", "at": 812.43,
  "before": 3581, "shown": 3581, "switched": true}``: a player pressed their lever for
  ply 12; ``before`` is the mover's time at the press, ``shown`` after it (more when
  the clock adds the increment itself: before dgtcast's first SetNRun, or in a mode
  other than 23); ``switched`` is false for a press that did not hand the move over
  (the clock ran the other side: a reply undone by a late SetNRun).
* ``{"event": "start", "at": 805.1, "run": "left"}``: the arbiter started the clock.
* ``{"event": "set", "at": 812.61, "left": 3591, "right": 3580, "run": "left"}``: the
  clock took a SetNRun (§7.5): both times as set, and the side it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drivers.dgt import commands as cmd
from drivers.emulator.clock import ChessClock, Side
from drivers.emulator.player import Action, PressLever, StartClock

if TYPE_CHECKING:
    from drivers.emulator.device import EmulatedBoard

__all__ = ["ClockRecord", "recording"]


@contextlib.asynccontextmanager
async def recording(
    path: Path | None, board: EmulatedBoard, *, white_side: Side, first_ply: int = 0
) -> AsyncIterator[None]:
    """Record ``board``'s presses and SetNRuns into ``path`` (appended, a line at a time)
    while inside (``async with board, recording(...)``); nothing when ``path`` is None."""
    if path is None:
        yield
        return
    out = await asyncio.to_thread(Path(path).open, "a", encoding="utf-8", buffering=1)
    board.record = ClockRecord(out.write, white_side=white_side, first_ply=first_ply)
    try:
        yield
    finally:
        board.record = None
        out.close()


class ClockRecord:
    """Writes the record's lines through ``write`` (one string per line, with its newline).

    Args:
        write: where each line goes (a file's ``write``; flushed by the caller's choice).
        white_side: the clock side White sits at.
        first_ply: plies played before this record begins (a resumed game).
    """

    def __init__(
        self, write: Callable[[str], object], *, white_side: Side, first_ply: int = 0
    ) -> None:
        self._write = write
        self._white_side = white_side
        self._ply = first_ply
        self._last_side: Side | None = None

    def before_action(self, action: Action, clock: ChessClock, now: float) -> int | None:
        """The mover's time before a lever press (None for any other action)."""
        if not isinstance(action, PressLever):
            return None
        reading = clock.reading(now)
        return (reading.left if action.side == "left" else reading.right).seconds

    def acted(self, action: Action, before: int | None, clock: ChessClock, now: float) -> None:
        """After an action: a press of the lever is a ply (its side alternates)."""
        if isinstance(action, StartClock):
            self._line(event="start", at=round(now, 4), run=clock.running or "paused")
        if not isinstance(action, PressLever) or before is None:
            return
        if action.side == self._last_side:
            return  # the same player pressing again: no new ply
        self._last_side = action.side
        self._ply += 1
        reading = clock.reading(now)
        shown = (reading.left if action.side == "left" else reading.right).seconds
        color = "white" if action.side == self._white_side else "black"
        self._line(
            event="press",
            ply=self._ply,
            side=action.side,
            color=color,
            at=round(now, 4),
            before=before,
            shown=shown,
            switched=clock.running not in (action.side, None),
        )

    def received(self, commands: Sequence[cmd.Command], clock: ChessClock, now: float) -> None:
        """After the PC's bytes were executed: each SetNRun among ``commands``."""
        if not any(isinstance(command, cmd.ClockSetAndRun) for command in commands):
            return
        reading = clock.reading(now)
        run = clock.running or "paused"
        self._line(
            event="set",
            at=round(now, 4),
            left=reading.left.seconds,
            right=reading.right.seconds,
            run=run,
        )

    def _line(self, **fields: Any) -> None:
        self._write(json.dumps(fields, separators=(",", ":")) + "\n")
