"""Mode 23: dgtcast adds the increment after every lever press, and only then."""

from __future__ import annotations

import dataclasses
import itertools
import time
from pathlib import Path

import chess

from daemon.game.durations import ClockRules, TimeControl
from daemon.mode23.control import IncrementControl, IncrementState
from daemon.mode23.game_moves import move_number_of
from daemon.mode23.gap_increments import GapIncrements, clock_gained
from daemon.round.board_game import ledger_since
from drivers.emulator.clock import ClockReading, ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import HumanPlayer
from drivers.observations import ClockObserved, ClockSide
from tests.daemon.round.clock_readings import clock_reading as _reading
from tests.daemon.support import (
    BoardSpec,
    journal_moves,
    play_after_each_increment,
    read_game,
    running_daemon,
    wait_for,
    write_config,
)

LEFT, RIGHT = ClockSide.LEFT, ClockSide.RIGHT


def test_a_press_on_a_mode_23_clock_gets_the_increment() -> None:
    control = IncrementControl(TimeControl.from_pgn("5400+30"))
    assert control.receive_reading(_reading(5430, 5430, LEFT)) == (
        _reading(5430, 5430, LEFT),
        None,
    )
    corrected, command = control.receive_reading(_reading(5412, 5430, RIGHT))
    assert corrected == _reading(5442, 5430, RIGHT)
    assert command is not None
    assert (command.left_seconds, command.right_seconds, command.run) == (5442, 5430, "right")
    assert command.toggle_on_lever
    assert control.receive_reading(_reading(5412, 5429, RIGHT)) == (None, None), "stale"
    control.receive_done()
    assert control.receive_reading(_reading(5442, 5428, RIGHT))[1] is None
    corrected, command = control.receive_reading(_reading(5442, 5420, LEFT))
    assert corrected == _reading(5442, 5450, LEFT)
    assert command is not None


def test_a_clock_that_adds_increments_itself_is_left_alone() -> None:
    control = IncrementControl(TimeControl.from_pgn("5400+30"))
    control.receive_reading(_reading(5430, 5430, LEFT))
    reading = _reading(5459, 5430, RIGHT)  # the clock added 30 s itself
    assert control.receive_reading(reading) == (reading, None)
    assert control.state is IncrementState.CLOCK_ADDS
    later = _reading(5459, 5400, LEFT)
    assert control.receive_reading(later) == (later, None)


def test_no_increment_no_command() -> None:
    control = IncrementControl(TimeControl.from_pgn("600"))
    control.receive_reading(_reading(600, 600, LEFT))
    assert control.receive_reading(_reading(590, 600, RIGHT))[1] is None


async def test_daemon_adds_increments_on_a_mode_23_clock(tmp_path: Path, games_dir: Path) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")  # 10 plies
    settings = ClockSettings(base_seconds=300, increment_seconds=0, mode=23)  # set to 10+5
    async with EmulatedBoard(clock=settings, seed=5) as board:
        config = write_config(
            tmp_path, [BoardSpec(1, str(board.path))], time_control="600+5", dgt_mode=23
        )
        async with running_daemon(config, set_clocks=True) as daemon:

            def reading() -> ClockReading:
                return board.clock.reading(board.now())

            await wait_for(lambda: reading().left.seconds == 605, 15, "clock set")
            started = time.monotonic()
            player = HumanPlayer(seed=5, speed=40)
            await play_after_each_increment(board, player.play(game), daemon=daemon)
            await wait_for(lambda: daemon.core.engine.result_of(1) is not None, 10, "mate")
            spent = time.monotonic() - started
            final = reading()
            mismatches = [a for a in daemon.core.engine.alerts if a.kind == "clock_mismatch"]
    assert not mismatches, mismatches
    white_moves = 5
    assert final.left.seconds >= 605 + 5 * white_moves - spent - 2, "every increment added"
    line = journal_moves(tmp_path / "journal.db", 1)
    assert len(line) == 10
    # Each press gained the increment (the reading before it may be a second old).
    assert all(4 <= m["clock"] - m["clock_before"] <= 7 for m in line), line


