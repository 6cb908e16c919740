"""Move-count periods and time odds in the game layer: [%clk] and [%emt] stay exact.

A clock that runs the period itself (as a DGT clock's multi-period option does) adds the
next period's time after move 40; the tracker's ``[%emt]`` must not take that for time
gained, and ``[%clk]`` is the time right after the press, bonus included.
"""

from __future__ import annotations

import math
from pathlib import Path

import chess
import chess.pgn
import pytest

from daemon.commands.emulate import emulated_clock
from daemon.game.durations import ClockRules, TimeControl
from daemon.game.events import MoveMade
from daemon.game.state import TrackerSettings
from drivers.emulator.clock import ChessClock, ClockSettings
from tests.game.table import Table


def _worlds_game(games_dir: Path) -> chess.pgn.Game:
    with (games_dir / "nepomniachtchi-liren-game1.pgn").open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    return game


def _thinking(ply: int) -> float:
    return 3.0 + (ply * 7) % 11  # 3-13 s, different for each move


@pytest.mark.parametrize("bonus", [3600, 0])
def test_clk_and_emt_exact_across_the_move_40_period_change(bonus: int, games_dir: Path) -> None:
    """With the bonus, and with a clock missing it: [%emt] is the time spent either way."""
    game = _worlds_game(games_dir)
    control = TimeControl.from_text(game.headers["TimeControl"])  # 40/7200:20/3600:900+30
    assert str(control) == "40/7200:20/3600:900+30"
    clock = ClockSettings(base_seconds=7200, increment_seconds=0, periods=((40, bonus),))
    settings = TrackerSettings(clock_rules=ClockRules.uniform(control))
    table = Table(settings=settings, clock=clock)
    table.start_clock()
    moves = list(game.mainline_moves())[:84]  # through Black's move 42
    times = {chess.WHITE: 7200.0, chess.BLACK: 7200.0}
    spent: list[float] = []
    for ply, move in enumerate(moves):
        board = table.tracker.board
        color = board.turn
        before = table.now
        table.play(move.uci(), think=_thinking(ply))
        used = table.now - before
        spent.append(used)
        times[color] += -used + (bonus if board.fullmove_number == 40 else 0)
    made = table.of_type(MoveMade)
    assert [m.uci for m in made] == [m.uci() for m in moves]
    for index, event in enumerate(made):
        assert event.emt is not None
        # Readings are whole seconds (rounded up), so [%emt] is within a second.
        assert abs(event.emt - spent[index]) <= 1.0, (index + 1, event.emt, spent[index])
    white_40 = made[78]
    assert white_40.ply == 79
    assert white_40.clock is not None
    assert white_40.clock_before is not None
    assert white_40.clock - white_40.clock_before == bonus, "the bonus is in [%clk]"
    assert white_40.emt is not None
    assert white_40.emt < 20, "the bonus is not taken for time gained"
    reading = table.clock.reading(table.now) if table.clock else None
    assert reading is not None
    assert reading.left.seconds == math.ceil(times[chess.WHITE] - 1e-9)


def test_emt_under_time_odds_and_a_late_increment() -> None:
    rules = ClockRules(
        white=TimeControl.from_text("5m, +2s from move 61"),
        black=TimeControl.from_text("4m, +2s from move 61"),
        draw_odds="black",
    )
    clock = ClockSettings(base_seconds=300, increment_seconds=0, start_right=240)
    table = Table(settings=TrackerSettings(clock_rules=rules), clock=clock)
    table.start_clock()
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6"):
        table.play(uci, think=4.0)
    made = table.of_type(MoveMade)
    assert [m.clock for m in made] == [296, 236, 291, 231]
    assert all(4 <= (m.emt or 0) <= 6 for m in made)


def test_the_demos_emulated_clock_runs_any_control() -> None:
    control = TimeControl.from_text("40/7200:20/3600:900+30")
    clock = ChessClock(emulated_clock(control))
    now = 0.0
    clock.start(now)
    gained = []
    for _ in range(62):
        for side in ("left", "right"):
            now += 1.0
            before = clock.remaining(side, now)
            clock.press_lever(side, now)
            gained.append(round(clock.remaining(side, now) - before))
    assert clock.reading(now).left.seconds == 7200 - 62 + 3600 + 900 + 2 * 30
    white = gained[0::2]
    assert white[39] == 3600
    assert white[59] == 900
    assert white[60] == 30
    assert set(white[:39]) == {0}
