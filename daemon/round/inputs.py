"""The round core's inputs, one frozen dataclass per journal kind (pure types).

Everything :meth:`~daemon.round.core.RoundCore.apply` acts on is a :data:`RoundInput`: the
board sessions, the round service and the round keeper make them, the core dispatches on
their type (``assert_never``: mypy names a kind left out). Each class names its journal
kind (``KIND``, :mod:`daemon.journal.inputs`); :mod:`daemon.round.codec` turns them into
the journal's records and back, and is the only place that reads or writes their payloads.
Inputs of the whole round (a tick, a start, the journal, a round change) are on board 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import chess

from broadcast.feed.commands import ArbiterCommand
from daemon.journal.inputs import (
    ARBITER,
    BATTERY,
    CLOCK,
    FLOOD,
    JOURNAL,
    LINK,
    PLACEMENT,
    RECOVERY,
    START,
    TICK,
)
from daemon.journal.store import EVENT_BOARD, ROUND
from daemon.round.change import RoundChange
from daemon.round.link_silence import BOARD_SILENCE
from drivers.memory import BoardMemory
from drivers.observations import (
    BatteryObserved,
    ClockObserved,
    ClockSide,
    LinkObserved,
    PlacementObserved,
)

__all__ = [
    "BOARD_KINDS",
    "ArbiterInput",
    "BatteryInput",
    "BoardInput",
    "ClockInput",
    "FloodInput",
    "JournalInput",
    "LinkInput",
    "PlacementInput",
    "RecoveryInput",
    "RoundChangeInput",
    "RoundInput",
    "StartInput",
    "TickInput",
]


@dataclass(frozen=True, slots=True)
class PlacementInput:
    """The placement a board's sensors show (sent on by its session)."""

    KIND: ClassVar[str] = PLACEMENT
    board: int
    sensed: PlacementObserved

    @property
    def at(self) -> float:
        return self.sensed.at


@dataclass(frozen=True, slots=True)
class ClockInput:
    """A clock reading, and what the session knows of the clock's increments.

    Attributes:
        increments: ``"clock"``: the clock adds its own (mode 23 sections,
            daemon/mode23/control.py); ``"refused"``: it refused the session's settings.
        clock_set: the session sets the clock to this reading (what it lacked is on it).
        lacking: the seconds per side the reading shows that the clock has not been
            given yet (owed from a gap).
    """

    KIND: ClassVar[str] = CLOCK
    board: int
    reading: ClockObserved
    increments: Literal["clock", "refused"] | None = None
    clock_set: bool = False
    lacking: Mapping[ClockSide, int] = field(default_factory=dict)

    @property
    def at(self) -> float:
        return self.reading.at

    def repeats(self, other: ClockInput | None) -> bool:
        """Whether ``other`` says the same but for its time (its journal payload is this
        one's: nothing new to journal)."""
        if other is None:
            return False
        new, old = self.reading, other.reading
        return (
            new.left_seconds == old.left_seconds
            and new.right_seconds == old.right_seconds
            and new.left_flag == old.left_flag
            and new.right_flag == old.right_flag
            and new.running is old.running
            and new.lever is old.lever
            and new.connected == old.connected
            and self.increments == other.increments
            and self.clock_set == other.clock_set
            and self.lacking == other.lacking
        )


@dataclass(frozen=True, slots=True)
class LinkInput:
    """A board's link came up (its ``serial`` and ``port``) or went down (``reason``)."""

    KIND: ClassVar[str] = LINK
    board: int
    link: LinkObserved
    reason: str = ""
    serial: str | None = None
    port: str | None = None

    @property
    def at(self) -> float:
        return self.link.at


@dataclass(frozen=True, slots=True)
class BatteryInput:
    """A wireless board's battery level (journalled when it changed)."""

    KIND: ClassVar[str] = BATTERY
    board: int
    battery: BatteryObserved

    @property
    def at(self) -> float:
        return self.battery.at


@dataclass(frozen=True, slots=True, kw_only=True)
class RecoveryInput:
    """Catching up from the board's memory: asked (``reading``), then ``read`` or ``failed``.

    Attributes:
        memory: the board's log (``read``).
        heal: the log was read again to heal the board; its presses were answered live.
        reason: why it failed (``failed``).
        placement: what the sensors showed when the read ended, for the gap search
            (None: not sent on, the link went).
        running: the side whose clock ran then (with ``placement``).
        came: the clock reading held while the memory was read, with the time it came
            (it tells whether the clock took a SETNRUN the link cut, where the log cannot).
    """

    KIND: ClassVar[str] = RECOVERY
    board: int
    at: float
    state: Literal["reading", "read", "failed"]
    memory: BoardMemory | None = None
    heal: bool = False
    reason: str = ""
    placement: chess.BaseBoard | None = None
    running: ClockSide | None = None
    came: ClockObserved | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FloodInput:
    """The board sends far more sensor changes than hands make, or calmed down again."""

    KIND: ClassVar[str] = FLOOD
    board: int
    at: float
    flooding: bool
    rate: float


@dataclass(frozen=True, slots=True, kw_only=True)
class TickInput:
    """A timer of the core fell due (:meth:`~daemon.round.core.RoundCore.next_deadline`)."""

    KIND: ClassVar[str] = TICK
    board: ClassVar[int] = EVENT_BOARD
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class StartInput:
    """The daemon started: no e-board's link is known until it is heard; one silent for
    ``silence`` seconds is offline."""

    KIND: ClassVar[str] = START
    board: ClassVar[int] = EVENT_BOARD
    at: float
    silence: float = BOARD_SILENCE


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalInput:
    """The journal could not be written (``held`` records wait in memory), or is again."""

    KIND: ClassVar[str] = JOURNAL
    board: ClassVar[int] = EVENT_BOARD
    at: float
    written: bool
    reason: str
    held: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ArbiterInput:
    """An arbiter's command (on its board, or board 0 for the event)."""

    KIND: ClassVar[str] = ARBITER
    at: float
    command: ArbiterCommand

    @property
    def board(self) -> int:
        board = getattr(self.command, "board", None)
        return board if isinstance(board, int) else EVENT_BOARD


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundChangeInput:
    """A section moves on to another round (daemon/round/change.py)."""

    KIND: ClassVar[str] = ROUND
    board: ClassVar[int] = EVENT_BOARD
    at: float
    change: RoundChange


#: The inputs of one board's e-board (its session sends them).
BoardInput = PlacementInput | ClockInput | LinkInput | BatteryInput | RecoveryInput
#: Their journal kinds: refused on a board without e-board, whatever they hold.
BOARD_KINDS = frozenset((PLACEMENT, CLOCK, LINK, BATTERY, RECOVERY))

RoundInput = (
    BoardInput
    | FloodInput
    | TickInput
    | StartInput
    | JournalInput
    | ArbiterInput
    | RoundChangeInput
)