def test_mode_23_adds_the_next_periods_time_after_move_40() -> None:
    control = IncrementControl(TimeControl.from_text("40/5400+30:1800+30"))
    left, right = 5430, 5430
    control.receive_reading(_reading(left, right, LEFT))
    added: list[int] = []
    for _ in range(41):
        for mover, after in ((LEFT, RIGHT), (RIGHT, LEFT)):
            left, right = (left - 5, right) if mover is LEFT else (left, right - 5)
            control.receive_reading(_reading(left, right, mover))
            corrected, command = control.receive_reading(_reading(left, right, after))
            assert corrected is not None
            assert command is not None
            control.receive_done()
            gained = (
                (corrected.left_seconds - left)
                if mover is LEFT
                else (corrected.right_seconds - right)
            )
            added.append(gained)
            left, right = corrected.left_seconds, corrected.right_seconds
    assert added[78:80] == [1830, 1830], "move 40 of both sides"
    assert set(added[:78]) == {30}
    assert added[80:] == [30, 30]
    assert control.presses == {LEFT: 41, RIGHT: 41}
    control.reset()
    assert control.presses == {}


def test_mode_23_under_time_odds_uses_each_sides_control() -> None:
    rules = ClockRules(
        white=TimeControl.from_text("60/300:0+2"), black=TimeControl.from_text("60/240:0+3")
    )
    control = IncrementControl(rules, white_side=RIGHT)
    control.receive_reading(_reading(240, 300, RIGHT))
    for _ in range(60):
        control.receive_reading(_reading(240, 299, LEFT))
        control.receive_reading(_reading(240, 299, RIGHT))
    corrected, command = control.receive_reading(_reading(240, 299, LEFT))  # White's 61st
    assert command is not None
    assert corrected == _reading(240, 301, LEFT)
    control.receive_done()
    corrected, _ = control.receive_reading(_reading(239, 301, RIGHT))  # Black's 61st
    assert corrected == _reading(242, 301, RIGHT)


def test_the_game_says_which_move_a_press_completes() -> None:
    board = chess.Board()
    assert move_number_of(board, chess.WHITE) == 1  # White's move 1 pending
    board.push_san("e4")
    assert move_number_of(board, chess.WHITE) == 1  # published before the press
    assert move_number_of(board, chess.BLACK) == 1
    board.push_san("e5")
    assert move_number_of(board, chess.BLACK) == 1
    assert move_number_of(board, chess.WHITE) == 2


def test_a_daemon_restarted_mid_game_adds_the_bonus_after_move_40() -> None:
    # Restarted at move 39: counting presses would put the bonus at move 78.
    numbers = {LEFT: 39, RIGHT: 39}
    control = IncrementControl(TimeControl.from_text("40/5400+30:1800+30"), move_number=numbers.get)
    control.receive_reading(_reading(900, 800, LEFT))
    corrected, _ = control.receive_reading(_reading(890, 800, RIGHT))  # White's 39th
    assert corrected == _reading(920, 800, RIGHT)
    control.receive_done()
    numbers[LEFT] = 40
    control.receive_reading(_reading(920, 790, LEFT))  # Black's 39th
    control.receive_done()
    corrected, _ = control.receive_reading(_reading(910, 820, RIGHT))  # White's 40th
    assert corrected == _reading(910 + 1830, 820, RIGHT)


def test_without_a_game_presses_are_counted() -> None:
    control = IncrementControl(TimeControl.from_text("2/600:300"), move_number=lambda _: None)
    control.receive_reading(_reading(600, 600, LEFT))
    for left, right, running in ((590, 600, RIGHT), (590, 590, LEFT), (580, 590, RIGHT)):
        corrected, command = control.receive_reading(_reading(left, right, running))
    assert corrected == _reading(880, 590, RIGHT), "White's second press brings the period"
    assert command is not None


