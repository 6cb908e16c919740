"""Nothing played while dgtcast is blind is lost: recovery from the boards' own memory.

Real daemon, emulated boards on ptys: every move and every ``[%clk]`` (the clock's own
reading at the lever press) must come out exactly, and the arbiter is told how many
plies were recovered. The plies before the daemon starts are played while nobody listens,
the boards' time passing at once; a few plies are then played live. The recovery logic
to the end of whole games, a first start mid-game, downtimes, cables out and random
faults, runs in virtual time (tests/virtual: test_scenarios.py, test_chess960_recovery.py,
test_fault_schedules.py); this file keeps the shell's part: the memory read over a pty
(one memory holding an earlier game too), at the real line rate in the second test.
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

from broadcast.feed.alerts import AlertKind
from broadcast.feed.messages import BoardStatus
from daemon.journal.store import Journal
from daemon.round.board_game import BoardGame
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.recovery_support import check_record, play_part, play_unwatched
from tests.daemon.snapshot_check import check_restarts_from_snapshots
from tests.daemon.support import BoardSpec, read_game, running_daemon, wait_for, write_config

SPEED = 12.0
#: Plies of each game once the daemon follows the boards live (from ply 20).
LIVE = 24
#: Plies of the 9600-baud test once the dump has begun (from ply 12).
DURING = 24


def _recovered(game: BoardGame, plies: int) -> bool:
    return game.recovered_plies == plies


def _at_ply(game: BoardGame, plies: int) -> bool:
    return game.tracker is not None and game.tracker.ply == plies


def _recovery_records(journal_path: Path, board: int) -> list[str]:
    with Journal(journal_path, read_only=True) as journal:
        return [r.payload["state"] for r in journal.records(board=board, kinds={"recovery"})]


async def test_daemon_started_at_move_20_of_every_game(tmp_path: Path, games_dir: Path) -> None:
    long = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)  # 37 plies
    other = read_game(games_dir / "nepomniachtchi-liren-game1.pgn")
    earlier = read_game(games_dir / "molinari-bordais-1979.pgn")
    clock = ClockSettings.from_text("3+2")
    async with (
        EmulatedBoard(clock=clock, seed=3, earlier=[earlier]) as one,
        EmulatedBoard(clock=clock, seed=4, rotate=True, white_side="right") as two,
    ):
        await asyncio.gather(
            play_unwatched(one, long, 20, speed=SPEED, noise=0.2, seed=3),
            play_unwatched(two, other, 20, speed=SPEED, noise=0.2, seed=4),
        )
        config = write_config(tmp_path, [BoardSpec(1, str(one.path)), BoardSpec(2, str(two.path))])
        async with running_daemon(config) as daemon:
            core = daemon.core
            for game in (core.games[1], core.games[2]):
                await wait_for(partial(_recovered, game, 20), 20, f"board {game.config.number}")
            state = daemon.hub.state(1)
            assert state is not None
            assert state.recovered_plies == 20
            assert state.status is BoardStatus.ONLINE
            kinds = [alert.kind for alert in core.engine.alerts]
            assert kinds.count(AlertKind.MOVES_RECOVERED) == 2
            await asyncio.gather(
                play_part(one, long, 20, LIVE, speed=SPEED, noise=0.2),
                play_part(two, other, 20, LIVE, speed=SPEED, noise=0.2),
            )
            for game in (core.games[1], core.games[2]):
                await wait_for(partial(_at_ply, game, LIVE), 20, f"board {game.config.number}")
    journal_path = tmp_path / "journal.db"
    check_record(journal_path, 1, long, one, LIVE)
    check_record(journal_path, 2, other, two, LIVE)
    assert _recovery_records(journal_path, 1) == ["reading", "read"]
    assert check_restarts_from_snapshots(config) >= 12


async def test_the_8_second_dump_at_9600_baud_keeps_the_line_honest(
    tmp_path: Path, games_dir: Path
) -> None:
    """The board is read at the real line rate: it is catching up, not offline, for the
    ~8 s of the dump, and moves made meanwhile follow on from the recovered ones."""
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)  # 37 plies
    clock = ClockSettings.from_text("3+2")
    async with EmulatedBoard(clock=clock, seed=8, baud=9600) as board:
        await play_unwatched(board, game, 12, speed=SPEED, seed=8)
        config = write_config(tmp_path, [BoardSpec(1, str(board.path))])
        async with running_daemon(config) as daemon:
            hub = daemon.hub

            def status() -> BoardStatus | None:
                state = hub.state(1)
                return None if state is None else state.status

            await wait_for(lambda: status() is BoardStatus.CATCHING_UP, 20, "catching up")
            seen: set[BoardStatus | None] = set()
            # About as long as the dump: the moves come while it is read, and after.
            playing = asyncio.create_task(play_part(board, game, 12, DURING, speed=SPEED))
            while status() is BoardStatus.CATCHING_UP:
                seen.add(status())
                await asyncio.sleep(0.05)
            await playing
            tracker = daemon.core.games[1].tracker
            assert tracker is not None
            await wait_for(lambda: tracker.ply == DURING, 30, "every move")
            assert BoardStatus.OFFLINE not in seen
            assert daemon.sessions[1].online.is_set()
    journal_path = tmp_path / "journal.db"
    check_record(journal_path, 1, game, board, DURING)
    with Journal(journal_path, read_only=True) as journal:
        links = [r.payload["state"] for r in journal.records(board=1, kinds={"link"})]
    assert links == ["online"], "never declared offline during the dump"
    assert board.bytes_sent > 7939
