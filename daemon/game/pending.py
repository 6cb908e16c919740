"""The tracker's pending move: what it holds, which lever presses complete it, how long
it must stand before it completes without one (docs/reconstruction.md). Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import chess

from daemon.game.clock import LeverPress
from daemon.game.matching import CENTRE, Match
from daemon.game.state import TrackerSettings
from drivers.observations import ClockSide

__all__ = ["Pending", "assign_presses", "settle_time"]


@dataclass(slots=True)
class Pending:
    """A match ahead of (or beside, or behind) the game, not yet completed."""

    match: Match
    since: float  # when its placement appeared (it is stable since then while visible)
    shown: dict[chess.Color, int | None]  # each side's clock time when it appeared
    visible: bool  # the board shows it now


def assign_presses(
    presses: Sequence[LeverPress],
    since: float,
    color: chess.Color,
    moves: int,
    color_of: Callable[[ClockSide], chess.Color | None],
) -> list[LeverPress]:
    """The lever presses that completed the first of ``moves`` moves, in order.

    A press counts for a move when it is by the mover (``color`` moves first, then the
    colours alternate) and came after the mover's turn began (``since``, then the press
    of the move before): a press out of turn, or one late for a move already completed,
    is never taken for a later move.
    """
    assigned: list[LeverPress] = []
    for _ in range(moves):
        press = next(
            (
                p
                for p in presses
                if p.at >= since and p not in assigned and color_of(p.side) == color
            ),
            None,
        )
        if press is None:
            break
        assigned.append(press)
        since = press.at
        color = not color
    return assigned


def settle_time(
    settings: TrackerSettings, match: Match, seen: chess.BaseBoard, clock_running: bool
) -> float:
    """How long a pending move must stand before it completes without a lever press.

    Longer with a running clock (the press is then the normal signal), and at least the
    centre-king hold when a move puts a king on a centre square (the result gesture).
    """
    wait = settings.clock_settle_time if clock_running else settings.settle_time
    kings_in_centre = seen.kings & CENTRE
    if any(chess.BB_SQUARES[move.to_square] & kings_in_centre for move in match.moves):
        wait = max(wait, settings.centre_king_hold)
    return wait
