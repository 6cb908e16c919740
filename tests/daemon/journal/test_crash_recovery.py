"""``kill -9`` in the middle of a move, then a restart: nothing lost, nothing duplicated.

A real process on a real pty, its journal in sqlite: the shell's part. What the record
ends as after kills at any moment, with the players going on meanwhile, runs in virtual
time (tests/virtual/test_scenarios.py, test_fault_schedules.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from daemon.journal.store import Journal
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import Lift, Place
from tests.daemon.snapshot_check import check_restarts_from_snapshots
from tests.daemon.support import (
    BoardSpec,
    journal_count,
    journal_moves,
    read_game,
    second_half,
    start_daemon,
    wait_for,
    write_config,
)
from tests.serving import START_LIMIT

SPEED = 20.0
#: Plies played before the kill, which comes with the next move's piece in the hand.
BEFORE = 4
#: Plies played in all; then the players signal the game's result with the kings.
PLIES = 8


async def test_kill_9_mid_move_loses_and_duplicates_nothing(
    tmp_path: Path, games_dir: Path
) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)  # 37 plies
    mainline = list(game.mainline_moves())
    expected = [move.uci() for move in mainline][:PLIES]
    position = game.board()
    for move in mainline[:BEFORE]:
        position.push(move)
    hand = mainline[BEFORE].from_square  # White's 3. Nc3 is under way ...
    piece = position.piece_at(hand)
    assert piece is not None
    journal_path = tmp_path / "journal.db"
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=7) as board:
        config = write_config(tmp_path, [BoardSpec(1, str(board.path)), BoardSpec(2, None)])
        daemon = await start_daemon(config)
        try:
            await wait_for(
                lambda: journal_count(journal_path, "placement") > 0,
                START_LIMIT,
                "daemon sees board",
            )
            await board.play(game, speed=SPEED, plies=BEFORE)
            await wait_for(
                lambda: journal_count(journal_path, "game.MoveMade") >= BEFORE, 15, "moves"
            )
            board.act(Lift(square=hand))
            await asyncio.sleep(0.2)
            os.kill(daemon.pid, signal.SIGKILL)  # ... when the daemon is killed
            await daemon.wait()
            daemon = await start_daemon(config)
            await wait_for(
                lambda: journal_count(journal_path, "link") >= 2, START_LIMIT, "board back"
            )
            board.act(Place(square=hand, piece=piece))  # put back; the move comes next
            rest = second_half(game, BEFORE)
            await board.play(rest, speed=SPEED, start_clock=False, plies=PLIES - BEFORE)
            await board.signal_result(game.headers["Result"], speed=SPEED)
            await wait_for(lambda: journal_count(journal_path, "result") > 0, 30, "result proposed")
        finally:
            if daemon.returncode is None:
                daemon.send_signal(signal.SIGTERM)
                await asyncio.wait_for(daemon.wait(), 15)
    assert daemon.returncode == 0
    line = journal_moves(journal_path, 1)
    assert [m["uci"] for m in line] == expected
    assert all(m["clock"] is not None for m in line)
    with Journal(journal_path, read_only=True) as journal:
        moves = [r.payload["ply"] for r in journal.records(kinds={"game.MoveMade"})]
        versions = [r.payload["alert"] for r in journal.records(kinds={"alert"})]
        alerts = [v["id"] for v in versions if [s["step"] for s in v["history"]] == ["raised"]]
        starts = list(journal.records(kinds={"daemon_start"}))
    assert sorted(moves) == list(range(1, len(expected) + 1)), "a move journalled twice or lost"
    assert alerts, "the kings gesture raises result_signalled"
    assert len(alerts) == len(set(alerts)), "an alert raised twice"
    assert len(starts) == 1, "the round start must survive the restart"
    assert check_restarts_from_snapshots(config) >= 12
