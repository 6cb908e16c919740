"""Fault schedules played in virtual time and checked (tests/virtual/test_fault_schedules.py
describes what is drawn and what must hold): the strategies that draw them and
:func:`run_schedule`, which plays one and checks the record and the alerts at the end."""

from __future__ import annotations

from pathlib import Path

import chess.pgn
from hypothesis import strategies as st

from daemon.config.model import Config
from drivers.dgt.boardside import encode_event
from drivers.dgt.events import FieldUpdated
from tests.game.chess960_games import GAMES, chess960_game
from tests.shared_data import shared_path
from tests.virtual.found import Fault, Schedule
from tests.virtual.games import Table, board_config, read_games
from tests.virtual.virtual_daemon import VirtualDaemon
from tests.virtual.world import World

__all__ = [
    "DGT_MEMORY",
    "GAME_LIST",
    "INCREMENT",
    "INJECT",
    "PLIES",
    "SMALL_MEMORIES",
    "faults",
    "run_schedule",
    "schedule_configs",
    "schedules",
    "settle",
]

#: Plies played per example (the games are cut there): the faults fall among them.
PLIES = 40
#: The clocks: 15 minutes + 10 s, no flag falls within the plies played.
INCREMENT = 10


def _games(shared: Path) -> list[chess.pgn.Game]:
    return [*read_games(shared / "data" / "games"), *(chess960_game(n) for n in GAMES)]


#: The games played: every game of ../shared/data/games, then two Chess960 games.
GAME_LIST = _games(shared_path())


def schedule_configs(folder: Path) -> dict[tuple[bool, bool], Config]:
    """A board's configuration per ``(mode23, chess960)``, written in ``folder``."""
    return {
        (mode23, chess960): board_config(
            folder, time_control=f"900+{INCREMENT}", mode23=mode23, chess960=chess960
        )
        for mode23 in (False, True)
        for chess960 in (False, True)
    }


def run_schedule(schedule: Schedule, configs: dict[tuple[bool, bool], Config]) -> World:
    """Play ``schedule`` and check the record and the alerts at the end; returns the world
    as it ended."""
    game = GAME_LIST[schedule.game]
    chess960 = _is_chess960(game)
    table = Table.of(
        game,
        seed=schedule.seed,
        speed=schedule.speed,
        mode23=schedule.mode23,
        rotate=schedule.rotate,
        white_side="right" if schedule.right else "left",
        plies=PLIES,
        clock=f"15+{INCREMENT}",
        memory_size=schedule.memory,
    )
    world = World(configs[schedule.mode23, chess960], table.firmware, latency=schedule.latency)
    world.start_daemon()
    world.run_until(3.0)
    origin = 3.0
    end = world.play(table.schedule, origin=origin)
    for fault in sorted(schedule.faults, key=lambda f: f.share):
        world.run_until(origin + fault.share * (end - origin))
        INJECT[fault.kind](world, fault)
    expected = table.expected(game)[:PLIES]
    settle(world, end, len(expected))
    daemon = world.daemon
    assert daemon is not None
    got = daemon.moves()
    where = f"{schedule}\n" + "\n".join(world.logs[-30:])
    truth = world.should_have_shown(lambda _: INCREMENT) if schedule.mode23 else table.truth
    if table.firmware.eeprom.wrapped:
        _check_forgotten(
            daemon, got, [uci for uci, _ in expected], truth, world.seen_presses, where
        )
        return world
    assert [uci for uci, _ in got] == [uci for uci, _ in expected], where
    for ply, ((_, clock), wanted) in enumerate(zip(got, truth, strict=False), start=1):
        assert clock is not None, f"ply {ply}: no [%clk]\n{where}"
        assert abs(clock - wanted) <= 1, f"ply {ply}: [%clk] {clock}, not {wanted}\n{where}"
    left_open = set(daemon.open_alerts()) & {"out_of_sync", "clock_mismatch", "moves_recovered"}
    assert not left_open - {"moves_recovered"}, f"{left_open}\n{where}"
    for alert in daemon.core.engine.open_alerts:  # open only while nothing came after
        if alert.kind.value == "moves_recovered":
            last = alert.details["from_ply"] + alert.details["plies"] - 1
            assert last >= len(got), f"the game went on after ply {last}\n{where}"
    return world


