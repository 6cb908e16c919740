"""Clock tracking: which side is White, [%clk] and [%emt], flags (docs/protocol.md §7.2)."""

from __future__ import annotations

import chess
import pytest

from daemon.game.clock import ClockContext, ClockTracker, LeverPress, other_side
from daemon.game.events import ClockSidesLearned, ClockUpdated, FlagFell, MoveMade
from daemon.game.state import TrackerSettings
from drivers.emulator.clock import ClockSettings, Side
from drivers.observations import ClockObserved, ClockSide
from tests.game.table import Table

LEFT, RIGHT = ClockSide.LEFT, ClockSide.RIGHT


def reading(
    left: int,
    right: int,
    running: ClockSide | None,
    at: float,
    *,
    left_flag: bool = False,
    right_flag: bool = False,
    connected: bool = True,
) -> ClockObserved:
    return ClockObserved(
        left_seconds=left,
        right_seconds=right,
        left_flag=left_flag,
        right_flag=right_flag,
        running=running,
        lever=running or LEFT,
        connected=connected,
        at=at,
    )


@pytest.mark.parametrize(("white_side", "expected"), [("left", LEFT), ("right", RIGHT)])
def test_the_side_that_runs_first_at_the_start_is_white(
    white_side: Side, expected: ClockSide
) -> None:
    table = Table(white_side=white_side)
    table.wait(3)
    assert table.of_type(ClockSidesLearned) == []
    table.start_clock()
    assert [e.white_side for e in table.of_type(ClockSidesLearned)] == [expected]
    assert table.tracker.white_side is expected
    table.play("e2e4")
    table.play("e7e5")
    # Each side used 2.8 s of its 3:02 and got 2 s back: 3:01.2 shows as 3:02.
    last = table.of_type(ClockUpdated)[-1]
    assert (last.white, last.black, last.running) == (182, 182, "white")
    assert [m.clock for m in table.of_type(MoveMade)] == [182, 182]


def test_learned_from_the_press_after_whites_move_when_the_clock_starts_late() -> None:
    # White moves before the clock runs; then the arbiter starts it (Black's lever is up
    # because White pressed). Learned when Black presses after Black's move.
    table = Table(white_side="right")
    table.play("e2e4", press=False)
    table.wait(3)
    table.press(chess.WHITE)  # stopped clock: only the lever moves
    table.start_clock()
    assert table.of_type(ClockSidesLearned) == []
    table.play("e7e5")
    assert [e.white_side for e in table.of_type(ClockSidesLearned)] == [RIGHT]
    assert table.moves() == ["e2e4", "e7e5"]


def test_configured_side_is_used_and_not_announced() -> None:
    table = Table(white_side="right", settings=TrackerSettings(white_side=RIGHT))
    table.start_clock()
    table.play("e2e4")
    assert table.of_type(ClockSidesLearned) == []
    assert table.of_type(ClockUpdated)[0].white == 182


def test_clock_and_elapsed_time_of_each_move() -> None:
    """3 min + 2 s starts at 3:02 (§7.2 "Observed"). White uses 5.8 s: 2:56.2 shows as
    2:57 just before the press, 2:59 after the increment; [%emt] 3:02 + 2 - 2:59."""
    table = Table(settings=TrackerSettings(increment=2))
    table.start_clock()
    table.play("e2e4", think=5.0)
    table.play("e7e5", think=10.0)
    white, black = table.of_type(MoveMade)
    assert (white.clock_before, white.clock, white.emt) == (177, 179, 5)
    assert (black.clock_before, black.clock, black.emt) == (172, 174, 10)


def test_a_wrong_increment_shows_in_clock_before_and_emt_stays_the_time_spent() -> None:
    # The arbiter can compare clock - clock_before with the time control's increment
    # (the clock_mismatch alert does); [%emt] is the time the player spent, not the
    # time spent as if the clock had added what it should have.
    table = Table(
        settings=TrackerSettings(increment=30),
        clock=ClockSettings(base_seconds=180, increment_seconds=2),
    )
    table.start_clock()
    table.play("e2e4", think=5.0)
    (white,) = table.of_type(MoveMade)
    assert white.clock is not None
    assert white.clock_before is not None
    assert white.clock - white.clock_before == 2
    assert white.emt == 5