def _at(reading: ClockObserved, at: float) -> ClockObserved:
    return dataclasses.replace(reading, at=at)


def test_a_reply_the_late_setnrun_undid_is_carried_out() -> None:
    control = IncrementControl(TimeControl.from_pgn("300+5"))
    control.receive_reading(_reading(305, 305, LEFT))
    corrected, command = control.receive_reading(_at(_reading(300, 305, RIGHT), 10.0))
    assert corrected == _at(_reading(305, 305, RIGHT), 10.0)
    assert command is not None
    # Black replies at once; the clock then carries out the SETNRUN: Black runs again.
    assert control.receive_reading(_at(_reading(300, 304, LEFT), 11.0)) == (None, None)
    control.receive_done()
    fixed, again = control.receive_reading(_at(_reading(305, 303, RIGHT), 13.0))
    # Black's time at the reply plus 5 s; White's running since the reply (2 s).
    assert fixed == _at(_reading(303, 309, LEFT), 13.0)
    assert again is not None
    assert (again.left_seconds, again.right_seconds, again.run) == (303, 309, "left")


def _reply_carried_out(control: IncrementControl) -> None:
    """White presses (its SETNRUN on its way), Black replies at once and the SETNRUN undoes
    the reply: dgtcast carries it out with a second SETNRUN, White's time running."""
    control.receive_reading(_reading(305, 305, LEFT))
    control.receive_reading(_at(_reading(300, 305, RIGHT), 10.0))
    control.receive_reading(_at(_reading(300, 304, LEFT), 11.0))  # Black's reply, undone
    control.receive_done()
    _, again = control.receive_reading(_at(_reading(305, 303, RIGHT), 13.0))
    assert again is not None
    assert again.run == "left"  # the reply carried out


def test_a_reading_from_before_the_redone_press_is_no_second_reply() -> None:
    """The SETNRUN that carries out a reply runs the other side; a reading the clock sent
    before it arrived still shows the side that ran until then: no press, no increment."""
    control = IncrementControl(TimeControl.from_pgn("300+5"))
    _reply_carried_out(control)
    # On the line before the clock took it: the clock as the first SETNRUN left it.
    assert control.receive_reading(_at(_reading(305, 302, RIGHT), 13.5)) == (None, None)
    assert control.receive_reading(_at(_reading(302, 309, LEFT), 14.0)) == (None, None)
    assert control.receive_done() is None, "nobody pressed: nothing to carry out"
    recorded, command = control.receive_reading(_at(_reading(301, 309, LEFT), 15.0))
    assert recorded == _at(_reading(301, 309, LEFT), 15.0)
    assert command is None


def test_a_press_the_redo_swallowed_is_carried_out() -> None:
    """The SETNRUN that carries out Black's reply runs White, whom the clock did not run:
    White's press while it is on its way does nothing (Black runs). At its ack the board
    shows White's move on its way: that press is carried out as well."""
    moving: list[ClockSide | None] = [None]
    control = IncrementControl(TimeControl.from_pgn("300+5"), moving=lambda: moving[0])
    _reply_carried_out(control)
    moving[0] = LEFT  # White moved and pressed: the clock ran Black, the lever did nothing
    assert control.receive_reading(_at(_reading(302, 309, LEFT), 14.0)) == (None, None)
    swallowed = control.receive_done()
    assert swallowed is not None
    fixed, command = control.receive_reading(swallowed)
    assert fixed == _at(_reading(307, 309, RIGHT), 14.0)  # White's time then, plus 5 s
    assert command is not None
    assert command.run == "right"


