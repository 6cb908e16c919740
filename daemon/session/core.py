"""One e-board's session as a state machine, sans I/O: observations in, round inputs out.

:class:`SessionCore` takes the board's vendor-neutral observations with their times (the
link up or down, a placement, a clock reading, the board's memory, the line caught up)
and ``now`` for its timers. It journals the round's inputs through ``record`` (applied at
once, so what it reads of the game through its :class:`~daemon.session.actions.BoardView`
is always current) and returns the rest as actions (:mod:`daemon.session.actions`). It
never awaits, sleeps, reads a clock or opens a port; daemon/shell/pipeline.py is its shell.

States (:class:`SessionState`) and their transitions (:data:`TRANSITIONS`)::

    OFFLINE ──link up──► CONNECTED ──first whole read, game shown──────────────► LIVE
                             │ first whole read, game not shown: ask the memory    ▲
                             ▼                                                     │
    LIVE ──out of sync (heal)──► READING ──memory──► BACKLOG ──caught up────────────┘
                                    │ no memory in time, link refused ─────────────┘
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
  again with a growing back-off (``heal_backoff``), for as long as the board answers.
"""

from __future__ import annotations

import enum
import logging
import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import assert_never

import chess

from base.backoff import Backoff, BackoffPolicy
from base.drain import drain
from daemon.config.model import BoardConfig
from daemon.config.sections import Section
from daemon.round.inputs import (
    BatteryInput,
    ClockInput,
    FloodInput,
    LinkInput,
    PlacementInput,
    RecoveryInput,
)
from daemon.round.mode23 import IncrementControl, IncrementState
from daemon.session.actions import (
    Action,
    AskBoard,
    AskCaughtUp,
    AskMemory,
    BoardView,
    Record,
    Say,
    SetClock,
)
from daemon.session.flood import FloodGuard
from drivers.memory import BoardMemory, MemoryObserved
from drivers.observations import (
    BatteryObserved,
    BoardRead,
    CaughtUp,
    ClockObserved,
    ClockSide,
    LinkObserved,
    LinkState,
    PlacementObserved,
)

__all__ = [
    "HEAL_BACKOFF",
    "MEMORY_TIMEOUT",
    "TRANSITIONS",
    "Observed",
    "SessionCore",
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

#: Memory reads while a board stays out of sync: 10 s after the last, doubling to 2 min.
HEAL_BACKOFF = BackoffPolicy(initial=10.0, factor=2.0, maximum=120.0)

_HOLDING = frozenset({_S.CONNECTED, _S.READING})  # clock readings wait


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
        section.event.clock_rules, white_side=side, move_number=view.move_number
    )


