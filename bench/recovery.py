"""Restart-and-recover time: building the daemon on a 500-board journal (it replays it).

Run ``.venv/bin/python bench/recovery.py [--boards 500] [--minutes M]``.

The journal is made the way the daemon makes it, without the daemon's waiting: every
board plays a real game (``../shared/data/games``) at blitz pace (3+2, the emulator's
human thinking 0.5-5 s a move, a little noise) on the emulator's pure board and clock;
what its sensors and clock report goes through the driver's pure
:class:`~drivers.dgt.observe.SensorBoard` and :func:`~drivers.dgt.observe.clock_observation`
as in :class:`~daemon.pipeline.BoardSession` (a placement per change, a clock reading
each second while the clock runs, a link record when the board comes online). The boards'
inputs are merged in time order and run through a :class:`~daemon.round.RoundCore`;
each input is appended with the game events and decisions it caused: the records
:class:`~daemon.service.RoundService` writes, in transactions of 1,000 inputs instead
of one each. ``--minutes`` cuts every game after that much play (whole games by default,
about six minutes each).

Timed: ``Daemon.open(config, options)``, which opens the journal, replays every input through
a fresh core and publishes every board to the hub: the time from a restart to serving
again (the boards then reconnect on their own). The replayed games are checked against
the generating core's, ply for ply.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess.pgn
from common import (
    BLITZ_CLOCK,
    NOISE,
    THINK,
    Child,
    long_games,
    process_rss_kib,
    send_line,
    write_round_config,
)

from broadcast.messages import to_json_dict
from daemon.app import Daemon, DaemonOptions
from daemon.arbiter import Decision
from daemon.config import load_config
from daemon.inputs import CLOCK, LINK, PLACEMENT, clock_payload, link_payload, placement_payload
from daemon.journal import Entry, Journal
from daemon.round import RenderedGame, RoundCore
from drivers.dgt.events import BoardDump, FieldUpdated
from drivers.dgt.observe import SensorBoard, clock_observation
from drivers.emulator.clock import ChessClock
from drivers.emulator.firmware import clock_times
from drivers.emulator.physical import PhysicalBoard
from drivers.emulator.player import Action, HumanPlayer, Lift, Place, PressLever, StartClock
from drivers.observations import LinkObserved, LinkState

__all__ = ["Recovery", "board_inputs", "main", "measure", "round_inputs", "write_journal"]

#: Epoch seconds of the generated round's start.
EPOCH = 1_767_000_000.0

#: One journal input: (at, board, kind, payload).
Input = tuple[float, int, str, dict[str, Any]]


class _Table:
    """One board and its clock, reporting what the daemon's session would journal."""

    def __init__(self, number: int, at: float) -> None:
        self.number = number
        self.physical, self.sensor = PhysicalBoard(), SensorBoard()
        self.clock = ChessClock(BLITZ_CLOCK)
        self.now = at
        self._last_clock: dict[str, Any] | None = None
        self.inputs: list[Input] = []
        online = link_payload(LinkObserved(state=LinkState.ONLINE, at=at))
        self.inputs.append((at, number, LINK, online))
        dump = self.sensor.receive_event(BoardDump(squares=self.physical.fields()), at)
        assert dump is not None
        self.inputs.append((at, number, PLACEMENT, placement_payload(dump)))

    def pass_time(self, until: float) -> None:
        """The clock's readings up to ``until`` (one a second while it runs)."""
        tick = self.clock.next_change(self.now)
        while tick is not None and tick < until:
            self.read_clock(tick)
            tick = self.clock.next_change(tick)
        self.now = until

    def act(self, action: Action, at: float) -> None:
        """One hand action, then the clock reading if it changed."""
        changes = []
        if isinstance(action, Lift):
            changes = self.physical.lift(action.square)[1]
        elif isinstance(action, Place):
            changes = self.physical.place(action.square, action.piece)
        elif isinstance(action, PressLever):
            self.clock.press_lever(action.side, at)
        elif isinstance(action, StartClock):
            self.clock.start(at)
        for change in changes:
            event = FieldUpdated(field=change.field, piece=change.code)
            placement = self.sensor.receive_event(event, at)
            if placement is not None:
                self.inputs.append((at, self.number, PLACEMENT, placement_payload(placement)))
        self.read_clock(at)

    def read_clock(self, at: float) -> None:
        payload = clock_payload(clock_observation(clock_times(self.clock.reading(at)), at))
        if payload != self._last_clock:
            self._last_clock = payload
            self.inputs.append((at, self.number, CLOCK, payload))

    def drain(self) -> list[Input]:
        inputs, self.inputs = self.inputs, []
        return inputs


