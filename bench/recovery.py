"""Restart-and-recover time: building the daemon on a 500-board journal (it replays it).

Run ``.venv/bin/python bench/recovery.py [--boards 500] [--minutes M] [--classical]
[--no-snapshots] [--keep DIR]``.

The journal is made the way the daemon makes it, without the daemon's waiting: every
board plays a real game (``../shared/data/games``) at blitz pace (3+2, the emulator's
human thinking 0.5-5 s a move, a little noise) on the emulator's pure board and clock;
what its sensors and clock report goes through the driver's pure
:class:`~drivers.dgt.observe.SensorBoard` and :func:`~drivers.dgt.observe.clock_observation`
as in :class:`~daemon.shell.pipeline.BoardSession` (a placement per change, a clock reading
each second while the clock runs, a link record when the board comes online). The boards'
inputs are merged in time order and run through a :class:`~daemon.round.core.RoundCore`;
each input is appended with the game events and decisions it caused: the records
:class:`~daemon.shell.service.RoundService` writes, in transactions of 1,000 inputs instead
of one each. ``--minutes`` cuts every game after that much play (whole games by default,
about six minutes each).

``--classical``: the boards play 90+30 games thought out to last the whole ``--minutes``
(default 300: the end of a five-hour round), so every board's clock is journalled every
second until its flag falls (about 3.5 hours in; the players then move on without a
clock). The writer renders the boards and adds a snapshot as the daemon's service does
(:class:`~daemon.round.snapshot.SnapshotPolicy`, by the inputs' times); the blitz journal gets
snapshots too unless ``--no-snapshots`` (which gives the replay of the whole journal, the
figure before snapshots). The time each snapshot takes to make and write is reported: the
daemon's loop pauses that long. A second restart follows on the same journal with a
snapshot at its last record: the restart right after a snapshot.

Timed: ``Daemon.open(config, options)``, which opens the journal, loads the newest
snapshot, replays the inputs after it through the core and publishes every board to the
hub: the time from a restart to serving again (the boards then reconnect on their own).
The restarted games are checked against the generating core's: plies, clocks and alert ids.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import heapq
import os
import sqlite3
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

from broadcast.feed.messages import to_json_dict
from daemon.arbiter.decisions import Decision
from daemon.config.model import Config, load_config
from daemon.journal.identity import identity_of
from daemon.journal.inputs import (
    CLOCK,
    LINK,
    PLACEMENT,
    clock_payload,
    link_payload,
    placement_payload,
)
from daemon.journal.records import Entry
from daemon.journal.store import EVENT_BOARD, Journal
from daemon.round.codec import input_of
from daemon.round.core import RoundCore
from daemon.round.rendered_game import RenderedGame
from daemon.round.snapshot import SnapshotPolicy, dump_state, fingerprint
from daemon.shell.app import Daemon, DaemonOptions
from daemon.shell.startup import STARTED
from drivers.dgt.events import BoardDump, FieldUpdated
from drivers.dgt.observe import SensorBoard, clock_observation
from drivers.emulator.clock import ChessClock, ClockSettings
from drivers.emulator.firmware import clock_times
from drivers.emulator.physical import PhysicalBoard
from drivers.emulator.player import Action, HumanPlayer, Lift, Place, PressLever, StartClock
from drivers.observations import LinkObserved, LinkState

__all__ = ["Recovery", "board_inputs", "main", "measure", "round_inputs", "write_journal"]

#: Epoch seconds of the generated round's start.
EPOCH = 1_767_000_000.0

#: One journal input: (at, board, kind, payload).
Input = tuple[float, int, str, dict[str, Any]]

#: The classical round's time control.
CLASSICAL = "90+30"


class _Table:
    """One board and its clock, reporting what the daemon's session would journal."""

    def __init__(self, number: int, at: float, clock: ClockSettings = BLITZ_CLOCK) -> None:
        self.number = number
        self.physical, self.sensor = PhysicalBoard(), SensorBoard()
        self.clock = ChessClock(clock)
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
    number: int,
    game: chess.pgn.Game,
    *,
    seed: int,
    start: float,
    seconds: float | None,
    classical: bool = False,
) -> Iterator[Input]:
    """The inputs of one board playing ``game`` from ``start``, in time order.

    Args:
        number: the board number.
        game: the game its players play (main line).
        seed: seeds the players.
        start: epoch seconds when the board comes online and its clock is started.
        seconds: stop after this much play (None: the whole game, then 10 s of clock).
        classical: 90+30, each move thought about long enough for the game to last
            ``seconds`` (then required).
    """
    think, clock = THINK, BLITZ_CLOCK
    if classical:
        assert seconds is not None
        mean = 1.1 * seconds / sum(1 for _ in game.mainline_moves())
        think, clock = (0.3 * mean, 1.7 * mean), ClockSettings.from_text(CLASSICAL)
    table = _Table(number, start, clock)
    player = HumanPlayer(seed=seed, speed=1.0, noise=NOISE, think=think)
    end = None if seconds is None else start + seconds
    for timed in player.play(game, at=start):
        if end is not None and timed.at > end:
            break
        table.pass_time(timed.at)
        table.act(timed.action, timed.at)
        yield from table.drain()
    table.pass_time(end if end is not None else table.now + 10.0)
    yield from table.drain()


