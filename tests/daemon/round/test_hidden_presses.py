"""Both levers pressed between two readings that arrived (the first press's reading lost,
the reply within the second or among later readings lost too): the readings show the
same side running, but the other side's time changed, which a clock never does to a
side that does not run. The lost reading is told again before the one that came."""

from __future__ import annotations

import dataclasses

from daemon.game.durations import TimeControl
from daemon.mode23.control import IncrementControl
from daemon.mode23.gap_increments import GapIncrements, hidden_presses, unfollowed_presses
from drivers.observations import ClockObserved, ClockSide
from tests.daemon.round.clock_readings import clock_reading as _reading

LEFT, RIGHT = ClockSide.LEFT, ClockSide.RIGHT


def test_the_side_that_did_not_run_changed_on_a_clock_that_adds_its_own() -> None:
    """White (left) pressed and got its 10 s, Black replied within the second: White's
    time runs again, Black's shows its own 10 s."""
    before, after = _reading(910, 910, LEFT, at=3.0), _reading(920, 920, LEFT, at=4.5)
    assert hidden_presses(before, after) == _reading(920, 910, RIGHT, at=4.5)


def test_the_side_that_did_not_run_ran_on_a_mode_23_clock() -> None:
    """Black's time went down while White's ran, before and after: Black ran between."""
    before, after = _reading(981, 985, LEFT, at=26.4), _reading(980, 983, LEFT, at=30.4)
    assert hidden_presses(before, after) == _reading(980, 985, RIGHT, at=30.4)


def test_readings_that_only_ran_or_show_one_press_hide_nothing() -> None:
    before = _reading(600, 600, LEFT, at=0.0)
    assert hidden_presses(before, _reading(598, 600, LEFT, at=2.0)) is None, "White ran"
    assert hidden_presses(before, _reading(598, 600, RIGHT, at=2.0)) is None, "one press"
    assert hidden_presses(before, _reading(598, 590, None, at=2.0)) is None, "paused"
    assert hidden_presses(None, _reading(598, 590, LEFT, at=2.0)) is None, "no reading before"
    unplugged = dataclasses.replace(before, connected=False)
    assert hidden_presses(unplugged, _reading(598, 590, LEFT, at=2.0)) is None


def test_a_mode_23_clock_gets_both_increments_in_one_setnrun() -> None:
    control = IncrementControl(TimeControl.from_pgn("5400+30"))
    assert control.receive_reading(_reading(5430, 5430, LEFT, at=0.0))[1] is None
    corrected, command = control.receive_reading(_reading(5429, 5428, LEFT, at=3.0))
    assert control.hidden() == [_reading(5459, 5430, RIGHT, at=3.0)], "White's press, paid"
    assert control.hidden() == [], "drained"
    assert corrected == _reading(5459, 5458, LEFT, at=3.0)
    assert command is not None
    assert (command.left_seconds, command.right_seconds, command.run) == (5459, 5458, "left")


def test_a_reading_after_a_reconnection_hides_no_presses() -> None:
    """The journal's reading before a reconnection is no reading followed live: what
    happened meanwhile is the board's memory's to tell."""
    control = IncrementControl(TimeControl.from_pgn("5400+30"))
    control.reset(_reading(5430, 5430, LEFT, at=0.0))
    corrected, _ = control.receive_reading(_reading(5429, 5428, LEFT, at=30.0))
    assert control.hidden() == []
    assert corrected == _reading(5429, 5428, LEFT, at=30.0)


def test_the_reply_to_a_hidden_press_makes_the_next_move_whatever_the_game_says() -> None:
    """The game has not taken White's hidden press when Black's is paid: in its eyes
    Black's press comes before White's first move (move 0, nothing earned). The reply to
    a hidden press makes the move after it: Black's move 1."""
    game = {LEFT: 1, RIGHT: 0}  # White's first move on its way, Black's before it
    control = IncrementControl(TimeControl.from_pgn("5400+30"), move_number=game.get)
    control.receive_reading(_reading(5430, 5430, LEFT, at=3.0))
    corrected, command = control.receive_reading(_reading(5430, 5429, LEFT, at=5.3))
    assert control.hidden() == [_reading(5460, 5430, RIGHT, at=5.3)]
    assert corrected == _reading(5460, 5459, LEFT, at=5.3), "Black's 30 s too"
    assert command is not None


# -- pairs no reading showed (mode 23: no time changed), told by the board's memory ----

#: A log from the start of a game on 15 minutes + 10 s: White (left) pressed at 910 and
#: Black at 910 within the second, no reading showing either; White's press at 906 was
#: the one seen, answered with a SETNRUN that set White to 916; then Black's at 905.
LOG = [(LEFT, 910), (RIGHT, 910), (LEFT, 906), (RIGHT, 905)]
LEDGER = [("left", 916), ("set", 0)]


def test_the_memory_tells_which_presses_the_session_never_saw() -> None:
    """916 is 6 s over White's first logged press (short of an increment: White ran
    after it) but 10 s over its second: the first two presses were hidden."""
    assert unfollowed_presses(LOG, LEDGER, 10) == {1, 2}


def test_a_hidden_pair_a_second_apart_is_told_by_the_presses_after() -> None:
    """White pressed at 910, Black at 910, White at 909 (seen, set to 919), Black at 910
    (seen, set to 920): 919 is an increment over 910 within a second, but the ledger's
    next two presses fit White's second press and Black's after it exactly."""
    log = [(RIGHT, 910), (LEFT, 910), (RIGHT, 909), (LEFT, 910), (RIGHT, 915)]
    ledger = [("right", 919), ("set", 0), ("left", 920), ("set", 0), ("right", 925)]
    assert unfollowed_presses(log, ledger, 10) == {1, 2}


def test_presses_the_session_saw_are_followed_in_order() -> None:
    followed = [("left", 920), ("set", 0), ("right", 920), ("set", 0), ("left", 916)]
    assert unfollowed_presses(LOG, followed, 10) == frozenset()
    started = [("left", 910), ("right", 920)]  # taken for a press that starts the clock
    assert unfollowed_presses(LOG, started, 10) == frozenset()


def _logged(first: ClockObserved) -> list[ClockObserved]:
    times = {LEFT: first.left_seconds, RIGHT: first.right_seconds}
    readings = []
    for side, seconds in LOG:
        times[side] = seconds
        other = RIGHT if side is LEFT else LEFT
        readings.append(_reading(times[LEFT], times[RIGHT], other))
    return readings


def test_hidden_presses_replayed_get_increments_no_setting_gave() -> None:
    """Each hidden press gets its increment; the press seen gets its own and the hidden
    one's, which the SETNRUN that answered it never gave; after the log the clock still
    lacks both hidden increments."""
    rules = TimeControl.from_pgn("900+10")
    first = _reading(910, 910, LEFT)
    readings = _logged(first)
    gap = GapIncrements(
        lambda side: rules, lambda side: None, first, {}, ledger=LEDGER, readings=readings
    )
    shown = [gap.receive(reading) for reading in readings]
    assert [(r.left_seconds, r.right_seconds) for r in shown] == [
        (920, 910),
        (920, 920),
        (926, 920),
        (926, 925),
    ]
    gap.finish()
    assert gap.owed == {LEFT: 10, RIGHT: 20}, "Black's last press was never answered"