def board_inputs(
    number: int, game: chess.pgn.Game, *, seed: int, start: float, seconds: float | None
) -> Iterator[Input]:
    """The inputs of one board playing ``game`` from ``start``, in time order.

    Args:
        number: the board number.
        game: the game its players play (main line).
        seed: seeds the players.
        start: epoch seconds when the board comes online and its clock is started.
        seconds: stop after this much play (None: the whole game, then 10 s of clock).
    """
    table = _Table(number, start)
    player = HumanPlayer(seed=seed, speed=1.0, noise=NOISE, think=THINK)
    end = None if seconds is None else start + seconds
    for timed in player.play(game, at=start):
        if end is not None and timed.at > end:
            break
        table.pass_time(timed.at)
        table.act(timed.action, timed.at)
        yield from table.drain()
    table.pass_time(end if end is not None else table.now + 10.0)
    yield from table.drain()


def round_inputs(boards: int, seconds: float | None, *, seed: int = 1) -> Iterator[Input]:
    """Every board's inputs merged in time order; boards start within 3 s of each other."""
    games = long_games()
    streams = [
        board_inputs(
            n,
            games[(n - 1) % len(games)],
            seed=seed * 7919 + n,
            start=EPOCH + (n * 0.618) % 3.0,
            seconds=seconds,
        )
        for n in range(1, boards + 1)
    ]
    return heapq.merge(*streams, key=lambda item: (item[0], item[1]))


@dataclass(frozen=True, slots=True, kw_only=True)
class Written:
    """What :func:`write_journal` wrote."""

    inputs: int
    records: int
    plies: dict[int, int]
    seconds: float


def write_journal(path: Path, config_path: Path, inputs: Iterator[Input]) -> Written:
    """Run the inputs through a core; journal each with its events and decisions."""
    started = time.perf_counter()
    core = RoundCore(load_config(config_path))
    count = records = 0
    entries: list[Entry | Decision] = []
    with Journal(path) as journal:
        for at, board, kind, payload in inputs:
            outcome = core.apply(board, kind, payload, at)
            for number in outcome.boards:
                core.board_state(number, at)  # what the service publishes
            entries.append(Entry(board=board, kind=kind, at=at, payload=payload))
            entries += [
                Entry(board=b, kind="game." + type(e).__name__, at=e.at, payload=to_json_dict(e))
                for b, e in outcome.game_events
            ]
            entries.extend(outcome.decisions)
            count += 1
            if count % 1000 == 0:
                records += len(journal.append_many(entries))
                entries = []
        records += len(journal.append_many(entries))
    plies = {n: len(g.record.moves) for n, g in core.games.items()}
    _check_pgn(core)
    return Written(
        inputs=count, records=records, plies=plies, seconds=time.perf_counter() - started
    )


