"""Time controls on emulated boards over ptys, served by a real daemon.

* Move-count periods: a mode-23 clock, which adds nothing, gets the next period from the
  daemon after move 3; every [%clk] is the clock's reading right after the press. The
  move-40 period change on a mode 23 clock, on a clock that runs it and on one that
  misses the bonus runs in virtual time (tests/virtual/test_periods.py).
* Armageddon: White 6 s, Black 3 s, 2 s from move 61, draw odds for Black; one game is
  lost on time, the other drawn on time (White cannot mate), which counts for Black.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import chess

from broadcast.feed.alerts import Alert
from broadcast.feed.commands import AcceptPosition
from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import HumanPlayer, Lift, Place
from tests.daemon.config_file import BoardSpec, SectionSpec, TomlTable, write_config
from tests.daemon.support import (
    journal_moves,
    play_after_each_increment,
    press_readings,
    read_game,
    running_daemon,
    wait_for,
)

SPEED = 25.0
INCREMENT = 1  # of the mode 23 test's control


def _config(folder: Path, section: str, keys: TomlTable, boards: list[BoardSpec]) -> Path:
    """A round of one section, ``keys`` its time control."""
    spec = SectionSpec(section, boards, keys)
    return write_config(folder, [], site=None, time_control=None, sections=[spec])


def _board(number: int, board: EmulatedBoard, clock_white_side: str | None = None) -> BoardSpec:
    white, black = f"White, {number}", f"Black, {number}"
    return BoardSpec(number, str(board.path), white, black, clock_white_side)


def _alerts(daemon: Daemon, board: int, kind: str) -> list[Alert]:
    return [a for a in daemon.core.engine.alerts if a.board == board and a.kind == kind]


def _played(daemon: Daemon, board: int, plies: int) -> Callable[[], bool]:
    def done() -> bool:
        state = daemon.hub.state(board)
        return state is not None and len(state.moves) == plies

    return done


def _flagged(daemon: Daemon, board: int) -> Callable[[], bool]:
    return lambda: bool(_alerts(daemon, board, "flag_fall"))


def _shown(board: EmulatedBoard) -> tuple[int, int]:
    reading = board.clock.reading(board.now())
    return reading.left.seconds, reading.right.seconds


async def test_the_daemon_adds_the_next_period_on_a_mode_23_clock(
    tmp_path: Path, games_dir: Path
) -> None:
    """A mode-23 clock adds nothing; the daemon adds the period's 2 minutes after move 3."""
    game = read_game(games_dir / "nepomniachtchi-liren-game1.pgn")
    plies = 8
    async with EmulatedBoard(clock=ClockSettings(base_seconds=60, mode=23), seed=3) as board:
        keys: TomlTable = {"time_control": "3 moves in 5m + 1s, then 2m + 1s", "dgt_mode": 23}
        config = _config(tmp_path, "Rapid", keys, [_board(1, board)])
        async with running_daemon(config, set_clocks=True) as daemon:
            await wait_for(lambda: _shown(board) == (301, 301), 15, "mode-23 clock set")
            player = HumanPlayer(seed=3, speed=SPEED)
            await play_after_each_increment(board, player.play(game, plies=plies), daemon=daemon)
            await wait_for(_played(daemon, 1, plies), 60, "the game")
            mismatches = _alerts(daemon, 1, "clock_mismatch")
            final = board.clock.reading(board.now())
    assert mismatches == [], "the daemon adds the period on a mode-23 clock"
    expected = [m.uci() for m in game.mainline_moves()][:plies]
    _check_record(tmp_path / "journal.db", 1, expected, {5: 121, 6: 121})
    assert final.left.seconds > 301 + 60, "White's clock got its 2 minutes"


