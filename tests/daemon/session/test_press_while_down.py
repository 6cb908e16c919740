"""A lever press made while the daemon is down keeps its ``[%clk]`` (issue 21, item 8).

Real daemon, an emulated board on a pty: the daemon stops while White's move stands on
the board and its lever is not pressed yet; White presses while nobody watches (and, in
the longer stop, both players go on); the daemon starts again after the settle time of
a move without a press (the restarted daemon's is short: ``RESTARTED``). The move is
completed by its press (seen live on the clock, or read from the board's memory): every
``[%clk]`` is the clock's own time after its press, increment included, never the time
before it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import chess
import chess.pgn
import pytest

from daemon.journal.store import Journal
from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import HumanPlayer, PressLever, TimedAction
from tests.daemon.conftest import Serve
from tests.daemon.recovery_support import check_record, play_part
from tests.daemon.support import (
    FAST_TRACKER,
    BoardSpec,
    journal_moves,
    play_after_each_increment,
    read_game,
    running_daemon,
    wait_for,
    write_config,
)

SPEED = 20.0
#: White's 3rd move stands on the board after these plies, unpressed.
PLAYED = 4
#: The restarted daemon: a move whose placement stood this long with the clock running
#: but no press is taken without it (FAST_TRACKER: 2 s), so that the daemon need be down
#: only a moment longer for that to be the wrong answer it must not give.
RESTARTED = dataclasses.replace(FAST_TRACKER, clock_settle_time=0.5)


#: How long the daemon is down: longer than the restarted daemon's settle time.
DOWN = RESTARTED.clock_settle_time * 1.5


async def _followed_then_moved(
    board: EmulatedBoard, daemon: Daemon, game: chess.pgn.Game, played: int
) -> list[TimedAction]:
    """``played`` plies followed live, then the next move's piece moved but its lever not
    pressed yet: that move's schedule, whose last action is the press."""
    moves = list(game.mainline_moves())
    await play_part(board, game, 0, played, speed=SPEED)
    await wait_for(lambda: len(daemon.core.games[1].record.moves) == played, 10, "live plies")
    position = chess.Board()
    for move in moves[:played]:
        position.push(move)
    player = HumanPlayer(seed=3, speed=SPEED, white_side=board.white_side)
    schedule = player.move(position, moves[played])
    await board.perform(schedule[:-1])
    return schedule


@pytest.mark.parametrize("later", [0, 5], ids=["only the press", "the press and 5 plies"])
async def test_a_press_while_the_daemon_is_down_keeps_its_clock(
    later: int, tmp_path: Path, games_dir: Path, serve: Serve
) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)  # 37 plies
    played = PLAYED
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=40 + later) as board:
        async with serve(board) as daemon:
            schedule = await _followed_then_moved(board, daemon, game, played)
            press = schedule[-1].action  # the piece is moved ...
            assert isinstance(press, PressLever)
            tracker = daemon.core.games[1].tracker
            assert tracker is not None
            await wait_for(lambda: tracker.sensed == board.physical.placement, 10, "seen")
        board.act(press)  # ... and the lever pressed while the daemon is down
        if later:
            await play_part(board, game, played + 1, played + 1 + later, speed=SPEED)
        # Longer than the settle time of a move without a press (nobody watched it pass).
        await asyncio.sleep(DOWN)
        plies = played + 1 + later
        async with running_daemon(serve.config, tracker=RESTARTED) as daemon:
            record = daemon.core.games[1].record
            await wait_for(lambda: len(record.moves) == plies, 30, f"{plies} plies")
            line = check_record(tmp_path / "journal.db", 1, game, board, plies)
    pressed = line[played]
    assert pressed["clock"] > pressed["clock_before"], "the increment is in its [%clk]"


async def test_a_mode_23_press_while_the_daemon_is_down_gets_its_increment(
    tmp_path: Path, games_dir: Path
) -> None:
    """A mode 23 clock adds nothing by itself: the press nobody saw gets its increment
    from dgtcast once it is back, on the clock and in the ``[%clk]``."""
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)
    moves = list(game.mainline_moves())
    played = PLAYED
    clock = ClockSettings(base_seconds=300, increment_seconds=0, mode=23)  # set to 3+2
    async with EmulatedBoard(clock=clock, seed=47) as board:
        config = write_config(tmp_path, [BoardSpec(1, str(board.path))], dgt_mode=23)
        async with running_daemon(config, set_clocks=True) as daemon:
            await wait_for(lambda: board.clock.display_text is not None, 15, "clock set")
            player = HumanPlayer(seed=3, speed=SPEED)
            position = chess.Board()
            await play_after_each_increment(board, player.play(moves[:played]), daemon=daemon)
            for move in moves[:played]:
                position.push(move)
            await wait_for(
                lambda: len(daemon.core.games[1].record.moves) == played, 10, "live plies"
            )
            schedule = player.move(position, moves[played])
            await board.perform(schedule[:-1])
            tracker = daemon.core.games[1].tracker
            assert tracker is not None
            await wait_for(lambda: tracker.sensed == board.physical.placement, 10, "seen")
        board.act(schedule[-1].action)
        await asyncio.sleep(DOWN)
        async with running_daemon(config, tracker=RESTARTED) as daemon:
            record = daemon.core.games[1].record
            await wait_for(lambda: len(record.moves) == played + 1, 30, "the pressed move")
            await wait_for(lambda: board.clock.running == "right", 10, "Black's time runs")
            pressed = [seconds for _, seconds in board.firmware.presses[: played + 1]]
            # The correction reaches the clock after the move is recorded: wait for it.
            await wait_for(
                lambda: board.clock.remaining("left", board.now()) == pressed[-1] + 2,
                10,
                "the clock got the increment too",
            )
    line = journal_moves(tmp_path / "journal.db", 1)
    assert [m["clock"] for m in line] == [seconds + 2 for seconds in pressed]


async def test_readings_queued_while_the_daemon_was_down_wait_for_the_memory(
    tmp_path: Path, games_dir: Path, serve: Serve
) -> None:
    """White's move stands unpressed when the daemon stops; White presses and both sides
    play on. The board went on reporting the clock meanwhile: readings reach the daemon
    before the first board dump of its new connection. They wait until the memory was
    asked, so the pending move gets its own press's [%clk], not a later one's."""
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)
    played, later = PLAYED, 4
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=44) as board:
        async with serve(board) as daemon:
            schedule = await _followed_then_moved(board, daemon, game, played)
            tracker = daemon.core.games[1].tracker
            assert tracker is not None
            await wait_for(lambda: tracker.sensed == board.physical.placement, 10, "seen")
        board.act(schedule[-1].action)
        await play_part(board, game, played + 1, played + 1 + later, speed=SPEED)
        plies = played + 1 + later
        async with running_daemon(serve.config) as daemon:
            record = daemon.core.games[1].record
            await wait_for(lambda: len(record.moves) == plies, 30, f"{plies} plies")
        check_record(tmp_path / "journal.db", 1, game, board, plies)
    with Journal(tmp_path / "journal.db", read_only=True) as journal:
        records = list(journal.records(board=1, kinds={"link", "clock", "placement", "recovery"}))
    online = max(i for i, r in enumerate(records) if r.kind == "link")
    assert records[online + 1].kind != "clock", "a reading before the first dump was decided"
