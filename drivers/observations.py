"""Vendor-neutral observations: what any e-board driver reports to the game layer.

They live beside the drivers (the lowest layer) so that every driver and the daemon may
import them without any import pointing upwards.

The game layer knows chess, not DGT. A driver turns its wire messages into these
observations; another board make (Millennium, Certabo, Chessnut) only has to do the same.

* Squares are python-chess squares *as the sensor numbers them*, assuming the board
  stands in the normal orientation (a1 at White's left). A board set up rotated by 180°
  reports every square as ``square ^ 63``; the tracker detects that from the start
  position and undoes it (docs/protocol.md §5.2).
* Clock sides are the clock's physical ``left`` and ``right``; which one is White is
  learned by the game layer (docs/protocol.md §7.2, "Which clock side is White").
* ``at`` is the time of arrival in seconds (monotonic or journal time), passed in by the
  caller: the game layer never reads a clock itself.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import chess

__all__ = [
    "BatteryObserved",
    "BoardRead",
    "CaughtUp",
    "ClockObserved",
    "ClockSide",
    "LinkObserved",
    "LinkState",
    "Observation",
    "PlacementObserved",
]


class ClockSide(enum.Enum):
    """A physical side of the clock, seen from the front."""

    LEFT = "left"
    RIGHT = "right"


class LinkState(enum.Enum):
    """Whether the board (and its clock) can be heard at all."""

    ONLINE = "online"
    OFFLINE = "offline"


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacementObserved:
    """The whole piece placement the sensors see now (after any change)."""

    board: chess.BaseBoard
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardRead:
    """The board was read whole (a DGT board dump): the placement it showed then.

    The first whole read of a connection tells whether the game missed anything; later
    ones put right an update lost on the way.
    """

    placement: PlacementObserved


@dataclass(frozen=True, slots=True, kw_only=True)
class CaughtUp:
    """Everything the board queued on the line before a marker was asked has arrived
    (a DGT board answers the marker, a version request, after what it queued)."""

    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockObserved:
    """One clock reading: remaining time of both sides, flags and which side runs.

    Attributes:
        left_seconds / right_seconds: remaining time shown on each side, whole seconds.
        left_flag / right_flag: the flag has fallen on that side and the clock is
            blocked at zero (docs/protocol.md §7.2, bit 0x10).
        running: the side whose time counts down, or None when the clock is stopped.
        lever: the side whose lever is up (that side's time runs when started).
        connected: False when no clock is cabled to the board (reading invalid).
    """

    left_seconds: int
    right_seconds: int
    left_flag: bool
    right_flag: bool
    running: ClockSide | None
    lever: ClockSide
    connected: bool
    at: float

    def __post_init__(self) -> None:
        if self.left_seconds < 0 or self.right_seconds < 0:
            raise ValueError("clock times cannot be negative")


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkObserved:
    """The link to the board went up or down."""

    state: LinkState
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class BatteryObserved:
    """The e-board's battery level, as a wireless board reports it.

    Board health for the arbiter and the broadcast, not an input of the game: it is not
    an :data:`Observation`.

    Attributes:
        percent: remaining capacity, 0..100.
        charging: the board is on its charger.
    """

    percent: int
    charging: bool
    at: float

    def __post_init__(self) -> None:
        if not 0 <= self.percent <= 100:
            raise ValueError(f"a battery level is 0..100 %, not {self.percent}")


Observation = PlacementObserved | ClockObserved | LinkObserved
