"""Chess960 games caught up from the boards' own memory, served by a real daemon.

Emulated boards over ptys play Chess960 games (one board turned round) in a Chess960
section while the daemon is away (nobody listens: the boards' time passes at once): it
starts mid-game, after both sides castled, and follows a few plies live; every move and
every ``[%clk]`` (the clock's own reading at the lever press) must come out exactly.
The same to the end of the games, and a ``kill -9`` at a placement the log holds twice
with a restart after the castling, run in virtual time
(tests/virtual/test_chess960_recovery.py).
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

import chess

from daemon.journal.records import JournalMissing
from daemon.journal.store import Journal
from daemon.round.board_game import BoardGame
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.recovery_support import check_record, play_part, play_unwatched
from tests.daemon.support import (
    BoardSpec,
    running_daemon,
    wait_for,
    write_config,
)
from tests.game.chess960_games import chess960_game

SPEED = 12.0
CLOCK = ClockSettings.from_text("3+2")
NUMBERS = (672, 194)
#: Plies played live once the daemon has caught up.
LIVE = 4


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
            play_unwatched(one, games[0], 16, speed=SPEED, noise=0.2, seed=21),
            play_unwatched(two, games[1], 12, speed=SPEED, noise=0.2, seed=22),
        )
        config = _chess960_config(tmp_path, boards)
        async with running_daemon(config) as daemon:
            core = daemon.core
            for number, plies in ((1, 16), (2, 12)):
                recovered = partial(_recovered_plies, core.games[number], plies)
                await wait_for(recovered, 20, f"board {number}: caught up from its memory")
            await asyncio.gather(
                play_part(one, games[0], 16, 16 + LIVE, speed=SPEED, noise=0.2),
                play_part(two, games[1], 12, 12 + LIVE, speed=SPEED, noise=0.2),
            )
            await wait_for(lambda: core.games[1].tracker.ply == 16 + LIVE, 20, "board 1")  # type: ignore[union-attr]
            await wait_for(lambda: core.games[2].tracker.ply == 12 + LIVE, 20, "board 2")  # type: ignore[union-attr]
            state = daemon.hub.state(2)
            assert state is not None
            assert state.variant == "chess960"
            assert state.recovered_plies == 12
    journal_path = tmp_path / "journal.db"
    check_record(journal_path, 1, games[0], one, 16 + LIVE)
    check_record(journal_path, 2, games[1], two, 12 + LIVE)
    assert _started(journal_path, 1) == [NUMBERS[0]]
    assert _started(journal_path, 2) == [NUMBERS[1]]
    assert _recovered(journal_path, 1) == [(1, 16, "memory")]
    assert _recovered(journal_path, 2) == [(1, 12, "memory")]