def round_inputs(
    boards: int, seconds: float | None, *, seed: int = 1, classical: bool = False
) -> Iterator[Input]:
    """Every board's inputs merged in time order; boards start within 3 s of each other."""
    games = long_games()
    streams = [
        board_inputs(
            n,
            games[(n - 1) % len(games)],
            seed=seed * 7919 + n,
            start=EPOCH + (n * 0.618) % 3.0,
            seconds=seconds,
            classical=classical,
        )
        for n in range(1, boards + 1)
    ]
    return heapq.merge(*streams, key=lambda item: (item[0], item[1]))


@dataclass(frozen=True, slots=True)
class Tail:
    """The costliest stretch between two snapshots: a crash just before the second one
    leaves it all to replay."""

    cost: float  # seconds of the core's time it took live
    inputs: int
    seq: int  # the first snapshot's record
    state: bytes  # and its state
    end: int  # the last record of the stretch
    seen: dict[str, Any]  # the round at its end


@dataclass(frozen=True, slots=True, kw_only=True)
class Written:
    """What :func:`write_journal` wrote."""

    inputs: int
    records: int
    plies: dict[int, int]
    seconds: float
    seen: dict[str, Any]
    snapshot_seconds: list[float]
    tail: int  # inputs after the last snapshot
    final: bytes  # the state after the last input (b"": no snapshots)
    fingerprint: str
    worst: Tail | None


def round_config(config_path: Path) -> Config:
    """The configuration as the daemon loads it after its first start, at :data:`EPOCH`."""
    return load_config(config_path, now=dt.datetime.fromtimestamp(EPOCH).astimezone())


def write_journal(
    path: Path,
    config_path: Path,
    inputs: Iterator[Input],
    *,
    snapshots: SnapshotPolicy | None = None,
    publish_each: bool = True,
) -> Written:
    """Run the inputs through a core; journal each with its events and decisions.

    Args:
        snapshots: add snapshots as the daemon's service does (None: none).
        publish_each: render the boards an input changed, as the service publishes them
            (False: only before each snapshot, which leaves the same rendered games; the
            core's time that decides snapshots then leaves the rendering out, so they
            come a little later than the daemon's).
    """
    started = time.perf_counter()
    config = round_config(config_path)
    core = RoundCore(config)
    print_ = fingerprint(config, None)
    count = records = since = 0
    last, cost = EPOCH, 0.0
    made: list[float] = []
    base: tuple[int, bytes] = (0, b"")  # the last snapshot: its record and its state
    worst: Tail | None = None
    entries: list[Entry | Decision] = []
    with Journal(path) as journal:
        journal.stamp_identity(identity_of(config))
        journal.append(EVENT_BOARD, STARTED, {"at": EPOCH}, EPOCH)
        for at, board, kind, payload in inputs:
            began = time.perf_counter()
            outcome = core.apply(input_of(board, kind, payload, at))
            if publish_each:
                for number in outcome.boards:
                    core.board_state(number, at)  # what the service publishes
            cost += time.perf_counter() - began
            entries.append(Entry(board=board, kind=kind, at=at, payload=payload))
            entries += [
                Entry(board=b, kind="game." + type(e).__name__, at=e.at, payload=to_json_dict(e))
                for b, e in outcome.game_events
            ]
            entries.extend(outcome.decisions)
            count += 1
            since += 1
            if count % 1000 == 0:
                records += len(journal.append_many(entries))
                entries = []
            if snapshots is not None and snapshots.due(since, at - last, cost):
                records += len(journal.append_many(entries))
                if base[0] and (worst is None or cost > worst.cost):  # a crash just now
                    end = journal.last_seq
                    worst = Tail(cost, since, base[0], base[1], end, _seen(core))
                entries, since, last, cost = [], 0, at, 0.0
                pause, state = _snapshot(journal, core, print_, at)
                made.append(pause)
                base = (journal.last_seq, state)
        records += len(journal.append_many(entries))
    plies = {n: len(g.record.moves) for n, g in core.games.items()}
    _check_pgn(core)
    for number in core.games:
        core.board_state(number, last)  # as the service keeps them
    return Written(
        inputs=count,
        records=records,
        plies=plies,
        seconds=time.perf_counter() - started,
        seen=_seen(core),
        snapshot_seconds=made,
        tail=since,
        final=dump_state(core) if snapshots is not None else b"",
        fingerprint=print_,
        worst=worst,
    )


