"""Game reconstruction cost: µs per sensor event and per move, on one core.

Run ``.venv/bin/python bench/reconstruction.py [--rounds R] [--seeds S]``.

Two kinds of input, turned into observations before any timing starts:

* the three real recordings (``../shared/data/dgt-recordings`` or ``$DGTCAST_SHARED``)
  through the DGT parser and the driver's sensor board, a quarter second per message;
* the real games of ``../shared/data/games`` played by the emulator's noisy human
  (pieces slid, adjusted, knocked over, captures in either order, S seeds per game) on
  the emulated board and clock, 90 min + 30 s.

Each observation is handed to a fresh :class:`GameTracker` and timed on its own (CPU time
of this process, best of R rounds per input): placements and clock readings separately.
"Per move" is all the tracker's time for an input divided by its plies.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn

from daemon.game.events import MoveMade
from daemon.game.tracker import GameTracker
from drivers.dgt.events import BoardDump, ClockTimes, FieldUpdated
from drivers.dgt.observe import SensorBoard, clock_observation
from drivers.dgt.protocol import DgtProtocol
from drivers.emulator.clock import ChessClock, ClockSettings
from drivers.emulator.firmware import clock_times
from drivers.emulator.physical import PhysicalBoard, SensorChange
from drivers.emulator.player import Action, HumanPlayer, Lift, Place, PressLever, StartClock
from drivers.observations import ClockObserved, PlacementObserved

__all__ = ["main", "played", "recorded", "run"]

ROOT = Path(__file__).resolve().parent.parent
Observation = PlacementObserved | ClockObserved


def _shared() -> Path:
    return Path(os.environ.get("DGTCAST_SHARED", ROOT.parent / "shared"))


def recorded(path: Path, dt: float = 0.25) -> list[Observation]:
    """The observations of one real recording, message ``i`` at ``i * dt``."""
    protocol, sensor = DgtProtocol(), SensorBoard()
    observations: list[Observation] = []
    for index, line in enumerate(path.read_text().split()):
        protocol.receive_data(base64.b64decode(line))
        for event in protocol.events_received():
            placement = sensor.receive_event(event, index * dt)
            if placement is not None:
                observations.append(placement)
            if isinstance(event, ClockTimes):
                observations.append(clock_observation(event, index * dt))
    return observations


class _Table:
    """The emulated board and clock, writing down what the driver would observe."""

    def __init__(self) -> None:
        self.physical, self.sensor = PhysicalBoard(), SensorBoard()
        self.clock = ChessClock(ClockSettings(base_seconds=5400, increment_seconds=30))
        self.observations: list[Observation] = []
        self._reading: object = None
        self.now = 0.0
        self._sense(self.sensor.receive_event(BoardDump(squares=self.physical.fields()), 0.0))

    def pass_time(self, until: float) -> None:
        tick = self.clock.next_change(self.now)
        while tick is not None and tick < until:
            self.read_clock(tick)
            tick = self.clock.next_change(tick)
        self.now = until

    def act(self, action: Action, now: float) -> None:
        changes: list[SensorChange] = []
        if isinstance(action, Lift):
            changes = self.physical.lift(action.square)[1]
        elif isinstance(action, Place):
            changes = self.physical.place(action.square, action.piece)
        elif isinstance(action, PressLever):
            self.clock.press_lever(action.side, now)
        elif isinstance(action, StartClock):
            self.clock.start(now)
        for change in changes:
            event = FieldUpdated(field=change.field, piece=change.code)
            self._sense(self.sensor.receive_event(event, now))
        self.read_clock(now)

    def read_clock(self, now: float) -> None:
        reading = self.clock.reading(now)
        if reading != self._reading:
            self._reading = reading
            self.observations.append(clock_observation(clock_times(reading), now))

    def _sense(self, placement: PlacementObserved | None) -> None:
        if placement is not None:
            self.observations.append(placement)


def played(game: chess.pgn.Game, seed: int) -> list[Observation]:
    """The observations of ``game`` played by a noisy emulated human on a 90+30 clock."""
    table = _Table()
    player = HumanPlayer(seed=seed, noise=0.3, think=(2.0, 30.0))
    for timed in player.play(game, at=1.0):
        table.pass_time(timed.at)
        table.act(timed.action, timed.at)
    return table.observations


@dataclass(slots=True)
class Cost:
    """CPU time spent by the tracker on one input, by kind of observation."""

    placements: int = 0
    placement_ns: int = 0
    clocks: int = 0
    clock_ns: int = 0
    plies: int = 0

    @property
    def total_ns(self) -> int:
        return self.placement_ns + self.clock_ns


def run(observations: list[Observation]) -> Cost:
    """Feed a fresh tracker, timing every call; returns the cost and the plies made."""
    tracker, cost = GameTracker(), Cost()
    clock = time.process_time_ns
    for observation in observations:
        if isinstance(observation, PlacementObserved):
            start = clock()
            tracker.receive_placement(observation)
            cost.placement_ns += clock() - start
            cost.placements += 1
        else:
            start = clock()
            tracker.receive_clock(observation)
            cost.clock_ns += clock() - start
            cost.clocks += 1
        cost.plies += sum(isinstance(e, MoveMade) for e in tracker.events_received())
    tracker.receive_tick(observations[-1].at + 600.0)
    cost.plies += sum(isinstance(e, MoveMade) for e in tracker.events_received())
    return cost


def best(observations: list[Observation], rounds: int) -> Cost:
    """The cheapest of ``rounds`` runs."""
    return min((run(observations) for _ in range(rounds)), key=lambda cost: cost.total_ns)


def _row(label: str, cost: Cost) -> str:
    per_placement = cost.placement_ns / max(cost.placements, 1) / 1e3
    per_clock = cost.clock_ns / max(cost.clocks, 1) / 1e3
    per_event = cost.total_ns / max(cost.placements + cost.clocks, 1) / 1e3
    per_move = cost.total_ns / max(cost.plies, 1) / 1e3
    return (
        f"  {label:<34} {cost.plies:>5} {cost.placements:>6} {cost.clocks:>6} "
        f"{per_placement:>9.1f} {per_clock:>9.1f} {per_event:>9.1f} {per_move:>9.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    """Print the figures as a small table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="best of this many runs")
    parser.add_argument("--seeds", type=int, default=2, help="noisy plays per real game")
    args = parser.parse_args(argv)
    inputs: list[tuple[str, list[Observation]]] = []
    for path in sorted((_shared() / "data" / "dgt-recordings").glob("*.inbytes")):
        inputs.append((f"recording {path.stem}", recorded(path)))
    for path in sorted((_shared() / "data" / "games").glob("*.pgn")):
        with path.open() as handle:
            game = chess.pgn.read_game(handle)
        assert game is not None
        for seed in range(args.seeds):
            inputs.append((f"{path.stem[:24]} #{seed}", played(game, seed)))
    print("Game reconstruction, one core, CPU time (µs)")
    print(
        f"  {'input':<34} {'plies':>5} {'places':>6} {'clocks':>6} "
        f"{'/place':>9} {'/clock':>9} {'/event':>9} {'/move':>9}"
    )
    total = Cost()
    for label, observations in inputs:
        cost = best(observations, args.rounds)
        print(_row(label, cost))
        for name in ("placements", "placement_ns", "clocks", "clock_ns", "plies"):
            setattr(total, name, getattr(total, name) + getattr(cost, name))
    print(_row("all inputs", total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