def test_a_move_on_its_way_after_an_ordinary_setnrun_waits_for_its_press() -> None:
    """The SETNRUN after a press runs the side the clock runs already: a press by that
    side shows in the readings, so a move of it the board shows is left to its press."""
    control = IncrementControl(TimeControl.from_pgn("300+5"), moving=lambda: RIGHT)
    control.receive_reading(_reading(305, 305, LEFT))
    _, command = control.receive_reading(_at(_reading(300, 305, RIGHT), 10.0))
    assert command is not None
    assert control.receive_reading(_at(_reading(305, 305, RIGHT), 10.2)) == (None, None)
    assert control.receive_done() is None


def test_a_reply_after_the_setnrun_is_an_ordinary_press() -> None:
    control = IncrementControl(TimeControl.from_pgn("300+5"))
    control.receive_reading(_reading(305, 305, LEFT))
    control.receive_reading(_at(_reading(300, 305, RIGHT), 10.0))
    control.receive_reading(_at(_reading(305, 304, LEFT), 11.0))  # stale: before the ack
    control.receive_done()
    fixed, again = control.receive_reading(_at(_reading(304, 304, LEFT), 12.0))
    assert fixed == _at(_reading(304, 309, LEFT), 12.0)
    assert again is not None


def _state(control: IncrementControl) -> IncrementState:
    """The state now (read through a call: each assert sees it anew)."""
    return control.state


def test_the_press_that_starts_the_clock_adds_nothing() -> None:
    # Play pressed with Black's lever up: Black's time runs; Black presses to start
    # White's. The game says the press completes move 0 (the start position stands).
    numbers = {LEFT: 0, RIGHT: 0}
    control = IncrementControl(TimeControl.from_pgn("5400+30"), move_number=numbers.get)
    control.receive_reading(_reading(5430, 5430, RIGHT))
    reading = _reading(5430, 5429, LEFT)
    assert control.receive_reading(reading) == (reading, None)
    assert _state(control) is IncrementState.WATCHING, "nothing learnt from a start press"
    numbers[LEFT] = 1  # White's move 1 on the board: its press gets the increment
    corrected, command = control.receive_reading(_reading(5420, 5429, RIGHT))
    assert corrected == _reading(5450, 5429, RIGHT)
    assert command is not None


def test_a_black_press_before_whites_first_move_is_no_move() -> None:
    # Without the start position known (sides learnt, no game tracker answer of 0):
    # Black's move number before White's first move is 0, never a ValueError.
    board = chess.Board()
    control = IncrementControl(
        TimeControl.from_pgn("5400+30"),
        white_side=LEFT,
        move_number=lambda side: move_number_of(board, side is LEFT),
    )
    control.receive_reading(_reading(5430, 5430, RIGHT))
    reading = _reading(5430, 5429, LEFT)
    assert control.receive_reading(reading) == (reading, None)


def test_a_clock_that_adds_its_own_later_is_never_added_to_again() -> None:
    # Mode 23 in round 1; in round 2 another clock (a Fischer option) without a reset.
    control = IncrementControl(TimeControl.from_pgn("5400+30"))
    control.receive_reading(_reading(5430, 5430, LEFT))
    _, command = control.receive_reading(_reading(5420, 5430, RIGHT))
    assert command is not None
    assert _state(control) is IncrementState.SETTING
    control.receive_done()
    control.receive_reading(_reading(5450, 5425, RIGHT))
    own = _reading(5450, 5455, LEFT)  # Black's press: the clock added 30 s itself
    assert control.receive_reading(own) == (own, None)
    assert _state(control) is IncrementState.CLOCK_ADDS
    later = _reading(5470, 5455, RIGHT)
    assert control.receive_reading(later) == (later, None), "never 60 s"


def test_a_reset_decides_again_who_adds_the_time() -> None:
    control = IncrementControl(TimeControl.from_pgn("5400+30"))
    control.receive_reading(_reading(5430, 5430, LEFT))
    control.receive_reading(_reading(5459, 5430, RIGHT))
    assert _state(control) is IncrementState.CLOCK_ADDS
    control.reset()  # the next round: a mode 23 clock, set by dgtcast
    assert _state(control) is IncrementState.WATCHING
    control.receive_reading(_reading(5430, 5430, LEFT))
    corrected, command = control.receive_reading(_reading(5425, 5430, RIGHT))
    assert corrected == _reading(5455, 5430, RIGHT)
    assert command is not None


