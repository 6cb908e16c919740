"""Whether a clock in mode 23 took a SETNRUN that the link cut (pure).

dgtcast answers each lever press with a SETNRUN that gives the mover its increment
(daemon/mode23/control.py). When the link goes down before any reading shows the clock
took it (the cable pulled while it was on its way), the clock may never have had it; the
readings after the link is back tell, in order (docs/daemon.md, "Mode 23 and the
clocks"):

* in the first reading, a side it gave time that stood since (it ran neither when the
  SETNRUN was sent nor then) shows the time set, or that time less what was given;
* otherwise a reading that came on time (not behind the board's memory on the line)
  tells by the time passed: a clock runs one side at a time, so its two times together
  fall by the seconds passed since the SETNRUN was sent, and lack what it gave when it
  never reached the clock. Readings are whole seconds and the SETNRUN reached the clock
  a moment after it was sent: half of what it gave tells the two apart.
"""

from __future__ import annotations

from collections.abc import Mapping

from daemon.mode23.gap_increments import side_seconds, total_seconds
from drivers.observations import ClockObserved, ClockSide

__all__ = ["not_taken"]

#: Seconds a SETNRUN must have given for a reading to tell whether the clock took it.
_TELLS = 4


def not_taken(
    sent: ClockObserved,
    gave: Mapping[ClockSide, int],
    now: ClockObserved,
    *,
    on_time: bool,
    first: bool,
) -> dict[ClockSide, int] | None:
    """What the clock never got of a SETNRUN that set ``sent`` giving ``gave`` (all of it,
    or nothing: it took the command or not), from ``now``, a reading since it was sent,
    with nothing given to the clock in between (``first``: the first one); None when
    ``now`` cannot tell (a reading that came late, ``on_time`` false, and not the first or
    with no side given time standing: a side that stands in a later reading may have run
    and pressed in between)."""
    given = sum(gave.values())
    if given < _TELLS or sent.running is None or now.left_flag or now.right_flag:
        return {}
    stood = [side for side in gave if side not in (sent.running, now.running)] if first else []
    if stood:
        side = stood[0]
        lacks = side_seconds(sent, side) - side_seconds(now, side)
        return dict(gave) if lacks > gave[side] / 2 else {}
    if not on_time:
        return None
    passed = max(0.0, now.at - sent.at)
    short = total_seconds(sent) - passed - total_seconds(now)
    return dict(gave) if short > given / 2 else {}
