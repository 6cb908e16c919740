"""Lever presses whose moves the board has not shown yet (a field update lost, a move
still on its way): each is held for its own move, never lent to another."""

from __future__ import annotations

import chess

from daemon.game.clock import LeverPress, running_for
from daemon.game.events import MoveMade
from daemon.game.pending import Presses
from drivers.observations import ClockObserved, ClockSide
from tests.game.test_sync import started

LEFT, RIGHT = ClockSide.LEFT, ClockSide.RIGHT


def _press(side: ClockSide, at: float) -> LeverPress:
    return LeverPress(side=side, before=600, after=610, started=605, at=at)


def _color_of(side: ClockSide) -> chess.Color:
    return chess.WHITE if side is LEFT else chess.BLACK


def test_a_press_made_while_a_move_was_on_its_way_is_held_for_it() -> None:
    """Black pressed while the board showed no position of the game (its move's field
    updates lost); White's press after it leaves it there for Black's move."""
    presses = Presses()
    black, white = _press(RIGHT, 1.0), _press(LEFT, 2.0)
    presses.add(black, moving=True)
    presses.add(white, moving=True)
    assert presses.assign(0.0, chess.BLACK, 2, _color_of) == [black, white]


def test_a_press_made_on_a_still_board_is_forgotten_when_the_clock_is_handed_back() -> None:
    presses = Presses()
    black, white = _press(RIGHT, 1.0), _press(LEFT, 2.0)
    presses.add(black)  # pressed with nothing moved: no move is coming for it
    presses.add(white)  # nor for this one: the clock handed back
    assert presses.assign(0.0, chess.BLACK, 2, _color_of) == []
    assert presses.assign(0.0, chess.WHITE, 1, _color_of) == [white]


def test_a_press_on_a_still_board_is_kept_when_the_next_comes_with_a_move() -> None:
    """White's move was never shown (both its field updates lost): its press came on a
    still board. Black's reply was on its way when Black pressed: both are kept."""
    presses = Presses()
    white, black = _press(LEFT, 1.0), _press(RIGHT, 2.0)
    presses.add(white)
    presses.add(black, moving=True)
    assert presses.assign(0.0, chess.WHITE, 2, _color_of) == [white, black]


def test_castling_rook_first_keeps_the_press_made_before_the_king_came() -> None:
    """The rook to f1 is a move of its own, completed by White's press; the king lands
    after the press and makes it castling: the castling takes that press (and is
    published at once), not White's next one after Black has replied."""
    table = started("e2e4 e7e5 g1f3 b8c6 f1c4 f8c5")
    table.wait(2)
    table.slide(chess.H1, chess.F1)
    table.wait(0.5)
    table.press(chess.WHITE)
    table.wait(0.5)
    table.slide(chess.E1, chess.G1)
    table.play("d7d6", think=1)
    table.play("d2d3", think=3)
    made = table.of_type(MoveMade)
    rook = next(move for move in made if move.uci == "h1f1")
    castling = next(move for move in made if move.uci == "e1g1")
    assert (castling.clock, castling.clock_before) == (rook.clock, rook.clock_before)
    assert table.moves()[-3:] == ["e1g1", "d7d6", "d2d3"]


def test_a_replay_starts_from_the_clock_as_the_last_move_left_it() -> None:
    """Black (right) pressed live for a move the board never showed: the reading says
    White's time runs, the game says Black is to move. The board's memory tells that
    press again, so its replay starts with Black's time running: no press of its own."""
    last = ClockObserved(
        left_seconds=590,
        right_seconds=600,
        left_flag=False,
        right_flag=False,
        running=LEFT,
        lever=LEFT,
        connected=True,
        at=9.0,
    )
    rewound = running_for(last, RIGHT)
    assert rewound is not None
    assert (rewound.running, rewound.left_seconds, rewound.right_seconds) == (RIGHT, 590, 600)
    assert running_for(last, LEFT) is last
    assert running_for(last, None) is last