def _snapshot(journal: Journal, core: RoundCore, print_: str, at: float) -> tuple[float, bytes]:
    """Add a snapshot as the service does; returns the seconds the daemon pauses for it
    and the state."""
    for number in core.games:
        core.board_state(number, at)  # the service keeps every board rendered as it publishes
    began = time.perf_counter()
    state = dump_state(core)
    journal.write_snapshot(journal.last_seq, at, print_, state)
    return time.perf_counter() - began, state


def _seen(core: RoundCore) -> dict[str, Any]:
    """What a restart must give back: plies, clocks and alert ids of every board."""
    clocks = {
        str(n): None if g.clock is None else [g.clock.white, g.clock.black]
        for n, g in core.games.items()
    }
    alerts = [[a.id, a.kind, a.board] for a in core.engine.alerts]
    plies = {str(n): len(g.record.moves) for n, g in core.games.items()}
    return {"plies": plies, "clocks": clocks, "alerts": alerts}


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
        snapshot_seq: the record the snapshot it loaded ends at (0: none).
        rss_before_kib / rss_after_kib: the restarted process's RSS before and after.
        quick_wall_s / quick_cpu_s: the same restart with a snapshot at the last record
            (None: no snapshots).
        worst_wall_s / worst_cpu_s: a restart with the costliest tail the journal had
            (cut at the end of it; None: fewer than two snapshots).
    """

    boards: int
    written: Written
    journal_mib: float
    wall_s: float
    cpu_s: float
    replayed: int
    snapshot_seq: int
    rss_before_kib: int
    rss_after_kib: int
    quick_wall_s: float | None = None
    quick_cpu_s: float | None = None
    worst_wall_s: float | None = None
    worst_cpu_s: float | None = None

    @property
    def plies(self) -> int:
        """Plies of every game together."""
        return sum(self.written.plies.values())

    def summary(self) -> str:
        """A few lines of text."""
        w = self.written
        grown = (self.rss_after_kib - self.rss_before_kib) / 1024
        made = w.snapshot_seconds
        snapshots = (
            f"{len(made)} snapshots made, each pausing {sum(made) / len(made):.2f} s"
            f" (max {max(made):.2f})"
            if made
            else "no snapshots"
        )
        start = f"after the snapshot at record {self.snapshot_seq:,}" if self.snapshot_seq else ""
        quick = (
            ""
            if self.quick_wall_s is None
            else f"\nrestart right after a snapshot: {self.quick_wall_s:.2f} s"
            f" ({self.quick_cpu_s or 0.0:.2f} s CPU); games, clocks and alert ids as written"
        )
        tail = self.written.worst
        if tail is not None and self.worst_wall_s is not None:
            quick += (
                f"\nrestart with the costliest tail ({tail.inputs:,} inputs after record"
                f" {tail.seq:,} that took {tail.cost:.2f} s of the core's time live):"
                f" {self.worst_wall_s:.2f} s ({self.worst_cpu_s or 0.0:.2f} s CPU);"
                " games, clocks and alert ids as at its end"
            )
        return (
            f"journal: {self.boards} boards, {self.plies} plies, {w.inputs:,} inputs, "
            f"{w.records:,} records, {self.journal_mib:.0f} MiB (written in {w.seconds:.1f} s);"
            f" {snapshots}\n"
            f"restart: Daemon.open(...) replayed {self.replayed:,} inputs {start} in"
            f" {self.wall_s:.2f} s ({self.cpu_s:.2f} s CPU); RSS"
            f" {self.rss_before_kib / 1024:.0f} MiB before, +{grown:.0f} MiB after;"
            " games, clocks and alert ids as written" + quick
        )


async def _restart(args: argparse.Namespace) -> None:
    """In a fresh process: time ``Daemon.open(...)`` on the journal; report the games' plies."""
    rss = process_rss_kib(os.getpid())
    wall, cpu = time.perf_counter(), time.process_time()
    daemon = await Daemon.open(args.config, DaemonOptions(port=0))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = process_rss_kib(os.getpid())
    daemon.journal.close()
    send_line(
        {
            "wall": wall,
            "cpu": cpu,
            "replayed": daemon.replayed,
            "from": daemon.service.replayed_from,
            "seen": _seen(daemon.core),
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


def measure(
    boards: int,
    seconds: float | None,
    *,
    classical: bool = False,
    snapshots: bool = True,
    keep: Path | None = None,
) -> Recovery:
    """Write a journal of ``boards`` boards, then time a daemon's start on it.

    Args:
        keep: write the journal and its configuration in this (new) folder and keep them.
    """
    with tempfile.TemporaryDirectory(prefix="dgtcast-recovery-") as folder:
        work = Path(folder) if keep is None else keep
        work.mkdir(parents=True, exist_ok=True)
        ports = [str(work / f"board-{n}") for n in range(1, boards + 1)]
        control = "5400+30" if classical else "180+2"
        config = write_round_config(work, ports, time_control=control)
        journal = work / "journal.db"
        inputs = round_inputs(boards, seconds, classical=classical)
        policy = SnapshotPolicy() if snapshots else None
        written = write_journal(
            journal, config, inputs, snapshots=policy, publish_each=not classical
        )
        size = sum(os.path.getsize(p) for p in work.glob("journal.db*")) / 2**20
        restart = asyncio.run(_restart_child(work, config))
        quick = None
        if written.final:
            with Journal(journal) as kept:
                kept.write_snapshot(kept.last_seq, EPOCH, written.fingerprint, written.final)
            quick = asyncio.run(_restart_child(work, config))
        worst = None
        tail = written.worst
        if tail is not None:
            _cut(journal, tail, written.fingerprint)
            worst = asyncio.run(_restart_child(work, config))
            if worst["seen"] != tail.seen:
                raise RuntimeError("the restart with the costliest tail differs")
    for seen in (restart, quick):
        if seen is not None and seen["seen"] != written.seen:
            raise RuntimeError("a restart did not rebuild the games, clocks and alerts journalled")
    return Recovery(
        boards=boards,
        written=written,
        journal_mib=size,
        wall_s=restart["wall"],
        cpu_s=restart["cpu"],
        replayed=restart["replayed"],
        snapshot_seq=restart["from"],
        rss_before_kib=restart["rss"][0],
        rss_after_kib=restart["rss"][1],
        quick_wall_s=None if quick is None else quick["wall"],
        quick_cpu_s=None if quick is None else quick["cpu"],
        worst_wall_s=None if worst is None else worst["wall"],
        worst_cpu_s=None if worst is None else worst["cpu"],
    )


def _cut(path: Path, tail: Tail, print_: str) -> None:
    """The journal as a crash at the end of ``tail`` left it: later records and
    snapshots gone (a bench's liberty: the daemon never removes a record)."""
    db = sqlite3.connect(path)
    with db:
        db.execute("DELETE FROM records WHERE seq > ?", (tail.end,))
        db.execute("DELETE FROM snapshots")
    db.close()
    with Journal(path) as journal:
        journal.write_snapshot(tail.seq, EPOCH, print_, tail.state)


def main(argv: list[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--boards", type=int, default=500)
    parser.add_argument("--minutes", type=float, help="play per board (default: whole games)")
    parser.add_argument("--classical", action="store_true", help="90+30 games, 300 minutes")
    parser.add_argument("--no-snapshots", action="store_true", help="replay the whole journal")
    parser.add_argument("--keep", type=Path, help="write the journal in this folder and keep it")
    parser.add_argument("--role", choices=["restart"], help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role == "restart":
        asyncio.run(_restart(args))
        return 0
    minutes = 300.0 if args.classical and args.minutes is None else args.minutes
    seconds = None if minutes is None else minutes * 60
    recovery = measure(
        args.boards,
        seconds,
        classical=args.classical,
        snapshots=not args.no_snapshots,
        keep=args.keep,
    )
    print(recovery.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
