"""A DGT board's events as the vendor-neutral observations a board session takes (pure).

One :class:`DgtObserver` per connection: the DGT-specific half of a board session
(daemon/session/core.py knows only these observations, so another board make is a
driver, not a change of the session).
"""

from __future__ import annotations

from drivers.dgt.events import (
    BatteryStatus,
    BoardDump,
    ClockTimes,
    EEMoves,
    Event,
    FieldUpdated,
    Version,
)
from drivers.dgt.memory import board_memory
from drivers.dgt.observe import SensorBoard, battery_observation, clock_observation
from drivers.memory import MemoryObserved
from drivers.observations import (
    BatteryObserved,
    BoardRead,
    CaughtUp,
    ClockObserved,
    PlacementObserved,
)

__all__ = ["DgtObserver", "Observed"]


#: What a DGT board's events become for a board session (daemon/session/core.py).
Observed = (
    PlacementObserved | BoardRead | ClockObserved | BatteryObserved | MemoryObserved | CaughtUp
)


class DgtObserver:
    """One connection's DGT events as vendor-neutral observations (a new one per link).

    A board dump becomes a :class:`BoardRead` (when it changed the sensed board, or is the
    connection's first), a field update a :class:`PlacementObserved` (when it changed it),
    BWTIME a :class:`ClockObserved`, BATTERY_STATUS a :class:`BatteryObserved`, EE_MOVES a
    :class:`MemoryObserved` (§6), and VERSION, which only the handshake and the marker
    after the memory ask (``DgtDevice.request_marker``), :class:`CaughtUp`.
    """

    def __init__(self) -> None:
        self.sensors = SensorBoard()

    def receive_event(self, event: Event, at: float) -> Observed | None:
        """The observation ``event`` (arrived at ``at``) makes, or None."""
        if isinstance(event, BoardDump | FieldUpdated):
            placement = self.sensors.receive_event(event, at)
            if placement is None or isinstance(event, FieldUpdated):
                return placement
            return BoardRead(placement=placement)
        if isinstance(event, ClockTimes):
            return clock_observation(event, at)
        if isinstance(event, BatteryStatus):
            return battery_observation(event, at)
        if isinstance(event, EEMoves):
            return MemoryObserved(memory=board_memory(event.records), at=at)
        if isinstance(event, Version):
            return CaughtUp(at=at)
        return None
