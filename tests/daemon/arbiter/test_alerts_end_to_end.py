"""Each arbiter alert, raised once with the right details, by a real daemon and real boards
(and resolved when its condition clears: the board back, the king put back).

One daemon, five emulated e-boards over ptys, one scenario per board, played at once: a flag
fall, a late arrival (default time 3 s), an unplugged board, an illegal move restored by the
arbiter, and a clock set to the wrong time.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import chess
import chess.pgn

from broadcast.feed.alerts import Alert
from daemon.journal.store import Journal
from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import Lift, Place
from tests.daemon.conftest import Serve
from tests.daemon.support import read_game, wait_for

SPEED = 25.0
WHITE_KING = chess.Piece(chess.KING, chess.WHITE)


def _alerts(daemon: Daemon, board: int, kind: str) -> list[Alert]:
    return [a for a in daemon.core.engine.alerts if a.board == board and a.kind == kind]


def _journalled_since(path: Path, seq: int) -> set[int]:
    """The boards with at least three records journalled after ``seq``."""
    with Journal(path, read_only=True) as journal:
        counts = Counter(record.board for record in journal.records(after=seq))
    return {board for board, count in counts.items() if count >= 3}


@contextlib.asynccontextmanager
async def _boards(clocks: list[ClockSettings]) -> AsyncIterator[list[EmulatedBoard]]:
    async with contextlib.AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(EmulatedBoard(clock=clock, seed=n))
            for n, clock in enumerate(clocks)
        ]


async def _illegal_then_restored(
    daemon: Daemon, board: EmulatedBoard, game: chess.pgn.Game
) -> None:
    """Two moves, then White's king jumps e1-e3 (illegal); the arbiter puts it back."""
    await board.play(game, speed=SPEED, plies=2)
    board.act(Lift(square=chess.E1))
    board.act(Place(square=chess.E3, piece=WHITE_KING))
    await wait_for(lambda: bool(_alerts(daemon, 4, "out_of_sync")), 10, "out of sync")
    board.act(Lift(square=chess.E3))
    board.act(Place(square=chess.E1, piece=WHITE_KING))
    await wait_for(lambda: daemon.core.games[4].out_of_sync is False, 10, "back in sync")


async def _unplugged(daemon: Daemon, board: EmulatedBoard) -> None:
    board.unplug()
    await wait_for(lambda: bool(_alerts(daemon, 3, "board_offline")), 10, "board offline")
    await board.replug()
    await wait_for(
        lambda: [a.state for a in _alerts(daemon, 3, "board_offline")] == ["resolved"],
        10,
        "board back online: the offline alert resolved",
    )


async def test_every_alert_once_with_its_details(serve: Serve, games_dir: Path) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)  # 1. e4 c6 2. d4 d5 ...
    blitz = ClockSettings.from_text("3+2")
    three_seconds = ClockSettings(base_seconds=3, increment_seconds=1)
    wrong = ClockSettings(base_seconds=180, increment_seconds=2, start_left=150)
    start = dt.datetime.now().astimezone().isoformat(timespec="seconds")
    async with (
        _boards([three_seconds, blitz, blitz, blitz, wrong]) as boards,
        serve(*boards, default_time="3s", round_start=start) as daemon,
    ):
        flag, _late, unplugged, illegal, mismatch = boards
        await asyncio.gather(
            flag.play(game, speed=SPEED, plies=3),  # then Black's 3 seconds run out
            _unplugged(daemon, unplugged),
            _illegal_then_restored(daemon, illegal, game),
            mismatch.play(game, speed=SPEED, plies=2),
        )
        await wait_for(lambda: bool(_alerts(daemon, 1, "flag_fall")), 15, "flag fall")
        await wait_for(lambda: bool(_alerts(daemon, 2, "late_arrival")), 15, "late arrival")
        # A duplicate would come with later inputs: wait for some of each board whose
        # clock runs on (out of sync, wrong clock; the late arrival's was never started:
        # seconds pass meanwhile) to be journalled.
        journalled, path = daemon.journal.last_seq, serve.folder / "journal.db"
        await wait_for(lambda: _journalled_since(path, journalled) >= {4, 5}, 30, "inputs")
        alerts = daemon.core.engine.alerts
    episodes = Counter((a.board, a.kind, repr(sorted(a.details.items()))) for a in alerts)
    assert all(count == 1 for count in episodes.values()), episodes
    _check_details(daemon)


def _check_details(daemon: Daemon) -> None:
    (fall,) = _alerts(daemon, 1, "flag_fall")
    assert fall.details["color"] == "black"
    assert fall.details["result"] == "1-0"
    assert fall.details["provisional"] is True
    (late,) = _alerts(daemon, 2, "late_arrival")  # the warning, then the default stage
    assert (late.details["stage"], late.details["color"], late.is_open) == (
        "default",
        "white",
        True,
    )
    assert [step.step for step in late.history] == ["raised", "updated"]
    (offline,) = _alerts(daemon, 3, "board_offline")
    assert offline.history[-1].note.startswith("the e-board answers again after")
    (sync,) = _alerts(daemon, 4, "out_of_sync")
    assert chess.BaseBoard(sync.details["placement"]).piece_at(chess.E3) == WHITE_KING
    assert (sync.state, sync.history[-1].note) == ("resolved", "the pieces match the game again")
    starts = [a for a in _alerts(daemon, 5, "clock_mismatch") if a.details["check"] == "start"]
    assert len(starts) == 1
    assert not _alerts(daemon, 2, "clock_mismatch"), "a correctly set clock raises nothing"