class SessionCore:
    """One e-board's session, pure (see the module docstring).

    Args:
        number: the board's number (for the log).
        view: what the session reads of the board's game.
        record: journals and applies one round input at once.
        increments: the clock's increments when dgtcast adds them (mode 23), else None.
        settings: the session's waits.

    After each ``receive_*`` call, carry out :meth:`actions_to_send` and call
    :meth:`receive_time` again at :meth:`next_deadline`.
    """

    def __init__(
        self,
        number: int,
        view: BoardView,
        record: Record,
        *,
        increments: IncrementControl | None = None,
        settings: SessionSettings | None = None,
    ) -> None:
        self.number = number
        self.view = view
        self._record = record
        self.increments = increments
        self.settings = settings or SessionSettings()
        self.state = SessionState.OFFLINE
        self.flood = FloodGuard()
        self._actions: list[Action] = []
        #: The daemon stops: the link closing next is no board going offline.
        self.stopping = False
        self._sensed: PlacementObserved | None = None  # the latest placement
        self._held_clock: ClockObserved | None = None  # waiting for a read (CONNECTED, READING)
        self._held: PlacementObserved | None = None  # held back by the flood guard
        self._last_clock: ClockInput | None = None
        self._last_battery: BatteryObserved | None = None  # journalled on this connection
        self._last_placement: PlacementObserved | None = None
        self._recent: deque[chess.BaseBoard] = deque(maxlen=2)  # the last placements offered
        self._memory_due = math.inf
        self._caught_up_due = math.inf
        self._flood_due = math.inf
        self._refreshed_episode: float | None = None
        self._healing = False  # the memory read under way is a heal's
        self._heal_backoff = Backoff(self.settings.heal_backoff)
        self._heal_not_before = -math.inf

    # -- outputs ------------------------------------------------------------------------

    def actions_to_send(self) -> list[Action]:
        """Return and forget the actions to carry out, in order."""
        return drain(self._actions)

    def next_deadline(self) -> float | None:
        """When :meth:`receive_time` must be called next (None: nothing is due)."""
        due = min(
            self._memory_due,
            self._caught_up_due,
            self._flood_due,
            self._refresh_due(),
            self._heal_due(),
        )
        return due if math.isfinite(due) else None

    # -- inputs: the link ---------------------------------------------------------------

    def receive_link(
        self, link: LinkObserved, *, reason: str = "", serial: str = "", port: str = ""
    ) -> None:
        """The link came up (``serial`` and ``port`` of the board) or went down (``reason``)."""
        if link.state is LinkState.ONLINE:
            self._link_up(link, serial, port)
        else:
            self._link_down(link, reason)

    def _link_up(self, link: LinkObserved, serial: str, port: str) -> None:
        if self.state is _S.STOPPED:
            return
        self._enter(_S.CONNECTED)
        self._forget_connection()
        if self.increments is not None:  # maybe another clock: decided afresh
            self.increments.reset(self.view.last_reading())
            self._owe_increments(recovered=False)
        self._say(logging.INFO, f"= board {self.number} online on {port} (serial {serial})")
        self._record(LinkInput(self.number, link, serial=serial, port=port))

    def _link_down(self, link: LinkObserved, reason: str) -> None:
        if self.stopping:
            self._end_reading(self._failed("stopped", link.at), release=False)
            self._enter(_S.STOPPED)
            return
        self._end_reading(self._failed("link lost", link.at), release=False)
        if self.state is _S.OFFLINE:
            return
        self._say(logging.WARNING, f"= board {self.number} offline: {reason}")
        self._enter(_S.OFFLINE)
        self._forget_connection()
        self._record(LinkInput(self.number, link, reason))

    def _forget_connection(self) -> None:
        self._sensed = self._held_clock = self._held = None
        self._last_clock = self._last_battery = self._last_placement = None
        self._memory_due = self._caught_up_due = math.inf
        self._healing = False
        self._heal_not_before = -math.inf
        self._heal_backoff.reset()
        if self.increments is not None:
            self.increments.defer(False)

    def stop(self) -> None:
        """The daemon stops: the link closing next is no board going offline."""
        self.stopping = True
        self._flood_due = math.inf

    # -- inputs: the board --------------------------------------------------------------

    def receive(self, observation: Observed) -> None:
        """One observation of the board (see :meth:`receive_placement` and the others)."""
        match observation:
            case BoardRead():
                self.receive_placement(observation.placement, whole=True)
            case PlacementObserved():
                self.receive_placement(observation, whole=False)
            case ClockObserved():
                self.receive_clock(observation)
            case BatteryObserved():
                self.receive_battery(observation)
            case MemoryObserved():
                self.receive_memory(observation.memory, observation.at)
            case CaughtUp():
                self.receive_caught_up(observation.at)
            case _:
                assert_never(observation)

    def receive_placement(self, placement: PlacementObserved, *, whole: bool) -> None:
        """The placement the sensors show now; ``whole``: the board was read whole (the
        first whole read of a connection decides whether the memory is read)."""
        if self.state in (_S.OFFLINE, _S.STOPPED):
            return
        self._sensed = placement
        if self.state is _S.READING:
            return  # in the memory
        if self.state is _S.CONNECTED:
            if not whole:
                return
            self._first_read(placement)
            return
        self._offer_placement(placement, placement.at)

    def _first_read(self, placement: PlacementObserved) -> None:
        at = placement.at
        if self.view.memory_needed(placement.board):
            self._ask_memory(at, healing=False)
            return
        self._enter(_S.LIVE)
        self._offer_placement(placement, at)
        self._release_held_clock(at)

    def receive_clock(self, reading: ClockObserved) -> None:
        """A clock reading."""
        if self.state in _HOLDING:
            self._held_clock = reading
        elif self.state in (_S.BACKLOG, _S.LIVE):
            self._apply_clock(reading)

    def receive_battery(self, battery: BatteryObserved) -> None:
        """A wireless board's battery level: journalled when it changed."""
        last = self._last_battery
        if self.state in (_S.OFFLINE, _S.STOPPED) or (
            last is not None
            and (last.percent, last.charging) == (battery.percent, battery.charging)
        ):
            return
        self._last_battery = battery
        self._record(BatteryInput(self.number, battery))

    def receive_memory(self, memory: BoardMemory, at: float) -> None:
        """The board's memory came (ignored unless it was asked)."""
        if self.state is not _S.READING:
            return
        self._say(logging.INFO, f"= board {self.number} memory read: {len(memory.steps)} steps")
        # a heal's presses were answered live (mode 23: nothing owed)
        read = RecoveryInput(
            board=self.number, at=at, state="read", memory=memory, heal=self._healing
        )
        self._end_reading(read, release=True)

    def receive_memory_refused(self, reason: str, at: float) -> None:
        """The link refused to ask the memory (it closed meanwhile)."""
        if self.state is _S.READING:
            self._say(logging.WARNING, f"board {self.number}: memory not asked: {reason}")
            self._end_reading(self._failed("not asked", at), release=True)

    def receive_caught_up(self, at: float) -> None:
        """The marker's answer: everything the board queued before it has been received."""
        if self.state is _S.BACKLOG:
            self._go_live(at)

    def receive_clock_done(self, at: float) -> None:
        """The clock command of a :class:`SetClock` was acknowledged, or failed."""
        if self.increments is None:
            return
        again = self.increments.receive_done()
        if again is not None and self.state in (_S.BACKLOG, _S.LIVE):
            self._apply_clock(replace(again, at=max(at, again.at)))  # a reply to carry out

    def receive_clock_refused(self, at: float) -> None:
        """The clock refused a :class:`SetClock` (not in mode 23): nothing is added to it
        until it is set again; said once, journalled with the next reading."""
        increments = self.increments
        if increments is None:
            return
        if increments.state is not IncrementState.REFUSED:
            self._say(
                logging.WARNING,
                f"= board {self.number}: the clock refuses dgtcast's settings (not in mode"
                " 23): no increments added, its times recorded as it shows them",
            )
        increments.receive_refused()
        self._last_clock = None  # the next reading is journalled, saying so

    def receive_fault(self, at: float) -> None:
        """A bug was met handling this board: start afresh from the session's state (the
        whole board read again, the increments decided anew)."""
        self._last_clock = None
        if self.increments is not None:
            self.increments.reset()
            self._owe_increments(recovered=False)
        self._actions.append(AskBoard())

    def new_round(self) -> None:
        """A new round, maybe another clock: who adds its increments is decided afresh."""
        if self.increments is not None:
            self.increments.reset()

    def receive_time(self, now: float) -> None:
        """Let the session's deadlines up to ``now`` pass."""
        if now >= self._memory_due:
            self._say(logging.WARNING, f"= board {self.number}: no memory in time")
            self._end_reading(self._failed("no answer", now), release=True)
        if now >= self._caught_up_due:
            self._go_live(now)
        if now >= self._flood_due:
            self._flood_tick(now)
        if now >= self._refresh_due():
            self._refreshed_episode = self.view.unmatched_since()
            self._actions.append(AskBoard())
        if now >= self._heal_due():
            self._ask_memory(now, healing=True)

    # -- the memory ---------------------------------------------------------------------

    def _ask_memory(self, at: float, *, healing: bool) -> None:
        self._enter(_S.READING)
        self._healing = healing
        if healing:
            since = self.view.unmatched_since()
            self._say(
                logging.WARNING,
                f"= board {self.number} out of sync since {since:.0f}: reading its memory"
                f" again (try {self._heal_backoff.failures + 1})",
            )
        else:
            self._say(logging.INFO, f"= board {self.number} catching up: reading its memory")
        self._actions.append(AskMemory())
        self._memory_due = at + self.settings.memory_timeout
        self._record(RecoveryInput(board=self.number, at=at, state="reading"))

    def _failed(self, reason: str, at: float) -> RecoveryInput:
        return RecoveryInput(board=self.number, at=at, state="failed", reason=reason)

    def _end_reading(self, ended: RecoveryInput, *, release: bool) -> None:
        """Journal the end of a memory read; with ``release`` the placement and clock as
        they stood when it came follow, then BACKLOG (read) or LIVE (failed)."""
        if self.state is not _S.READING:
            return
        self._memory_due = math.inf
        sensed, held = self._sensed, self._held_clock
        self._held_clock = None
        at = ended.at
        if sensed is not None and release:  # for the gap search when the memory cannot
            # cover it; not when the link went: the next connection reads the memory
            running = None if held is None else held.running
            ended = replace(ended, placement=sensed.board, running=running)
        self._record(ended)
        if not release:
            return
        if ended.state == "read":
            if self._healing and self.increments is not None:
                self.increments.forget_last()  # the presses meanwhile are the memory's
            self._owe_increments(recovered=True)
            self._enter(_S.BACKLOG)
            if self.increments is not None:
                self.increments.defer(True)
            self._caught_up_due = at + self.settings.caught_up_timeout
            self._actions.append(AskCaughtUp())
            self._actions.append(AskBoard())  # the sensed board checked against the memory
        else:
            self._go_live(at)
        if self._healing:
            self._heal_not_before = at + self._heal_backoff.next_delay()
        if sensed is not None:
            self._send_placement(replace(sensed, at=at))
        if held is not None:
            self._apply_clock(replace(held, at=at))

    def _go_live(self, at: float) -> None:
        self._caught_up_due = math.inf
        self._enter(_S.LIVE)
        if self.increments is not None:
            self.increments.defer(False)

    def _owe_increments(self, *, recovered: bool) -> None:
        """Give the clock what the board's game says it lacks (mode 23): increments of
        presses replayed from the memory, in their ``[%clk]`` already. Known from the
        journal, so a restart before the clock got them owes them again, once; after a
        memory whose presses show the clock adding its own time, nothing is added."""
        if self.increments is None:
            return
        if recovered and self.view.clock_adds():
            self.increments.leave_alone()
        elif recovered:
            self.increments.owe(self.view.clock_owed(), last=self.view.replayed_reading())
        elif self.view.clock_owed():
            self.increments.owe(self.view.clock_owed())

    # -- placements ---------------------------------------------------------------------

    def _offer_placement(self, placement: PlacementObserved, at: float) -> None:
        """Send a placement on, unless the board floods the line (daemon/session/flood.py)."""
        was_flooding = self.flood.flooding
        board, recent = placement.board, self._recent
        flicker = len(recent) == 2 and board == recent[0] != recent[1]
        recent.append(board)
        if self.flood.admit(at, flicker=flicker):
            self._held = None
            self._send_placement(placement)
        else:
            self._held = placement
        if self.flood.flooding and not was_flooding:
            self._say(
                logging.WARNING,
                f"= board {self.number} floods the line ({self.flood.rate} placements a"
                f" second): one in every {self.flood.interval:.1f} s goes on until it calms"
                " down",
            )
            self._record(FloodInput(board=self.number, at=at, flooding=True, rate=self.flood.rate))
        if self.flood.flooding and not math.isfinite(self._flood_due):
            self._flood_due = max(at, self.flood.next_release())

    def _flood_tick(self, now: float) -> None:
        """While flooding: send the latest held placement, and notice the calm."""
        self._flood_due = math.inf
        if self._held is not None:
            placement, self._held = self._held, None
            self.flood.released(now)
            self._send_placement(replace(placement, at=now))
        if self.flood.calmed(now):
            self._say(logging.WARNING, f"= board {self.number} calmed down")
            self._record(
                FloodInput(board=self.number, at=now, flooding=False, rate=self.flood.rate)
            )
            return
        if self.flood.flooding and not self.stopping:
            self._flood_due = now + (self.flood.interval if self._held is not None else 0.5)

    def _send_placement(self, placement: PlacementObserved) -> None:
        last = self._last_placement
        if last is not None and placement.board == last.board:
            return  # a flicker back to what was sent last: nothing new
        self._last_placement = placement
        self._record(PlacementInput(self.number, placement))

    def _refresh_due(self) -> float:
        """When the board is read again: its placement has matched nothing for a moment."""
        if self.state is not _S.LIVE:
            return math.inf
        since = self.view.unmatched_since()
        if since is None or since == self._refreshed_episode:
            return math.inf
        return since + self.settings.refresh_after

    def _heal_due(self) -> float:
        """When the memory is read again: the game under way and the board disagree."""
        if self.state is not _S.LIVE or self.stopping:
            return math.inf
        since = self.view.unmatched_since()
        if since is None:
            if self._heal_backoff.failures:  # in sync again: the next episode starts afresh
                self._heal_backoff.reset()
                self._heal_not_before = -math.inf
            return math.inf
        return max(since + self.settings.heal_after, self._heal_not_before)

    # -- clock readings -----------------------------------------------------------------

    def _release_held_clock(self, at: float) -> None:
        held, self._held_clock = self._held_clock, None
        if held is not None:
            self._apply_clock(replace(held, at=at))

    def _apply_clock(self, reading: ClockObserved) -> None:
        increments = self.increments
        command = None
        if increments is not None:
            corrected, command = increments.receive_reading(reading)
            if corrected is None:
                return  # stale: the clock is being set
            reading = corrected
            if command is not None:
                self._actions.append(SetClock(command=command))
        state = None if increments is None else increments.state
        item = ClockInput(
            self.number,
            reading,
            increments="clock"
            if state is IncrementState.CLOCK_ADDS
            else "refused"
            if state is IncrementState.REFUSED
            else None,
            clock_set=command is not None,
            lacking={} if increments is None else increments.lacking,
        )
        if not item.repeats(self._last_clock):  # update-nice repeats nothing new
            self._last_clock = item
            self._record(item)

    # -- state --------------------------------------------------------------------------

    def _enter(self, state: SessionState) -> None:
        if state is self.state:
            return
        if state not in TRANSITIONS[self.state]:
            raise RuntimeError(f"bad transition {self.state.name} -> {state.name}")
        self.state = state

    def _say(self, level: int, text: str) -> None:
        self._actions.append(Say(level=level, text=text))
