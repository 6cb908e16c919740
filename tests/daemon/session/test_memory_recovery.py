"""Nothing played while dgtcast is blind is lost: recovery from the boards' own memory.

Real daemon, emulated boards on ptys: every move and every ``[%clk]`` (the clock's own
reading at the lever press) must come out exactly, and the arbiter is told how many
plies were recovered.
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

import pytest

from broadcast.feed.alerts import AlertKind
from broadcast.feed.messages import BoardStatus
from daemon.journal.store import Journal
from daemon.round.board_game import BoardGame
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.recovery_support import check_record, play_part
from tests.daemon.snapshot_check import check_restarts_from_snapshots
from tests.daemon.support import BoardSpec, read_game, running_daemon, wait_for, write_config

pytestmark = pytest.mark.slow  # games played in real time (docs/development.md)

SPEED = 12.0


def _recovered(game: BoardGame, plies: int) -> bool:
    return game.recovered_plies == plies


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
            play_part(one, long, 0, 20, speed=SPEED, noise=0.2),
            play_part(two, other, 0, 20, speed=SPEED, noise=0.2),
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
                play_part(one, long, 20, None, speed=SPEED, noise=0.2),
                play_part(two, other, 20, 30, speed=SPEED, noise=0.2),
            )
            await wait_for(lambda: core.games[1].tracker.ply == 37, 20, "board 1 to the end")  # type: ignore[union-attr]
            await wait_for(lambda: core.games[2].tracker.ply == 30, 20, "board 2 to ply 30")  # type: ignore[union-attr]
    journal_path = tmp_path / "journal.db"
    check_record(journal_path, 1, long, one, 37)
    check_record(journal_path, 2, other, two, 30)
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
        await play_part(board, game, 0, 12, speed=SPEED)
        config = write_config(tmp_path, [BoardSpec(1, str(board.path))])
        async with running_daemon(config) as daemon:
            hub = daemon.hub

            def status() -> BoardStatus | None:
                state = hub.state(1)
                return None if state is None else state.status

            await wait_for(lambda: status() is BoardStatus.CATCHING_UP, 20, "catching up")
            seen: set[BoardStatus | None] = set()
            playing = asyncio.create_task(play_part(board, game, 12, None, speed=SPEED))
            while status() is BoardStatus.CATCHING_UP:
                seen.add(status())
                await asyncio.sleep(0.05)
            await playing
            tracker = daemon.core.games[1].tracker
            assert tracker is not None
            await wait_for(lambda: tracker.ply == 37, 30, "every move")
            assert BoardStatus.OFFLINE not in seen
            assert daemon.sessions[1].online.is_set()
    journal_path = tmp_path / "journal.db"
    check_record(journal_path, 1, game, board, 37)
    with Journal(journal_path, read_only=True) as journal:
        links = [r.payload["state"] for r in journal.records(board=1, kinds={"link"})]
    assert links == ["online"], "never declared offline during the dump"
    assert board.bytes_sent > 7939
