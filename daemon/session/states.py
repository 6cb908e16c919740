"""A board session's states, their transitions as data, and its waits (pure).

States (:class:`SessionState`) and their transitions (:data:`TRANSITIONS`)::

    OFFLINE ──link up──► CONNECTED ──first whole read, game shown──────────────► LIVE
                             │ first whole read, game not shown: ask the memory    ▲
                             ▼                                                     │
    LIVE ──out of sync (heal)──► READING ──memory──► BACKLOG ──caught up────────────┘
         ──arbiter's rebuild──►     │ no memory in time, link refused ─────────────┘
    any ──link down──► OFFLINE      any ──stop, link down──► STOPPED

* **CONNECTED**: the link is up, the board not yet read whole. Clock readings wait for
  that read (one queued while nobody listened would complete a move left pending at a
  stop with a later press's time).
* **READING**: the board's memory was asked. What the board sends meanwhile was sent
  before it took the request, so it is in the memory: the latest placement and clock
  reading are kept, nothing goes on.
* **BACKLOG**: the memory is in and replayed. What the board sent after it took the
  request queued behind the ~8 s memory on the line and arrives now in a burst: every
  report is applied in order, as live input. The clock's times in it are old by the time
  they arrive, so no clock command is computed from them (mode 23: the increments of its
  presses are owed, :meth:`IncrementControl.defer`); a marker asked when the memory came
  answers after the burst (:class:`~daemon.session.actions.AskCaughtUp`): LIVE.
* **LIVE**: reports go on as they come. A placement that matches nothing has the board
  read again (``refresh_after``); one that still matches nothing of a game under way
  after ``heal_after`` has the memory read again (READING), which replays what was
  played since the last agreement; while the board stays out of sync this is tried
  again with a growing back-off (``heal_backoff``, :mod:`daemon.session.heal`), for as
  long as the board answers. An arbiter's ``rebuild_from_memory`` reads it at once.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from base.backoff import BackoffPolicy
from daemon.config.model import BoardConfig
from daemon.config.sections import Section
from daemon.mode23.control import IncrementControl
from daemon.session.actions import BoardView
from drivers.memory import MemoryObserved
from drivers.observations import (
    BatteryObserved,
    BoardRead,
    CaughtUp,
    ClockObserved,
    ClockSide,
    PlacementObserved,
)

__all__ = [
    "HEAL_BACKOFF",
    "HOLDING",
    "MEMORY_TIMEOUT",
    "TRANSITIONS",
    "Observed",
    "SessionSettings",
    "SessionState",
    "increment_control",
]

#: Seconds to wait for the memory (7,939 bytes ≈ 8.3 s at 9600 baud, docs/protocol.md §6)
#: and the messages queued before it.
MEMORY_TIMEOUT = 30.0

#: The observations a session takes from its board's driver (drivers/dgt/observer.py).
Observed = (
    PlacementObserved | BoardRead | ClockObserved | BatteryObserved | MemoryObserved | CaughtUp
)


class SessionState(enum.Enum):
    """Where a board session is (see the module docstring)."""

    OFFLINE = "offline"
    CONNECTED = "connected"
    READING = "reading"
    BACKLOG = "backlog"
    LIVE = "live"
    STOPPED = "stopped"


_S = SessionState

#: Allowed transitions; anything else is a bug and raises.
TRANSITIONS: Mapping[SessionState, frozenset[SessionState]] = {
    _S.OFFLINE: frozenset({_S.CONNECTED, _S.STOPPED}),
    _S.CONNECTED: frozenset({_S.READING, _S.LIVE, _S.OFFLINE, _S.STOPPED}),
    _S.READING: frozenset({_S.BACKLOG, _S.LIVE, _S.OFFLINE, _S.STOPPED}),
    _S.BACKLOG: frozenset({_S.LIVE, _S.OFFLINE, _S.STOPPED}),
    _S.LIVE: frozenset({_S.READING, _S.OFFLINE, _S.STOPPED}),
    _S.STOPPED: frozenset(),
}

#: States in which clock readings wait for a read.
HOLDING = frozenset({_S.CONNECTED, _S.READING})

#: Memory reads while a board stays out of sync: 10 s after the last, doubling to 2 min.
HEAL_BACKOFF = BackoffPolicy(initial=10.0, factor=2.0, maximum=120.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSettings:
    """How long a session waits, in seconds.

    Attributes:
        refresh_after: a placement matching nothing of the game this long has the whole
            board read again (a lost field update, docs/faults.md); once per episode.
        heal_after: a placement matching nothing of a game under way this long has the
            board's memory read again (it replays what the game missed).
        heal_backoff: the waits between further memory reads while the board stays out
            of sync (doubling from ``initial`` to ``maximum``).
        memory_timeout: the memory not in by then: read failed, the board goes on live.
        caught_up_timeout: the marker after the memory unanswered by then: live anyway.
    """

    refresh_after: float = 0.5
    heal_after: float = 6.0
    heal_backoff: BackoffPolicy = HEAL_BACKOFF
    memory_timeout: float = MEMORY_TIMEOUT
    caught_up_timeout: float = 10.0


def increment_control(
    board: BoardConfig, section: Section | None, view: BoardView
) -> IncrementControl | None:
    """Who adds a board's clock increments: dgtcast on a ``dgt_mode = 23`` section (White's
    side from ``clock_white_side`` when configured), else nobody (None)."""
    if section is None or section.event.dgt_mode != 23:
        return None
    side = ClockSide(board.clock_white_side) if board.clock_white_side else None
    return IncrementControl(
        section.event.clock_rules,
        white_side=side,
        move_number=view.move_number,
        moving=view.moving_side,
    )
