"""Mode 23: a clock's reading that comes after its ack to a SETNRUN but shows the clock
as it was before (a press made while the SETNRUN was on its way)."""

from __future__ import annotations

from daemon.game.durations import TimeControl
from daemon.mode23.control import IncrementControl, IncrementState
from drivers.observations import ClockSide
from tests.daemon.round.clock_readings import clock_reading as _reading

LEFT, RIGHT = ClockSide.LEFT, ClockSide.RIGHT


def _white_pressed_and_was_given_30_s() -> IncrementControl:
    control = IncrementControl(TimeControl.from_pgn("5400+30"))
    control.receive_reading(_reading(5430, 5430, LEFT, at=0.0))
    corrected, command = control.receive_reading(_reading(5420, 5430, RIGHT, at=10.0))
    assert command is not None
    assert corrected == _reading(5450, 5430, RIGHT, at=10.0)
    control.receive_done()
    return control


def test_a_press_read_after_the_ack_but_made_before_the_setnrun_is_carried_out() -> None:
    control = _white_pressed_and_was_given_30_s()
    # Black pressed before the SETNRUN reached the clock; its reading comes after the ack
    early = _reading(5420, 5428, LEFT, at=10.1)
    assert control.receive_reading(early) == (None, None), "the clock before the SETNRUN"
    # the clock took the SETNRUN (White's 30 s, Black running again): the press undone
    corrected, command = control.receive_reading(_reading(5450, 5428, RIGHT, at=10.2))
    assert corrected == _reading(5450, 5458, LEFT, at=10.2), "White keeps 30 s, Black gets 30"
    assert command is not None
    assert (command.left_seconds, command.right_seconds, command.run) == (5450, 5458, "left")
    assert control.state is IncrementState.SETTING, "never taken for a clock adding its own"


def test_readings_after_the_setnrun_count_however_long_a_side_runs() -> None:
    control = _white_pressed_and_was_given_30_s()
    later = _reading(5450, 5400, RIGHT, at=40.0)  # Black thought 30 s
    assert control.receive_reading(later) == (later, None)
    corrected, command = control.receive_reading(_reading(5450, 5399, LEFT, at=41.0))
    assert corrected == _reading(5450, 5429, LEFT, at=41.0)
    assert command is not None
