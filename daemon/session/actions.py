"""What a board session asks of its shell, and what it reads of the round (pure types).

The session core (:mod:`daemon.session.core`) never does I/O: it hands its round inputs
(:mod:`daemon.round.inputs`) to a ``record`` callable at once (the round applies them
before the next input, so what the session reads of the game is always up to date) and
returns everything else as :data:`Action` values for its shell to carry out: ask the
board's memory or the whole board again, put a marker on the line, set the clock, write
a log line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import chess

from daemon.round.board_game import ClockSetting
from daemon.round.inputs import BoardInput, FloodInput
from drivers.dgt.commands import ClockSetAndRun
from drivers.observations import ClockObserved, ClockSide

__all__ = [
    "Action",
    "AskBoard",
    "AskCaughtUp",
    "AskMemory",
    "BoardView",
    "Record",
    "Say",
    "SetClock",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class AskMemory:
    """Ask the board's memory (its log of every change and lever press). When the link
    refuses, tell the core :meth:`~daemon.session.core.SessionCore.receive_memory_refused`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AskBoard:
    """Read the whole board again (a lost field update is put right by the answer)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AskCaughtUp:
    """Put a marker on the line: its answer comes after everything the board queued
    before it; tell the core :meth:`~daemon.session.core.SessionCore.receive_caught_up`
    then."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SetClock:
    """Send the clock this command (mode 23: what the time control adds); tell the core
    :meth:`~daemon.session.core.SessionCore.receive_clock_done` when it is acknowledged
    or failed."""

    command: ClockSetAndRun


@dataclass(frozen=True, slots=True, kw_only=True)
class Say:
    """A log line (``level`` as in :mod:`logging`)."""

    level: int
    text: str


Action = AskMemory | AskBoard | AskCaughtUp | SetClock | Say

#: Journals and applies one round input at once.
Record = Callable[[BoardInput | FloodInput], None]


class BoardView(Protocol):
    """What a session reads of its board's game in the round (daemon/session/view.py)."""

    def memory_needed(self, placement: chess.BaseBoard) -> bool:
        """Whether a board coming online showing ``placement`` needs its memory read."""

    def last_reading(self) -> ClockObserved | None:
        """The board's last clock reading in the round (before a reconnection)."""

    def replayed_reading(self) -> ClockObserved | None:
        """The clock reading the game took last, a replayed memory's included (None:
        none, or none since a line searched for a gap)."""

    def move_number(self, side: ClockSide) -> int | None:
        """The move a press on ``side`` completes (daemon/mode23/control.py)."""

    def moving_side(self) -> ClockSide | None:
        """The side whose move the game holds pending, not completed by a press yet."""

    def clock_adds(self) -> bool:
        """The board's memory showed a clock that adds its own time."""

    def clock_owed(self) -> Mapping[ClockSide, int]:
        """What the clock lacks after a gap replayed from the memory (mode 23)."""

    def cut_setting(self) -> ClockSetting | None:
        """Mode 23: the last SETNRUN, when the link went down before a reading of the
        clock showed whether it took it (the next reading tells)."""

    def unmatched_since(self) -> float | None:
        """Since when the sensed placement matches nothing of a game under way (None:
        it matches, or no game is under way)."""

    def unpressed_since(self) -> float | None:
        """Mode 23: when the first move was made with no lever press read while the clock
        ran, since the memory was last asked (None: no such move)."""