def _check_pgn(core: RoundCore) -> None:
    """The PGN the core extended move by move is the one a full export gives."""
    for number, game in core.games.items():
        state = core.board_state(number, 0.0)
        tags, movetext, fen = RenderedGame(game.record, state.result).text()
        clocks = state.pgn[len(tags) : len(state.pgn) - len(movetext)]
        if not (state.pgn.startswith(tags) and state.pgn.endswith(movetext)) or fen != state.fen:
            raise RuntimeError(f"board {number}: the PGN kept up to date is not the full export")
        if clocks.count("\n") != (0 if game.clock is None else 2):
            raise RuntimeError(f"board {number}: unexpected tags {clocks!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Recovery:
    """The figures of one restart.

    Attributes:
        boards: boards in the round.
        written: the journal that was replayed.
        journal_mib: its size on disk.
        wall_s / cpu_s: the time ``Daemon.open(...)`` took, wall clock and CPU.
        replayed: inputs the daemon replayed.
        rss_before_kib / rss_after_kib: the restarted process's RSS before and after.
    """

    boards: int
    written: Written
    journal_mib: float
    wall_s: float
    cpu_s: float
    replayed: int
    rss_before_kib: int
    rss_after_kib: int

    @property
    def plies(self) -> int:
        """Plies of every game together."""
        return sum(self.written.plies.values())

    def summary(self) -> str:
        """A few lines of text."""
        w = self.written
        grown = (self.rss_after_kib - self.rss_before_kib) / 1024
        return (
            f"journal: {self.boards} boards, {self.plies} plies, {w.inputs:,} inputs, "
            f"{w.records:,} records, {self.journal_mib:.0f} MiB (written in {w.seconds:.1f} s)\n"
            f"restart: Daemon.open(...) replayed {self.replayed:,} inputs in {self.wall_s:.2f} s "
            f"({self.cpu_s:.2f} s CPU, {self.replayed / self.wall_s:,.0f} inputs/s); "
            f"RSS {self.rss_before_kib / 1024:.0f} MiB before, +{grown:.0f} MiB after"
        )


async def _restart(args: argparse.Namespace) -> None:
    """In a fresh process: time ``Daemon.open(...)`` on the journal; report the games' plies."""
    rss = process_rss_kib(os.getpid())
    wall, cpu = time.perf_counter(), time.process_time()
    daemon = await Daemon.open(args.config, DaemonOptions(port=0))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    plies = {n: len(g.record.moves) for n, g in daemon.core.games.items()}
    after = process_rss_kib(os.getpid())
    daemon.journal.close()
    send_line(
        {
            "wall": wall,
            "cpu": cpu,
            "replayed": daemon.replayed,
            "plies": plies,
            "rss": [rss, after],
        }
    )


async def _restart_child(work: Path, config: Path) -> dict[str, Any]:
    child = await Child.start(
        "recovery.py", ["--role", "restart", "--config", str(config)], work / "restart.log"
    )
    try:
        return await child.receive(600)
    finally:
        await child.finish()


def measure(boards: int, seconds: float | None) -> Recovery:
    """Write a journal of ``boards`` boards, then time a daemon's start on it."""
    with tempfile.TemporaryDirectory(prefix="dgtcast-recovery-") as folder:
        work = Path(folder)
        ports = [str(work / f"board-{n}") for n in range(1, boards + 1)]
        config = write_round_config(work, ports)
        journal = work / "journal.db"
        written = write_journal(journal, config, round_inputs(boards, seconds))
        size = sum(os.path.getsize(p) for p in work.glob("journal.db*")) / 2**20
        restart = asyncio.run(_restart_child(work, config))
    if {int(n): p for n, p in restart["plies"].items()} != written.plies:
        raise RuntimeError("the replay did not rebuild the games that were journalled")
    return Recovery(
        boards=boards,
        written=written,
        journal_mib=size,
        wall_s=restart["wall"],
        cpu_s=restart["cpu"],
        replayed=restart["replayed"],
        rss_before_kib=restart["rss"][0],
        rss_after_kib=restart["rss"][1],
    )


def main(argv: list[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--boards", type=int, default=500)
    parser.add_argument("--minutes", type=float, help="play per board (default: whole games)")
    parser.add_argument("--role", choices=["restart"], help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role == "restart":
        asyncio.run(_restart(args))
        return 0
    seconds = None if args.minutes is None else args.minutes * 60
    print(measure(args.boards, seconds).summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
