"""Chess960 games caught up from the boards' own memory, served by a real daemon.

Emulated boards over ptys play Chess960 games (one board turned round) in a Chess960
section while the daemon is away: started mid-game, or killed with ``kill -9`` at a
placement the log holds twice and started again. Both sides castle in the part it did not
see; every move and every ``[%clk]`` (the clock's own reading at the lever press) must
come out exactly.
"""

from __future__ import annotations

import asyncio
import signal
from functools import partial
from pathlib import Path

import chess
import pytest

from daemon.journal.records import JournalMissing
from daemon.journal.store import Journal
from daemon.round.board_game import BoardGame
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.recovery_support import check_record, play_part
from tests.daemon.support import (
    BoardSpec,
    journal_moves,
    running_daemon,
    start_daemon,
    wait_for,
    write_config,
)
from tests.game.chess960_games import REPEATING, chess960_game
from tests.serving import START_LIMIT

pytestmark = pytest.mark.slow  # games played in real time (docs/development.md)

SPEED = 12.0
CLOCK = ClockSettings.from_text("3+2")
NUMBERS = (672, 194)


def _start(number: int) -> chess.BaseBoard:
    return chess.BaseBoard(chess.Board.from_chess960_pos(number).board_fen())


def _chess960_config(tmp_path: Path, boards: tuple[EmulatedBoard, ...]) -> Path:
    specs = [BoardSpec(n, str(b.path)) for n, b in enumerate(boards, 1)]
    config = write_config(tmp_path, specs)
    text = config.read_text().replace("round = 2", 'round = 2\nvariant = "chess960"')
    config.write_text(text)
    return config


def _recovered_plies(game: BoardGame, plies: int) -> bool:
    return game.recovered_plies == plies


def _recovered(journal_path: Path, board: int) -> list[tuple[int, int, str]]:
    """(from_ply, plies, source) of each recovery the journal holds for ``board``."""
    with Journal(journal_path, read_only=True) as journal:
        records = journal.records(board=board, kinds={"game.MovesRecovered"})
        return [(r.payload["from_ply"], r.payload["plies"], r.payload["source"]) for r in records]


def _started(journal_path: Path, board: int) -> list[int | None]:
    """The Chess960 numbers of the games the journal started on ``board``."""
    try:
        journal = Journal(journal_path, read_only=True)
    except JournalMissing:
        return []  # the daemon has not set it up yet
    with journal:
        records = journal.records(board=board, kinds={"game.GameStarted"})
        return [record.payload.get("chess960") for record in records]


async def test_daemon_started_after_the_castling_of_chess960_games(tmp_path: Path) -> None:
    games = [chess960_game(n) for n in NUMBERS]
    async with (
        EmulatedBoard(clock=CLOCK, seed=21, placement=_start(NUMBERS[0])) as one,
        EmulatedBoard(clock=CLOCK, seed=22, placement=_start(NUMBERS[1]), rotate=True) as two,
    ):
        boards = (one, two)
        await asyncio.gather(
            play_part(one, games[0], 0, 16, speed=SPEED, noise=0.2),
            play_part(two, games[1], 0, 12, speed=SPEED, noise=0.2),
        )
        config = _chess960_config(tmp_path, boards)
        async with running_daemon(config) as daemon:
            core = daemon.core
            for number, plies in ((1, 16), (2, 12)):
                recovered = partial(_recovered_plies, core.games[number], plies)
                await wait_for(recovered, 20, f"board {number}: caught up from its memory")
            await asyncio.gather(
                play_part(one, games[0], 16, None, speed=SPEED, noise=0.2),
                play_part(two, games[1], 12, None, speed=SPEED, noise=0.2),
            )
            await wait_for(lambda: core.games[1].tracker.ply == 26, 20, "board 1 to the end")  # type: ignore[union-attr]
            await wait_for(lambda: core.games[2].tracker.ply == 18, 20, "board 2 to the end")  # type: ignore[union-attr]
            state = daemon.hub.state(2)
            assert state is not None
            assert state.variant == "chess960"
            assert state.recovered_plies == 12
    journal_path = tmp_path / "journal.db"
    check_record(journal_path, 1, games[0], one, 26)
    check_record(journal_path, 2, games[1], two, 18)
    assert _started(journal_path, 1) == [NUMBERS[0]]
    assert _started(journal_path, 2) == [NUMBERS[1]]
    assert _recovered(journal_path, 1) == [(1, 16, "memory")]
    assert _recovered(journal_path, 2) == [(1, 12, "memory")]


async def test_kill_9_before_the_castling_and_a_restart_after_it(tmp_path: Path) -> None:
    # Killed at ply 6, whose placement the log holds twice (after ply 2 too): only the
    # game's start places it. Castled at plies 9 and 10, while the daemon is down.
    games = [chess960_game(n, REPEATING) for n in NUMBERS]
    totals = [len(list(game.mainline_moves())) for game in games]
    journal_path = tmp_path / "journal.db"
    async with (
        EmulatedBoard(clock=CLOCK, seed=31, placement=_start(NUMBERS[0]), rotate=True) as one,
        EmulatedBoard(clock=CLOCK, seed=32, placement=_start(NUMBERS[1])) as two,
    ):
        boards = (one, two)
        config = _chess960_config(tmp_path, boards)
        daemon = await start_daemon(config)
        try:
            for number in (1, 2):
                started = lambda n=number: len(_started(journal_path, n)) == 1  # noqa: E731
                await wait_for(started, START_LIMIT, f"board {number}: the game started")
            await asyncio.gather(
                *(play_part(b, g, 0, 6, speed=SPEED) for b, g in zip(boards, games, strict=True))
            )
            for number in (1, 2):
                seen = lambda n=number: len(journal_moves(journal_path, n)) == 6  # noqa: E731
                await wait_for(seen, 20, f"board {number}: six plies live")
            daemon.send_signal(signal.SIGKILL)
            await daemon.wait()
            await asyncio.gather(
                *(
                    play_part(b, g, 6, 14, speed=SPEED, noise=0.2)
                    for b, g in zip(boards, games, strict=True)
                )
            )
            daemon = await start_daemon(config)
            for number in (1, 2):
                caught_up = lambda n=number: len(journal_moves(journal_path, n)) == 14  # noqa: E731
                await wait_for(caught_up, 30, f"board {number}: caught up from its memory")
            await asyncio.gather(
                *(
                    play_part(b, g, 14, None, speed=SPEED, noise=0.2)
                    for b, g in zip(boards, games, strict=True)
                )
            )
            for number, plies in zip((1, 2), totals, strict=True):
                ended = lambda n=number, p=plies: len(journal_moves(journal_path, n)) == p  # noqa: E731
                await wait_for(ended, 30, f"board {number}: to the end")
        finally:
            if daemon.returncode is None:
                daemon.send_signal(signal.SIGTERM)
                await asyncio.wait_for(daemon.wait(), 20)
        for number, (board, game) in enumerate(zip(boards, games, strict=True), start=1):
            check_record(journal_path, number, game, board, totals[number - 1])
            assert _started(journal_path, number) == [NUMBERS[number - 1]]
            assert _recovered(journal_path, number) == [(7, 8, "memory")]