def test_without_a_connected_clock_moves_have_no_times() -> None:
    table = Table(clock=None)
    table.play("e2e4", press=False)
    table.wait(2)
    (move,) = table.of_type(MoveMade)
    assert (move.clock, move.clock_before, move.emt) == (None, None, None)


# -- ClockTracker on its own --------------------------------------------------------------


def context(**kwargs: object) -> ClockContext:
    return ClockContext(board=chess.Board(), **kwargs)  # type: ignore[arg-type]


def test_a_press_is_the_running_side_changing() -> None:
    clock = ClockTracker()
    assert clock.receive_clock(reading(182, 182, None, 0.0), context(start_stands=True)) is None
    assert clock.receive_clock(reading(182, 182, LEFT, 1.0), context(start_stands=True)) is None
    assert clock.white_side is LEFT
    clock.receive_clock(reading(179, 182, LEFT, 4.0), context(moving=chess.WHITE))
    press = clock.receive_clock(reading(181, 182, RIGHT, 4.5), context(moving=chess.WHITE))
    assert press == LeverPress(side=LEFT, before=179, after=181, started=182, at=4.5)
    assert clock.move_clock(chess.WHITE, press, None).emt == 3
    # A pause and a resume are not presses.
    assert clock.receive_clock(reading(181, 180, None, 6.0), context()) is None
    assert clock.receive_clock(reading(181, 180, RIGHT, 7.0), context()) is None


def test_clock_updates_by_colour_without_repeats() -> None:
    clock = ClockTracker(white_side=RIGHT)
    clock.receive_clock(reading(100, 200, RIGHT, 0.0), context())
    clock.receive_clock(reading(100, 200, RIGHT, 0.5), context())
    clock.receive_clock(reading(100, 199, RIGHT, 1.0), context())
    assert clock.events_received() == [
        ClockUpdated(white=200, black=100, running="white", at=0.0),
        ClockUpdated(white=199, black=100, running="white", at=1.0),
    ]


def test_flag_by_zero_on_the_running_side_without_the_flag_bit() -> None:
    clock = ClockTracker(white_side=LEFT)
    board = chess.Board("4k3/8/8/8/8/8/8/4K2R b - - 0 1")
    clock.receive_clock(reading(50, 1, RIGHT, 0.0), ClockContext(board=board))
    clock.receive_clock(reading(50, 0, None, 1.0), ClockContext(board=board))
    clock.receive_clock(reading(50, 0, None, 2.0, right_flag=True), ClockContext(board=board))
    flags = [e for e in clock.events_received() if isinstance(e, FlagFell)]
    assert flags == [FlagFell(color="black", result="1-0", provisional=True, at=1.0)]


def test_flag_bit_alone_is_a_flag_and_none_once_the_game_ended() -> None:
    ended = ClockTracker(white_side=LEFT)
    ended.receive_clock(reading(0, 9, None, 0.0, left_flag=True), context(ended=True))
    assert ended.events_received() == [ClockUpdated(white=0, black=9, running=None, at=0.0)]
    live = ClockTracker(white_side=LEFT)
    live.receive_clock(reading(0, 9, None, 0.0, left_flag=True), context())
    assert FlagFell(color="white", result="0-1", provisional=True, at=0.0) in live.events_received()


def test_a_disconnected_clock_reports_nothing() -> None:
    clock = ClockTracker(white_side=LEFT)
    clock.receive_clock(reading(0, 0, None, 0.0, connected=False), context())
    assert clock.events_received() == []
    assert not clock.is_connected
    assert clock.seconds(chess.WHITE) is None


def test_learning_starts_again_with_a_new_game() -> None:
    clock = ClockTracker()
    clock.receive_clock(reading(60, 60, RIGHT, 0.0), context(start_stands=True))
    assert clock.white_side is RIGHT
    clock.reset()
    assert clock.white_side is None
    assert other_side(RIGHT) is LEFT