def _check_record(journal: Path, number: int, expected: list[str], bonuses: dict[int, int]) -> None:
    """The moves, every [%clk] equal to the reading after the press, the period's bonus."""
    line = journal_moves(journal, number)
    assert [m["uci"] for m in line] == expected, f"board {number}"
    presses = press_readings(journal, number, "left")
    for index, color in enumerate(("white", "black")):
        clocks = [m["clock"] for m in line[index::2]]
        assert clocks == presses[color][: len(clocks)], f"board {number} {color}"
    for ply, bonus in bonuses.items():
        move = line[ply - 1]
        # clock_before is the last reading the daemon had before the press. The clock ran
        # on since (a tick whose report the press overtook on a busy machine; in mode 23
        # the readings dropped while the clock is being set), so it is never below the
        # time at the press: the press gains the bonus less those seconds, never more.
        gained = move["clock"] - move["clock_before"]
        assert gained <= bonus, (number, ply, gained)
        if bonus > INCREMENT:  # the next period's time is in it, not the increment alone
            assert gained > INCREMENT, (number, ply, gained)
        assert move["emt"] < 100, "the bonus is not taken for time spent"


ARMAGEDDON = {
    "time_control": "6s, +2s from move 61",
    "black_time_control": "3s, +2s from move 61",
    "draw_odds": "black",
}
#: White: a bare king, which cannot mate (FIDE 6.9); Black: king, rook and pawns.
DRAWN_ON_TIME = chess.BaseBoard("r5k1/5ppp/8/8/8/8/8/6K1")


async def test_armageddon_ends_on_time_under_draw_odds(tmp_path: Path, games_dir: Path) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")
    odds = ClockSettings(base_seconds=6, increment_seconds=0, start_right=3)
    mode_23 = ClockSettings(base_seconds=60, increment_seconds=0, mode=23)
    async with (
        EmulatedBoard(clock=odds, seed=1) as lost,
        EmulatedBoard(clock=odds, seed=2, placement=DRAWN_ON_TIME) as drawn,
        EmulatedBoard(clock=mode_23, seed=3, white_side="right") as settable,
        EmulatedBoard(clock=mode_23, seed=4) as unsure,
    ):
        boards = [_board(1, lost, "left"), _board(2, drawn, "left")]
        boards += [_board(3, settable, "right"), _board(4, unsure)]
        config = _config(tmp_path, "Armageddon", ARMAGEDDON, boards)
        async with running_daemon(config) as daemon:
            for number in (1, 2, 3, 4):
                await wait_for(daemon.sessions[number].online.is_set, 10, f"board {number} up")
            reply = await daemon.set_clocks()
            reading = settable.clock.reading(settable.now())
            assert (reading.left.seconds, reading.right.seconds) == (3, 6)
            assert reply.details["set"] == [3]
            assert "clock_white_side" in reply.details["failed"]["4"]
            assert "refused" in reply.details["failed"]["1"]
            assert (await daemon.service.execute(AcceptPosition(board=2))).ok
            await lost.play(game, speed=SPEED, plies=3)  # then Black's 3 s run out
            drawn.start_clock()
            drawn.act(Lift(square=chess.G1))
            drawn.act(Place(square=chess.F1, piece=chess.Piece(chess.KING, chess.WHITE)))
            drawn.press_lever("left")  # then Black's 3 s run out
            for number in (1, 2):
                await wait_for(_flagged(daemon, number), 30, f"flag on board {number}")
            state = daemon.hub.state(1)
            assert state is not None
            pgn = state.pgn
    (loss,) = _alerts(daemon, 1, "flag_fall")
    assert loss.details == {
        "color": "black",
        "result": "1-0",
        "provisional": True,
        "draw_odds": "black",
        "winner": "white",
    }
    assert "Draw odds for Black do not change a decisive result." in loss.action
    (draw,) = _alerts(daemon, 2, "flag_fall")
    assert (draw.details["result"], draw.details["winner"]) == ("1/2-1/2", "black")
    assert "With draw odds for Black, this draw counts as Black's win." in draw.action
    assert _alerts(daemon, 1, "clock_mismatch") == []
    for tag in (
        '[TimeControl "60/6:0+2"]',
        '[WhiteTimeControl "60/6:0+2"]',
        '[BlackTimeControl "60/3:0+2"]',
        '[DrawOdds "Black"]',
    ):
        assert tag in pgn