def _check_forgotten(
    daemon: VirtualDaemon,
    got: list[tuple[str, float | None]],
    played: list[str],
    truth: list[int],
    seen: list[bool],
    where: str,
) -> None:
    """The board's memory wrapped: what it no longer held may be missing from the record,
    never made up; a press followed live gives its move's ``[%clk]`` (those of moves made
    while nobody followed the board may be missing: the memory cannot tell them); and when
    moves are missing, an alert open says why (out of sync, or the lines that fit the gap),
    and none once the record is whole."""
    moves = [uci for uci, _ in got]
    assert moves == played[: len(moves)], f"a move made up\n{where}"
    for ply, ((_, clock), wanted, live) in enumerate(zip(got, truth, seen, strict=False), start=1):
        if live:
            assert clock is not None, f"ply {ply}: no [%clk]\n{where}"
            assert abs(clock - wanted) <= 1, f"ply {ply}: [%clk] {clock}, not {wanted}\n{where}"
    said = set(daemon.open_alerts()) & {"out_of_sync", "gap_ambiguous"}
    if moves != played:
        assert said, f"{len(moves)} of {len(played)} plies and no alert\n{where}"
    else:
        assert not said, f"{said} open, every ply recorded\n{where}"


def settle(world: World, end: float, plies: int) -> None:
    """Let the world run on after play: 15 s at least, then until two looks 5 s apart find
    the daemon following the board live, in sync, with ``plies`` plies recorded; 60 s at
    most (a restart, a memory read and a heal take that long together)."""
    world.run_until(end + 15.0)
    looks = 0
    for after in range(20, 61, 5):
        daemon = world.daemon
        settled = (
            daemon is not None
            and daemon.linked
            and daemon.session.state.value == "live"
            and len(daemon.moves()) >= plies
            and "out_of_sync" not in daemon.open_alerts()
        )
        looks = looks + 1 if settled else 0
        if looks == 2:
            return
        world.run_until(end + after)


def _kill(world: World, fault: Fault) -> None:
    if world.daemon is not None:
        world.kill()
        world.at(world.now + fault.seconds, world.start_daemon)


def _cable(world: World, fault: Fault) -> None:
    if world.plugged:
        world.unplug(keep_power=True)
        world.at(world.now + fault.seconds, world.replug)


def _lost_update(world: World, fault: Fault) -> None:
    world.firmware.drop_field_updates += 1


def _torn_update(world: World, fault: Fault) -> None:
    world.firmware.tear_field_updates += 1


def _lost_clock(world: World, fault: Fault) -> None:
    world.firmware.drop_clock_reports += 1


def _duplicate(world: World, fault: Fault) -> None:
    square = int(fault.seconds * 3) % 64
    piece = world.firmware.physical.fields()[square]
    world.firmware.inject(encode_event(FieldUpdated(field=square, piece=piece)))


def _read(world: World, fault: Fault) -> None:
    if world.daemon is not None:
        world.daemon.read_board()


INJECT = {
    "kill": _kill,
    "cable": _cable,
    "lost_update": _lost_update,
    "torn_update": _torn_update,
    "duplicate": _duplicate,
    "lost_clock": _lost_clock,
    "read": _read,
}


def faults() -> st.SearchStrategy[Fault]:
    """A fault of any kind, at a moment, lasting some seconds."""
    return st.builds(
        Fault,
        kind=st.sampled_from(sorted(INJECT)),
        share=st.floats(0.0, 1.0),
        seconds=st.floats(1.0, 20.0),
    )


#: A DGT board's memory (7,936 bytes: it holds every move of the plies played).
DGT_MEMORY: st.SearchStrategy[int | None] = st.none()
#: Memories that wrap within the plies played, so that a read may hold nothing of a gap.
SMALL_MEMORIES: st.SearchStrategy[int | None] = st.sampled_from([96, 160, 256, 400])


def schedules(
    *, mode23: bool, chess960: bool, memory: st.SearchStrategy[int | None] = DGT_MEMORY
) -> st.SearchStrategy[Schedule]:
    """Schedules of the standard games or the Chess960 ones, on one kind of clock, with a
    DGT board's memory or one of ``memory`` bytes."""
    games = [i for i, game in enumerate(GAME_LIST) if _is_chess960(game) == chess960]
    return st.builds(
        Schedule,
        game=st.sampled_from(games),
        seed=st.integers(0, 1 << 16),
        speed=st.sampled_from([1.5, 2.0, 3.0, 5.0]),
        mode23=st.just(mode23),
        rotate=st.booleans(),
        right=st.booleans(),
        faults=st.lists(faults(), max_size=4).map(tuple),
        latency=st.sampled_from([0.0, 0.02, 0.1, 0.25]),
        memory=memory,
    )


def _is_chess960(game: chess.pgn.Game) -> bool:
    return game.headers.get("Variant", "") == "Chess960"
