"""Which move a lever press completes, and whose move is on its way, from the game (pure).

A clock in mode 23 adds nothing itself: dgtcast adds what the time control gives after
each move (daemon/mode23/control.py), and that depends on the move's number (the bonus after
move 40). The game tells it, even for a daemon restarted mid-game.
"""

from __future__ import annotations

import chess

from daemon.game.clock import other_side
from daemon.game.state import TrackerState
from daemon.game.tracker import GameTracker
from drivers.observations import ClockSide

__all__ = ["game_move_number", "game_moving_side", "move_number_of"]


def move_number_of(board: chess.Board, color: chess.Color) -> int:
    """The number of ``color``'s move that a press now completes.

    The move is usually still pending (``color`` to move in ``board``): the full-move
    number. If it was already published before the press (its placement settled), White's
    is still the full-move number and Black's the one before it.
    """
    return _move_number_at(board.ply(), color)


def _move_number_at(ply: int, color: chess.Color) -> int:
    """:func:`move_number_of` a board ``ply`` plies into the game (``chess.Board.ply``:
    even with White to move, the full-move number ``ply // 2 + 1``)."""
    return ply // 2 + 1 - (color == chess.BLACK and ply % 2 == 0)


def game_move_number(tracker: GameTracker, side: ClockSide) -> int | None:
    """The move a press on ``side`` completes in the tracker's game (None: no game, or the
    sides are unknown; 0: none, the start position stands and the press starts the clock)."""
    if tracker.state not in (TrackerState.PLAYING, TrackerState.OUT_OF_SYNC):
        return None
    if tracker.start_stands:
        return 0
    white = tracker.white_side
    if white is None:
        return None
    # the tracker's ply is its board's: no copy of the game's every move (at every press)
    return _move_number_at(tracker.ply, chess.WHITE if side is white else chess.BLACK)


def game_moving_side(tracker: GameTracker) -> ClockSide | None:
    """The side whose move the tracker's game holds pending (None: none, or no sides)."""
    color, white = tracker.moving_color, tracker.white_side
    if color is None or white is None:
        return None
    return white if color == chess.WHITE else other_side(white)
