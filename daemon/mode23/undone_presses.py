"""Presses a late SETNRUN undid or swallowed, carried out again, on a clock in mode 23 (pure).

dgtcast answers each lever press with a SETNRUN (daemon/mode23/control.py). A reply pressed
before it reaches the clock is undone by it (the clock sets the old running side again);
a press by the side a SETNRUN sets running, while it is on its way, does nothing (that
lever is already down). These functions give the reading as it would be had the press
counted, for :class:`~daemon.mode23.control.IncrementControl` to carry it out with the
next SETNRUN (docs/daemon.md, "Mode 23 and the clocks").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from daemon.game.clock import other_side
from daemon.mode23.gap_increments import side_seconds
from drivers.observations import ClockObserved, ClockSide

__all__ = ["only_ran", "redo_press", "swallowed_press"]


def redo_press(
    reply: ClockObserved, now: ClockObserved, sent: ClockObserved, due: Mapping[ClockSide, int]
) -> ClockObserved:
    """The reading as it would be had the clock not undone ``reply``'s press.

    ``sent`` is the reading the SETNRUN set (the opponent running), adding ``due`` to each
    side; the opponent pressed at ``reply``: its time stays as it was then, plus what the
    SETNRUN gave it (owed from a gap), and the mover's has run since.
    """
    assert reply.running is not None
    assert sent.running is not None
    opponent, mover = sent.running, reply.running
    ran = max(0, round(now.at - reply.at))
    times = {
        opponent: side_seconds(reply, opponent) + due.get(opponent, 0),
        mover: max(0, side_seconds(sent, mover) - ran),
    }
    return dataclasses.replace(
        now,
        left_seconds=times[ClockSide.LEFT],
        right_seconds=times[ClockSide.RIGHT],
        running=mover,
        lever=mover,
    )


def swallowed_press(now: ClockObserved, sent: ClockObserved) -> ClockObserved:
    """The reading as it would be had the side the SETNRUN set running (``sent``) pressed
    at ``now``: its time as the clock shows it, the other side running."""
    assert sent.running is not None
    other = other_side(sent.running)
    return dataclasses.replace(now, running=other, lever=other)


def only_ran(before: ClockObserved, now: ClockObserved) -> bool:
    """Whether ``now`` can follow ``before`` on a clock that only ran (nobody set it, and
    it added nothing: mode 23); a second's slack for the rounding of the readings."""
    return (
        before.connected
        and now.connected
        and now.left_seconds <= before.left_seconds + 1
        and now.right_seconds <= before.right_seconds + 1
    )