def test_readings_taken_before_the_clock_set_was_heard_of_still_count() -> None:
    control = IncrementControl(TimeControl.from_pgn("600+5"))
    # the clock's ack, its paused times and Black's start press come in one read: the
    # session takes the readings before the shell that set the clock hears of the ack
    control.receive_reading(_reading(605, 605, None))
    control.receive_reading(_reading(605, 605, LEFT))
    control.clock_set(605, 605)
    corrected, command = control.receive_reading(_reading(605, 605, RIGHT))  # White's e4
    assert corrected == _reading(610, 605, RIGHT)
    assert command is not None, "White's first press gets its increment"


def test_a_reading_from_before_the_clock_set_is_no_press() -> None:
    control = IncrementControl(TimeControl.from_pgn("600+5"))
    control.receive_reading(_reading(700, 650, RIGHT))  # the last game's clock
    control.clock_set(605, 605)
    reading = _reading(605, 604, LEFT)  # set, and started at once
    assert control.receive_reading(reading) == (reading, None)
    corrected, command = control.receive_reading(_reading(600, 604, RIGHT))
    assert corrected == _reading(605, 604, RIGHT)
    assert command is not None


def test_a_press_made_while_nobody_listened_gets_its_increment() -> None:
    control = IncrementControl(TimeControl.from_pgn("5400+30"))
    control.reset(_reading(5000, 5100, LEFT))  # the journal's last reading, White running
    corrected, command = control.receive_reading(_reading(4990, 5099, RIGHT))
    assert corrected == _reading(5020, 5099, RIGHT), "White pressed meanwhile"
    assert command is not None


def test_a_clock_set_while_nobody_listened_is_no_press() -> None:
    control = IncrementControl(TimeControl.from_pgn("5400+30"))
    control.reset(_reading(1000, 900, LEFT))
    reading = _reading(5430, 5429, RIGHT)  # set anew and started: no press of this game
    assert control.receive_reading(reading) == (reading, None)
    assert _state(control) is IncrementState.WATCHING


# -- presses replayed from the board's memory (a gap nobody answered) ---------------------


def _gap(rules: TimeControl, first: ClockObserved, owed: dict[ClockSide, int]) -> GapIncrements:
    """White on the left, whose next press completes its move 38; Black's its move 37."""
    following = {LEFT: itertools.count(38), RIGHT: itertools.count(37)}
    return GapIncrements(lambda side: rules, lambda side: next(following[side]), first, owed)


def test_each_replayed_press_gets_every_increment_its_side_lacks() -> None:
    """Moves 38 to 40 of each side in the gap: each [%clk] the logged time plus every
    increment of that side so far, and move 40's period (600 s) on top."""
    rules = TimeControl.from_pgn("40/1800+10:600+10")
    gap = _gap(rules, _reading(300, 280, LEFT), {})
    logged = [
        _reading(290, 280, RIGHT),  # White's 38th: 10 s thinking
        _reading(290, 270, LEFT),  # Black's 37th ... (the clock only counts down)
        _reading(281, 270, RIGHT),
        _reading(281, 262, LEFT),
        _reading(270, 262, RIGHT),  # White's 40th: + 10 + 600
    ]
    assert not clock_gained(_reading(300, 280, LEFT), logged)
    shown = [gap.receive(r) for r in logged]
    assert [(r.left_seconds, r.right_seconds) for r in shown] == [
        (300, 280),
        (300, 280),
        (301, 280),
        (301, 282),
        (900, 282),
    ]
    assert gap.owed == {LEFT: 630, RIGHT: 20}


