"""The observations a board's log would have given live (pure): a placement after each
change, clock readings around each lever press (docs/protocol.md §6, §7.4), each with
the log's step it comes from. :mod:`daemon.game.recovery` feeds them to a tracker."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import chess

from drivers.memory import BoardMemory, LoggedPress
from drivers.observations import ClockObserved, ClockSide, PlacementObserved

__all__ = ["ClockModel", "Fed", "log_observations", "placement_before"]

#: What a log's step gives: a placement or a clock reading.
Fed = PlacementObserved | ClockObserved


@dataclass(slots=True)
class ClockModel:
    """Both sides' times and the running side, as the log's presses leave them."""

    times: dict[ClockSide, int | None] = field(default_factory=dict)
    running: ClockSide | None = None

    @classmethod
    def of(cls, reading: ClockObserved | None, start_seconds: int | None) -> ClockModel:
        if reading is None or not reading.connected:
            return cls(times={ClockSide.LEFT: start_seconds, ClockSide.RIGHT: start_seconds})
        times: dict[ClockSide, int | None] = {
            ClockSide.LEFT: reading.left_seconds,
            ClockSide.RIGHT: reading.right_seconds,
        }
        return cls(times=times, running=reading.running)

    def press(self, press: LoggedPress, at: float) -> list[ClockObserved]:
        """The readings a live board would have sent around this press (§7.4)."""
        readings = []
        for side in ClockSide:
            if self.times.get(side) is None:
                self.times[side] = press.seconds
        if self.running is not press.side:
            self.running = press.side  # its time ran before the lever went down
            readings.append(self._reading(at))
        self.times[press.side] = press.seconds
        self.running = ClockSide.RIGHT if press.side is ClockSide.LEFT else ClockSide.LEFT
        readings.append(self._reading(at))
        return readings

    def _reading(self, at: float) -> ClockObserved:
        left, right = self.times[ClockSide.LEFT], self.times[ClockSide.RIGHT]
        assert left is not None
        assert right is not None
        running = self.running or ClockSide.LEFT
        return ClockObserved(
            left_seconds=left,
            right_seconds=right,
            left_flag=False,
            right_flag=False,
            running=self.running,
            lever=running,
            connected=True,
            at=at,
        )


def log_observations(
    memory: BoardMemory, start: int, model: ClockModel, at: float
) -> Iterator[tuple[int, Fed]]:
    """``(step index, observation)`` for the steps from ``start`` on."""
    placements = dict(memory.placements())
    board = placement_before(memory, start)
    steps: Sequence[object] = memory.steps
    for index in range(start, len(steps)):
        step = steps[index]
        if isinstance(step, LoggedPress):
            for reading in model.press(step, at):
                yield index, reading
            continue
        after = placements.get(index)
        if after is None or (board is not None and after == board):
            continue
        board = after
        yield index, PlacementObserved(board=after.copy(), at=at)


def placement_before(memory: BoardMemory, start: int) -> chess.BaseBoard | None:
    """The placement standing before ``steps[start]`` (None before the first power-up)."""
    board: chess.BaseBoard | None = None
    for index, placement in memory.placements():
        if index >= start:
            break
        board = placement
    return board
