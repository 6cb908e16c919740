"""The inputs of the deterministic core, as journal records.

Everything the round's pure core acts on is one of these records: a sensed placement, a
clock reading, a link change, a timer tick that fired, or an arbiter command. The daemon
appends each to the journal *before* acting on it; replaying them in order rebuilds every
game, clock, alert and result exactly (docs/architecture.md, "the journal is the input log").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import chess

from daemon.game.observations import (
    ClockObserved,
    ClockSide,
    LinkObserved,
    LinkState,
    PlacementObserved,
)

__all__ = [
    "ARBITER",
    "CLOCK",
    "INPUT_KINDS",
    "LINK",
    "PLACEMENT",
    "TICK",
    "clock_from_payload",
    "clock_payload",
    "link_from_payload",
    "link_payload",
    "placement_from_payload",
    "placement_payload",
]

PLACEMENT: Final = "placement"
CLOCK: Final = "clock"
LINK: Final = "link"
TICK: Final = "tick"
ARBITER: Final = "arbiter"
#: Record kinds that are inputs (replayed); every other kind is a decision (audit only).
INPUT_KINDS: Final = frozenset({PLACEMENT, CLOCK, LINK, TICK, ARBITER})


def placement_payload(observation: PlacementObserved) -> dict[str, Any]:
    """``{"fen": <board FEN as sensed>}``."""
    return {"fen": observation.board.board_fen()}


def placement_from_payload(payload: Mapping[str, Any], at: float) -> PlacementObserved:
    """The inverse of :func:`placement_payload`."""
    return PlacementObserved(board=chess.BaseBoard(str(payload["fen"])), at=at)


def clock_payload(observation: ClockObserved) -> dict[str, Any]:
    """A clock reading as plain JSON."""
    return {
        "left": observation.left_seconds,
        "right": observation.right_seconds,
        "left_flag": observation.left_flag,
        "right_flag": observation.right_flag,
        "running": observation.running.value if observation.running else None,
        "lever": observation.lever.value,
        "connected": observation.connected,
    }


def clock_from_payload(payload: Mapping[str, Any], at: float) -> ClockObserved:
    """The inverse of :func:`clock_payload`."""
    running = payload["running"]
    return ClockObserved(
        left_seconds=int(payload["left"]),
        right_seconds=int(payload["right"]),
        left_flag=bool(payload["left_flag"]),
        right_flag=bool(payload["right_flag"]),
        running=ClockSide(running) if running else None,
        lever=ClockSide(payload["lever"]),
        connected=bool(payload["connected"]),
        at=at,
    )


def link_payload(observation: LinkObserved, reason: str = "") -> dict[str, Any]:
    """``{"state": "online"|"offline", "reason": …}``."""
    return {"state": observation.state.value, "reason": reason}


def link_from_payload(payload: Mapping[str, Any], at: float) -> LinkObserved:
    """The inverse of :func:`link_payload`."""
    return LinkObserved(state=LinkState(payload["state"]), at=at)
