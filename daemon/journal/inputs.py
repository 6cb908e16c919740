"""The inputs of the deterministic core, as journal records.

Everything the round's pure core acts on is one of these records: a sensed placement, a
clock reading, a link change, a battery level, a timer tick that fired, or an arbiter
command. The daemon appends each to the journal *before* acting on it; replaying them in
order rebuilds every game, clock, alert and result exactly (docs/architecture.md, "the
journal is the input log"). Here are their kinds and the payloads of the drivers'
observations; the core takes them typed (:mod:`daemon.round.inputs`), and
:mod:`daemon.round.codec` writes and reads the records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from base.fen import board_fen, board_from_fen
from daemon.journal.store import ROUND
from drivers.observations import (
    BatteryObserved,
    ClockObserved,
    ClockSide,
    LinkObserved,
    LinkState,
    PlacementObserved,
)

__all__ = [
    "ARBITER",
    "BATTERY",
    "CLOCK",
    "FLOOD",
    "INPUT_KINDS",
    "JOURNAL",
    "LINK",
    "PLACEMENT",
    "RECOVERY",
    "START",
    "TICK",
    "battery_from_payload",
    "battery_payload",
    "clock_adds_of",
    "clock_from_payload",
    "clock_lacking_of",
    "clock_payload",
    "clock_refused_of",
    "clock_set_of",
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
#: The daemon started: no e-board's link is known until it is heard; one silent for
#: ``{"silence": seconds}`` is offline (board 0).
START: Final = "start"
#: The journal could not be written, or is written again: ``{"written", "reason", "held"}``.
JOURNAL: Final = "journal"
#: Catching up from the board's memory: ``{"state": "reading"}``, then ``{"state": "read",
#: "memory": memory_payload(...)}`` or ``{"state": "failed", "reason": ...}``.
RECOVERY: Final = "recovery"
#: The e-board sends far more sensor changes than hands make (a faulty board, a piece
#: flickering on a sensor), or calmed down again: ``{"flooding": bool, "rate": float}``.
FLOOD: Final = "flood"
#: A wireless e-board reported its battery level: ``{"percent": 0..100, "charging": bool}``
#: (journalled when it changed; USB boards never report one).
BATTERY: Final = "battery"
#: Record kinds that are inputs (replayed); every other kind is a decision (audit only).
#: ``round`` (:data:`daemon.journal.store.ROUND`) is a section moving on to another round
#: (daemon/round/change.py).
INPUT_KINDS: Final = frozenset(
    {PLACEMENT, CLOCK, LINK, TICK, ARBITER, ROUND, JOURNAL, RECOVERY, START, FLOOD, BATTERY}
)


def placement_payload(observation: PlacementObserved) -> dict[str, Any]:
    """``{"fen": <board FEN as sensed>}``."""
    return {"fen": board_fen(observation.board)}


def placement_from_payload(payload: Mapping[str, Any], at: float) -> PlacementObserved:
    """The inverse of :func:`placement_payload`."""
    return PlacementObserved(board=board_from_fen(str(payload["fen"])), at=at)


def clock_payload(
    observation: ClockObserved,
    *,
    clock_adds: bool = False,
    clock_refused: bool = False,
    clock_set: bool = False,
    lacking: Mapping[ClockSide, int] | None = None,
) -> dict[str, Any]:
    """A clock reading as plain JSON; ``clock_adds``: the session found that this clock adds
    its own increments (mode 23 sections, daemon/mode23/control.py), noted as
    ``"increments": "clock"``; ``clock_refused``: the clock refused the session's settings
    (not in mode 23), noted as ``"increments": "refused"``; ``clock_set``: the session sets
    the clock to this reading (mode 23: what it lacked is on it from now on), noted as
    ``"set": true``;
    ``lacking``: the seconds per side the reading shows that the clock has not been given
    yet (owed from a gap), noted as ``"lacking": {"left": …, "right": …}``."""
    payload: dict[str, Any] = {
        "left": observation.left_seconds,
        "right": observation.right_seconds,
        "left_flag": observation.left_flag,
        "right_flag": observation.right_flag,
        "running": observation.running.value if observation.running else None,
        "lever": observation.lever.value,
        "connected": observation.connected,
    }
    if clock_adds:
        payload["increments"] = "clock"
    elif clock_refused:
        payload["increments"] = "refused"
    if clock_set:
        payload["set"] = True
    if lacking:
        payload["lacking"] = {side.value: seconds for side, seconds in lacking.items()}
    return payload


def clock_lacking_of(payload: Mapping[str, Any]) -> dict[ClockSide, int]:
    """The seconds per side a clock payload shows that the clock has not been given yet."""
    lacking = payload.get("lacking")
    if not isinstance(lacking, Mapping):
        return {}
    return {ClockSide(side): int(seconds) for side, seconds in lacking.items()}


def clock_refused_of(payload: Mapping[str, Any]) -> bool:
    """Whether a clock payload says the clock refuses the session's settings (mode 23)."""
    return payload.get("increments") == "refused"


def clock_set_of(payload: Mapping[str, Any]) -> bool:
    """Whether a clock payload says the session set the clock to this reading."""
    return payload.get("set") is True


def clock_adds_of(payload: Mapping[str, Any]) -> bool:
    """Whether a clock payload says the clock adds its own increments."""
    return payload.get("increments") == "clock"


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


def link_payload(
    observation: LinkObserved,
    reason: str = "",
    *,
    serial: str | None = None,
    port: str | None = None,
) -> dict[str, Any]:
    """``{"state": "online"|"offline", "reason": …}``, plus ``"serial"`` and ``"port"``.

    A link coming up names the e-board's serial number (read at the handshake,
    docs/protocol.md §4) and the device path it answered on.
    """
    payload: dict[str, Any] = {"state": observation.state.value, "reason": reason}
    if serial is not None:
        payload["serial"] = serial
    if port is not None:
        payload["port"] = port
    return payload


def link_from_payload(payload: Mapping[str, Any], at: float) -> LinkObserved:
    """The inverse of :func:`link_payload`."""
    return LinkObserved(state=LinkState(payload["state"]), at=at)


def battery_payload(observation: BatteryObserved) -> dict[str, Any]:
    """``{"percent": …, "charging": …}``."""
    return {"percent": observation.percent, "charging": observation.charging}


def battery_from_payload(payload: Mapping[str, Any], at: float) -> BatteryObserved:
    """The inverse of :func:`battery_payload`."""
    return BatteryObserved(
        percent=int(payload["percent"]), charging=bool(payload["charging"]), at=at
    )
