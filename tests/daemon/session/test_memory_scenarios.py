"""Issue 11's scenarios through the real daemon and emulated boards on ptys.

* the daemon killed -9 after a few plies and started again after a minute of play (the
  players go on meanwhile, the boards' time passing at once since nobody listens, and
  while the memory is read); whole games with downtimes of 10 s to 5 minutes and cables
  out for 1 to 30 plies run in virtual time (tests/virtual/test_scenarios.py);
* a board whose memory has wrapped (the gap search, or the arbiter's choice) runs in
  virtual time too (tests/virtual/test_wrapped_memory.py).

Each board's record must hold every move and each ``[%clk]`` the clock's own reading at
its lever press (the results the players signal after a restart: tests/virtual).
"""

from __future__ import annotations

import asyncio
import os
import signal
from functools import partial
from pathlib import Path

import chess.pgn

from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.recovery_support import check_record
from tests.daemon.support import (
    BoardSpec,
    journal_count,
    journal_plies,
    read_game,
    start_daemon,
    wait_for,
    write_config,
)
from tests.serving import START_LIMIT

SPEED = 12.0
CLOCK = ClockSettings.from_text("3+2")
#: Plies played on each board: the kill falls after 4, the restart some 6 later.
PLIES = 16
#: Seconds of the players' time (at human speed) the daemon is down.
DOWN = 60.0


def _plies_at_least(journal_path: Path, board: int, plies: int) -> bool:
    return journal_plies(journal_path, board) >= plies


def _games(games_dir: Path) -> list[chess.pgn.Game]:
    return [
        read_game(games_dir / "nepomniachtchi-liren-game1.pgn"),  # 97 plies, ½-½
        read_game(games_dir / "kasparov-deep-blue-1997.pgn", 0),  # 89 plies, 1-0
    ]


async def test_kill_9_and_a_restart_after_play(tmp_path: Path, games_dir: Path) -> None:
    """The shell's part: a real process killed and started again on real ptys (the logic,
    with every downtime and cable-out, runs in virtual time: tests/virtual)."""
    games = _games(games_dir)
    journal_path = tmp_path / "journal.db"
    async with (
        EmulatedBoard(clock=CLOCK, seed=11) as one,
        EmulatedBoard(clock=CLOCK, seed=12, rotate=True, white_side="right") as two,
    ):
        boards = (one, two)
        config = write_config(tmp_path, [BoardSpec(1, str(one.path)), BoardSpec(2, str(two.path))])
        daemon = await start_daemon(config)
        plays: list[asyncio.Task[None]] = []
        try:
            await wait_for(
                lambda: journal_count(journal_path, "placement") >= 2, START_LIMIT, "boards seen"
            )
            plays = [
                asyncio.create_task(b.play(g, speed=SPEED, plies=PLIES))
                for b, g in zip(boards, games, strict=True)
            ]
            await wait_for(lambda: journal_plies(journal_path, 1) >= 4, 60, "a few moves live")
            os.kill(daemon.pid, signal.SIGKILL)
            await daemon.wait()
            before = [journal_plies(journal_path, n) for n in (1, 2)]
            # The players go on: the boards' time passes at once, nobody listens anyway.
            await asyncio.gather(*(board.pass_time(DOWN / SPEED) for board in boards))
            daemon = await start_daemon(config)
            await asyncio.gather(*plays)
            for number in (1, 2):
                played = partial(_plies_at_least, journal_path, number, PLIES)
                await wait_for(played, 60, f"board {number}'s plies")
        finally:
            for play in plays:
                play.cancel()
            if daemon.returncode is None:
                daemon.send_signal(signal.SIGTERM)
                await asyncio.wait_for(daemon.wait(), 20)
        for number, (board, game) in enumerate(zip(boards, games, strict=True), start=1):
            check_record(journal_path, number, game, board, PLIES)
            assert before[number - 1] < PLIES
        assert journal_count(journal_path, "game.MovesRecovered") >= 1
