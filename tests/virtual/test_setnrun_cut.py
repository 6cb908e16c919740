"""A SETNRUN cut by the cable, on a mode 23 clock, in virtual time.

dgtcast answers each press with a SETNRUN giving the mover its increment; a computer
answers a moment late (``latency``). The cable is pulled while the SETNRUN is on its way,
so the clock never takes it, and plugged back in while the mover's time stands: before
the reply's move (no memory read: the board shows the game as recorded), or after it
(the memory read, whose log has no press of the mover since). Only the clock's next
reading tells whether the SETNRUN was taken: the mover's standing time is the one set, or
that time less the increment (docs/daemon.md, "Mode 23 and the clocks"). The record must
end as the game played, every ``[%clk]`` within a second of what the clock should have
shown, the mover's next move included.
"""

from __future__ import annotations

from pathlib import Path

import chess.pgn
import pytest

from tests.virtual.games import Table, board_config, read_games
from tests.virtual.virtual_daemon import VirtualDaemon
from tests.virtual.world import World

LATENCY = 0.25  # the SETNRUN reaches the clock 0.25 s after the reading that asked it
ORIGIN = 3.0
PLIES = 24


@pytest.mark.parametrize("reply_first", [False, True], ids=["before the reply", "after it"])
@pytest.mark.parametrize("ply", [5, 8, 16])
def test_a_setnrun_cut_by_the_cable(
    folder: Path, games_dir: Path, ply: int, reply_first: bool
) -> None:
    game, table, world, end = _playing(folder, games_dir, seed=163)
    presses = table.press_times(ORIGIN)
    pressed = presses[ply - 1]
    world.run_until(pressed + 0.1)  # the reading came, the SETNRUN is on its way
    assert len(world.clock_sets) == ply - 1
    world.unplug(keep_power=True)
    # back while the mover's time stands: before the reply's first action, or after the
    # reply's press (the mover's own next move not begun)
    actions = [ORIGIN + timed.at for timed in table.schedule]
    if reply_first:
        mover_next = next(t for t in actions if t > presses[ply] + 0.01)
        back = (presses[ply] + mover_next) / 2
    else:
        back = pressed + 0.5
        assert next(t for t in actions if t > pressed) > back + 1.5, "no time to link up"
    world.run_until(back)
    world.replug()
    world.run_until(end + 30.0)
    daemon = world.daemon
    assert daemon is not None
    read = any("reading its memory" in line for line in world.logs)
    assert read == reply_first
    _check(daemon, game, world)


@pytest.mark.parametrize("lost", [False, True], ids=["taken", "lost"])
def test_a_setnrun_on_its_way_when_the_daemon_is_killed(
    folder: Path, games_dir: Path, lost: bool
) -> None:
    """The daemon killed right after it sent a SETNRUN; with ``lost`` the SETNRUN never
    reaches the clock (the cable out for a moment at the same time: a daemon killed
    between journalling the reading and writing the command). Started again 5 s later,
    it tells from the clock's next reading whether the clock took it."""
    game, table, world, end = _playing(folder, games_dir, seed=8)
    pressed = table.press_times(ORIGIN)[6]
    world.run_until(pressed + 0.1)  # the reading came, the SETNRUN is on its way
    world.kill()
    if lost:
        world.unplug(keep_power=True)
        world.run_until(world.now + 0.5)
        world.replug()
    assert len(world.clock_sets) == 6
    world.run_until(world.now + 5.0)
    daemon = world.start_daemon()
    world.run_until(end + 30.0)
    assert len(world.clock_sets) > 6
    _check(daemon, game, world)


def _playing(
    folder: Path, games_dir: Path, *, seed: int
) -> tuple[chess.pgn.Game, Table, World, float]:
    """Nepomniachtchi-Ding on a mode 23 clock, the daemon's SETNRUNs ``LATENCY`` late,
    the players started: the game, its table, the world and when play ends."""
    game = read_games(games_dir)[7]
    table = Table.of(game, seed=seed, speed=2.0, clock="15+10", mode23=True, plies=PLIES)
    config = board_config(folder, time_control="900+10", mode23=True)
    world = World(config, table.firmware, latency=LATENCY)
    world.start_daemon()
    world.run_until(ORIGIN)
    return game, table, world, world.play(table.schedule, origin=ORIGIN)


def _check(daemon: VirtualDaemon, game: chess.pgn.Game, world: World) -> None:
    """Every ply played, each ``[%clk]`` within a second of what the clock should have
    shown."""
    moves = daemon.moves()
    assert [uci for uci, _ in moves] == [m.uci() for m in game.mainline_moves()][:PLIES]
    truth = world.should_have_shown(lambda _: 10)
    assert len(truth) == PLIES
    for number, ((_, clock), wanted) in enumerate(zip(moves, truth, strict=True), start=1):
        assert clock is not None, f"ply {number}: no [%clk]"
        assert abs(clock - wanted) <= 1, f"ply {number}: [%clk] {clock}, not {wanted}"