def test_what_an_earlier_gap_left_unpaid_is_carried() -> None:
    rules = TimeControl.from_pgn("5400+30")
    first = _reading(5000, 4900, LEFT)  # already what the clock should show
    gap = GapIncrements(lambda side: rules, lambda side: 5, first, {LEFT: 60, RIGHT: 30})
    shown = gap.receive(_reading(4920, 4900, RIGHT))  # the clock's own: lacks 60 s
    assert (shown.left_seconds, shown.right_seconds) == (5010, 4900)  # Black untouched
    shown = gap.receive(_reading(4920, 4850, LEFT))
    assert (shown.left_seconds, shown.right_seconds) == (5010, 4910)
    assert gap.owed == {LEFT: 90, RIGHT: 60}


def test_a_log_in_which_a_time_grew_shows_a_clock_that_adds_its_own() -> None:
    first = _reading(300, 280, LEFT)
    assert clock_gained(first, [_reading(305, 280, RIGHT)])  # 5 s thinking, 10 s added
    assert not clock_gained(first, [_reading(301, 280, RIGHT)])  # a second of rounding


def test_what_the_clock_lacks_is_given_once_with_the_next_reading() -> None:
    control = IncrementControl(TimeControl.from_pgn("600+10"))
    control.reset(_reading(500, 480, LEFT))  # the journal's, before the gap
    control.owe({LEFT: 20, RIGHT: 10})
    corrected, command = control.receive_reading(_reading(470, 455, RIGHT))
    assert corrected == _reading(490, 465, RIGHT)
    assert command is not None
    assert (command.left_seconds, command.right_seconds, command.run) == (490, 465, "right")
    control.receive_done()
    assert control.receive_reading(_reading(490, 464, RIGHT)) == (_reading(490, 464, RIGHT), None)


def test_a_clock_seen_adding_its_own_in_the_memory_is_left_alone() -> None:
    control = IncrementControl(TimeControl.from_pgn("600+10"))
    control.reset(_reading(500, 480, LEFT))
    control.leave_alone()
    assert control.receive_reading(_reading(495, 480, RIGHT)) == (_reading(495, 480, RIGHT), None)
    assert _state(control) is IncrementState.CLOCK_ADDS


def test_a_setting_after_a_press_leaves_that_sides_logged_time_short() -> None:
    """A log read again to heal the board: White's press (logged 490) was recorded 500
    and the clock set, then Black's (logged 470, recorded 480) and set again. The log
    keeps White's 490 until White presses again: it still lacks White's 10 s, though
    the clock does not."""
    rules = TimeControl.from_pgn("600+10")
    ledger = [("left", 500), ("set", 0), ("right", 480), ("set", 0)]
    following = {LEFT: itertools.count(5), RIGHT: itertools.count(5)}
    gap = GapIncrements(
        lambda side: rules,
        lambda side: next(following[side]),
        _reading(500, 480, LEFT),
        {},
        ledger=ledger,
    )
    shown = [gap.receive(_reading(490, 480, RIGHT)), gap.receive(_reading(490, 470, LEFT))]
    assert [(r.left_seconds, r.right_seconds) for r in shown] == [(500, 480), (500, 480)]
    gap.finish()
    assert gap.owed == {}


def test_the_ledger_is_taken_up_where_the_game_stood() -> None:
    """A memory read that takes the game up at ply 4 follows the presses made since ply 4
    was: those of plies it withdraws (5, then 5 again after a correction) included."""
    ledger = [
        ("ply", 3),
        ("left", 500),
        ("set", 0),
        ("ply", 4),
        ("right", 480),
        ("set", 0),
        ("ply", 5),
        ("ply", 5),
        ("left", 490),
    ]
    assert ledger_since(ledger, 4) == [("right", 480), ("set", 0), ("left", 490)]
    assert ledger_since(ledger, 5) == [("left", 490)]
    assert ledger_since(ledger, 0) == [entry for entry in ledger if entry[0] != "ply"]
