"""One e-board's session as a state machine, sans I/O: observations in, round inputs out.

:class:`SessionCore` takes the board's vendor-neutral observations with their times (the
link up or down, a placement, a clock reading, the board's memory, the line caught up)
and ``now`` for its timers. It journals the round's inputs through ``record`` (applied at
once, so what it reads of the game through its :class:`~daemon.session.actions.BoardView`
is always current) and returns the rest as actions (:mod:`daemon.session.actions`). It
never awaits, sleeps, reads a clock or opens a port; daemon/shell/pipeline.py is its shell.

Its states, their transitions as data and its waits are in :mod:`daemon.session.states`;
when it reads the board again on its own is :mod:`daemon.session.heal`.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from typing import assert_never

from base.drain import drain
from daemon.mode23.control import IncrementControl, IncrementState
from daemon.round.inputs import BatteryInput, LinkInput, RecoveryInput
from daemon.session.actions import (
    Action,
    AskBoard,
    AskCaughtUp,
    AskMemory,
    BoardView,
    Record,
    Say,
)
from daemon.session.clock_feed import ClockFeed
from daemon.session.flood import FloodGuard
from daemon.session.heal import Healing
from daemon.session.placements import PlacementGate
from daemon.session.states import (
    HEAL_BACKOFF,
    HOLDING,
    MEMORY_TIMEOUT,
    TRANSITIONS,
    Observed,
    SessionSettings,
    SessionState,
    increment_control,
)
from drivers.memory import BoardMemory, MemoryObserved
from drivers.observations import (
    BatteryObserved,
    BoardRead,
    CaughtUp,
    ClockObserved,
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

_S = SessionState


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
        self._actions: list[Action] = []
        #: The daemon stops: the link closing next is no board going offline.
        self.stopping = False
        self._sensed: PlacementObserved | None = None  # the latest placement
        self._held_clock: ClockObserved | None = None  # waiting for a read (CONNECTED, READING)
        self._clock = ClockFeed(number, view, self._record, increments)
        self._last_battery: BatteryObserved | None = None  # journalled on this connection
        self._memory_due = math.inf
        self._caught_up_due = math.inf
        self._heal = Healing(self.settings)
        self._placements = PlacementGate(number, record, self._say)

    @property
    def flood(self) -> FloodGuard:
        """The flood guard of the board's placements."""
        return self._placements.flood

    # -- outputs ------------------------------------------------------------------------

    def actions_to_send(self) -> list[Action]:
        """Return and forget the actions to carry out, in order."""
        return drain(self._actions)

    def next_deadline(self) -> float | None:
        """When :meth:`receive_time` must be called next (None: nothing is due)."""
        due = min(
            self._memory_due,
            self._caught_up_due,
            self._placements.due,
            self._refresh_due(),
            self._heal_due(),
            self._check_due(),
            self._press_check_due(),
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
            self._clock.owe(recovered=False)
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
        self._sensed = self._held_clock = None
        self._last_battery = None
        self._clock.forget()
        self._placements.forget_connection()
        self._memory_due = self._caught_up_due = math.inf
        self._heal.reset()
        if self.increments is not None:
            self.increments.defer(False)

    def stop(self) -> None:
        """The daemon stops: the link closing next is no board going offline."""
        self.stopping = True
        self._placements.due = math.inf

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
        sensed, self._sensed = self._sensed, placement
        lost = sensed is not None and sensed.board != placement.board
        if whole and lost and self.state in (_S.LIVE, _S.BACKLOG):  # check the moves
            due = placement.at + self.settings.heal_after
            self._heal.check_at = min(self._heal.check_at, due)
        if self.state is _S.READING:
            return  # in the memory
        if self.state is _S.CONNECTED:
            if not whole:
                return
            self._first_read(placement)
            return
        self._placements.offer(placement, placement.at)

    def _first_read(self, placement: PlacementObserved) -> None:
        at = placement.at
        if self.view.memory_needed(placement.board):
            self._ask_memory(at, healing=False)
            return
        self._enter(_S.LIVE)
        self._placements.offer(placement, at)
        self._release_held_clock(at)

    def receive_clock(self, reading: ClockObserved) -> None:
        """A clock reading."""
        if self.state in HOLDING:
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
            board=self.number, at=at, state="read", memory=memory, heal=self._heal.reading
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
        self._clock.forget_repeat()  # the next reading is journalled, saying so

    def receive_fault(self, at: float) -> None:
        """A bug was met handling this board: start afresh from the session's state (the
        whole board read again, the increments decided anew)."""
        self._clock.forget()
        if self.increments is not None:
            self.increments.reset()
            self._clock.owe(recovered=False)
        self._actions.append(AskBoard())

    def new_round(self) -> None:
        """A new round, maybe another clock: who adds its increments is decided afresh."""
        if self.increments is not None:
            self.increments.reset()

    def clock_set(self, left_seconds: int, right_seconds: int) -> None:
        """dgtcast set the clock to these times (paused): who adds its increments is
        decided afresh, and readings taken since the clock took them count
        (:meth:`IncrementControl.clock_set`)."""
        self._clock.forget_seen()
        if self.increments is not None:
            self.increments.clock_set(left_seconds, right_seconds)

    def receive_time(self, now: float) -> None:
        """Let the session's deadlines up to ``now`` pass."""
        if now >= self._memory_due:
            self._say(logging.WARNING, f"= board {self.number}: no memory in time")
            self._end_reading(self._failed("no answer", now), release=True)
        if now >= self._caught_up_due:
            self._go_live(now)
        if now >= self._placements.due:
            self._placements.receive_time(now, stopping=self.stopping)
        if now >= self._refresh_due():
            self._heal.refreshed(self.view.unmatched_since())
            self._actions.append(AskBoard())
        if now >= self._heal_due():
            since = self.view.unmatched_since()
            why = f"out of sync since {since:.0f}: reading its memory again"
            self._ask_memory(now, healing=True, why=f"{why} (try {self._heal.tries + 1})")
        elif now >= self._check_due():
            why = "field updates were lost: reading its memory to check the moves"
            self._ask_memory(now, healing=True, why=why)
        elif now >= self._press_check_due():
            why = "a move was made with no lever press read: reading its memory for the presses"
            self._ask_memory(now, healing=True, why=why)

    def rebuild(self, at: float) -> str | None:
        """An arbiter's ``rebuild_from_memory``: read the board's memory now and recover
        the moves since the last agreed position (the heal's path, whatever its back-off
        says). Returns why it cannot be done now (None: the memory is asked)."""
        number = self.number
        match self.state:
            case _S.LIVE if not self.stopping:
                why = "an arbiter asked to rebuild its record: reading its memory again"
                self._ask_memory(at, healing=True, why=why)
                return None
            case _S.READING | _S.BACKLOG:
                return f"board {number}'s memory is being read already"
            case _S.CONNECTED:
                return f"board {number} is being read: its memory is asked if the game needs it"
            case _S.OFFLINE:
                return f"board {number} is offline: its memory is read when it is back"
            case _:
                return "the daemon is stopping"

    # -- the memory ---------------------------------------------------------------------

    def _ask_memory(self, at: float, *, healing: bool, why: str = "") -> None:
        self._enter(_S.READING)
        self._clock.forget_seen()  # the presses until the reading after it are the memory's
        self._heal.reading = healing
        self._heal.check_at = math.inf
        if healing:
            self._say(logging.WARNING, f"= board {self.number} {why}")
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
            ended = replace(ended, placement=sensed.board, running=running, came=held)
        self._record(ended)
        if not release:
            return
        if ended.state == "read":
            if self._heal.reading and self.increments is not None:
                self.increments.forget_last()  # the presses meanwhile are the memory's
            self._clock.owe(recovered=True)
            if held is not None and self.increments is not None:
                self.increments.probe_cut(held)  # as it came: before the memory
            self._enter(_S.BACKLOG)
            if self.increments is not None:
                self.increments.defer(True)
            self._caught_up_due = at + self.settings.caught_up_timeout
            self._actions.append(AskCaughtUp())
            self._actions.append(AskBoard())  # the sensed board checked against the memory
        else:
            self._go_live(at)
        self._heal.read_ended(at)
        if sensed is not None:
            self._placements.send(replace(sensed, at=at))
        if held is not None:
            self._apply_clock(replace(held, at=at))

    def _go_live(self, at: float) -> None:
        self._caught_up_due = math.inf
        self._enter(_S.LIVE)
        if self.increments is not None:
            self.increments.defer(False)

    # -- timers ------------------------------------------------------------------------

    def _refresh_due(self) -> float:
        """When the board is read again: its placement has matched nothing for a moment."""
        if self.state is not _S.LIVE:
            return math.inf
        return self._heal.refresh_due(self.view.unmatched_since())

    def _check_due(self) -> float:
        """When the memory is read to check the moves: field updates were lost."""
        if self.state is not _S.LIVE or self.stopping:
            return math.inf
        return self._heal.check_at

    def _press_check_due(self) -> float:
        """When the memory is read for the presses: a move was made on a running mode 23
        clock with no press read (a lost reading may have hidden it, and its increment)."""
        if self.state is not _S.LIVE or self.stopping:
            return math.inf
        since = self.view.unpressed_since()
        return math.inf if since is None else since + self.settings.heal_after

    def _heal_due(self) -> float:
        """When the memory is read again: the game under way and the board disagree."""
        if self.state is not _S.LIVE or self.stopping:
            return math.inf
        return self._heal.heal_due(self.view.unmatched_since())

    # -- clock readings -----------------------------------------------------------------

    def _release_held_clock(self, at: float) -> None:
        held, self._held_clock = self._held_clock, None
        if held is not None:
            self._apply_clock(replace(held, at=at))

    def _apply_clock(self, reading: ClockObserved) -> None:
        command = self._clock.apply(reading)
        if command is not None:
            self._actions.append(command)

    # -- state --------------------------------------------------------------------------

    def _enter(self, state: SessionState) -> None:
        if state is self.state:
            return
        if state not in TRANSITIONS[self.state]:
            raise RuntimeError(f"bad transition {self.state.name} -> {state.name}")
        self.state = state

    def _say(self, level: int, text: str) -> None:
        self._actions.append(Say(level=level, text=text))
