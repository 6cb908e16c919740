"""One e-board's session: the asyncio shell around :class:`~daemon.session.core.SessionCore`.

A :class:`BoardSession` reads its :class:`~drivers.dgt.aio.supervisor.BoardSupervisor`'s
reports, turns them into vendor-neutral observations (:class:`~drivers.dgt.observer.
DgtObserver`, one per connection) and feeds them to the board's pure session core, which
journals the round's inputs through the :class:`~daemon.shell.service.RoundService` and
decides everything else (docs/daemon.md, "The board session"). The shell only carries out
what the core asks (the board's memory, a whole read, a marker on the line, a clock
command, a log line) and wakes it at its deadline with one timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from base.backoff import BackoffPolicy
from broadcast.feed.commands import CommandReply, RebuildFromMemory
from daemon.config.model import BoardConfig
from daemon.config.sections import Section
from daemon.round.inputs import BoardInput, FloodInput
from daemon.session.actions import Action, AskBoard, AskCaughtUp, AskMemory, Say, SetClock
from daemon.session.core import SessionCore, SessionSettings, increment_control
from daemon.session.flood import FloodGuard
from daemon.session.view import RoundBoardView
from daemon.shell.clock_set import ClockSetResult, set_clock
from daemon.shell.service import RoundService
from drivers.dgt.aio.link import ClockRefused, DgtLinkError
from drivers.dgt.aio.ports import PortSpec
from drivers.dgt.aio.supervisor import (
    BoardSupervisor,
    LinkDown,
    LinkUp,
    Report,
    SerialSightings,
)
from drivers.dgt.commands import ClockSetAndRun
from drivers.dgt.device_core import DeviceTimeouts
from drivers.dgt.observer import DgtObserver
from drivers.observations import LinkObserved, LinkState

__all__ = [
    "BoardSession",
    "board_supervisor",
    "read_memory",
]

log = logging.getLogger(__name__)


class BoardSession:
    """Feeds one e-board's reports to its session core and carries out what it asks.

    Args:
        board: the board's configuration (``port`` set).
        service: the round service.
        supervisor: the board's supervisor (made from ``board.port`` when None).
        section: the board's section; with ``dgt_mode = 23`` dgtcast adds the increments
            and the periods' time (daemon/mode23/control.py).
        settings: the session core's waits (daemon/session/core.py).

    A bug met while handling one report (or in a clock command, or at a deadline of the
    session) goes to :attr:`on_fault` when it is set (the daemon's
    :class:`~daemon.shell.faults.Faults`): the session then goes on from its state, reads
    the whole board again and decides afresh who adds the clock's increments. Without
    it, the exception ends :meth:`run`. A supervisor that fails is replaced by a new one
    when :meth:`run` is called again.
    """

    def __init__(
        self,
        board: BoardConfig,
        service: RoundService,
        supervisor: BoardSupervisor | None = None,
        *,
        section: Section | None = None,
        wall_clock: Callable[[], float] = time.time,
        settings: SessionSettings | None = None,
        on_fault: Callable[[str, BaseException], None] | None = None,
        new_supervisor: Callable[[], BoardSupervisor] | None = None,
    ) -> None:
        if not board.has_eboard:
            raise ValueError(f"board {board.number} has no e-board port or serial")
        self.board = board
        self.service = service
        self.supervisor = supervisor or board_supervisor(board)
        #: Makes the next supervisor when :meth:`run` runs again after a failure.
        self.new_supervisor = new_supervisor or (lambda: board_supervisor(self.board))
        #: Told ``(where, exception)`` of a bug the session survives; None: it ends run().
        self.on_fault = on_fault
        self._runs = 0
        self._observer = DgtObserver()
        self._wall_clock = wall_clock
        self._last_wall = -math.inf
        self.online = asyncio.Event()
        view = RoundBoardView(service.core, board.number)
        self.core = SessionCore(
            board.number,
            view,
            self._record,
            increments=increment_control(board, section, view),
            settings=settings,
        )
        self._commands: set[asyncio.Task[None]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_due = math.inf

    @property
    def flood(self) -> FloodGuard:
        """The flood guard of the board's placements."""
        return self.core.flood

    def new_round(self) -> None:
        """The board's section moved on to another round: a new game, maybe another
        clock, so who adds its increments is decided afresh (daemon/mode23/control.py)."""
        self.core.new_round()

    async def set_clock(self, section: Section) -> ClockSetResult:
        """Set this board's clock (:func:`set_clock`); its move counters start afresh the
        moment the clock took the times (a press may follow before its text is shown), and
        who adds its increments is decided anew."""
        return await set_clock(self.supervisor, self.board, section, on_set=self.core.clock_set)

    def read_memory(self) -> str | None:
        """An arbiter's ``rebuild_from_memory``: read the board's memory now and recover
        the moves since the last agreed position; why not, when it cannot be done now."""
        refused = self.core.rebuild(self._wall_clock())
        self._carry_out()
        return refused

    async def stop(self) -> None:
        """Stop the board's supervisor; the link closing then is no ``board_offline``."""
        self.core.stop()
        self._cancel_timer()
        await self.supervisor.stop()

    async def run(self) -> None:
        """Supervise the board and feed its reports until cancelled or stopped.

        Run again after it failed (a supervisor's bug), it starts a new supervisor: the
        board is offline until that one has connected.
        """
        if self.core.stopping:
            return  # stopped before it ran (a daemon stopped right after its start)
        self._runs += 1
        if self._runs > 1:
            down = LinkDown(port=self.board.port or "", reason="its session restarted")
            self.receive_report(down, self._wall_clock())
            self.supervisor = self.new_supervisor()
        try:
            async with asyncio.TaskGroup() as tasks:
                tasks.create_task(self.supervisor.run())
                async for batch in self.supervisor.report_batches():
                    for at, report in batch:
                        self._guarded(self.receive_report, report, self._to_wall(at))
        finally:
            self._cancel_timer()

    def receive_report(self, report: Report, at: float) -> None:
        """Turn one driver report into observations of the core; carry out its actions."""
        match report:
            case LinkUp():
                self._observer = DgtObserver()  # the next board dump resynchronises
                self.online.set()
                online = LinkObserved(state=LinkState.ONLINE, at=at)
                self.core.receive_link(online, serial=report.serial, port=report.port)
            case LinkDown():
                self.online.clear()
                offline = LinkObserved(state=LinkState.OFFLINE, at=at)
                self.core.receive_link(offline, reason=report.reason)
            case _:
                corrections = self._observer.sensors.corrections
                observed = self._observer.receive_event(report, at)
                if self._observer.sensors.corrections > corrections:
                    log.info(
                        "= board %d: a fresh dump corrected the sensed board", self.board.number
                    )
                if observed is not None:
                    self.core.receive(observed)
        self._carry_out()

    # -- what the core asks -------------------------------------------------------------

    def _carry_out(self) -> None:
        """Carry out the core's actions; wake it at its next deadline."""
        for action in self.core.actions_to_send():
            self._act(action)
        self._arm_timer()

    def _act(self, action: Action) -> None:
        match action:
            case AskMemory():
                try:
                    self.supervisor.request_memory()
                except DgtLinkError as exc:
                    self.core.receive_memory_refused(str(exc), self._wall_clock())
            case AskBoard():
                with contextlib.suppress(DgtLinkError):
                    self.supervisor.request_refresh()
            case AskCaughtUp():
                with contextlib.suppress(DgtLinkError):  # a link down follows
                    self.supervisor.request_marker()
            case SetClock():
                self._spawn(self._set_clock(action.command))
            case Say():
                log.log(action.level, "%s", action.text)

    def _arm_timer(self) -> None:
        due = self.core.next_deadline()
        due = math.inf if due is None else due
        if due == self._timer_due:
            return
        self._cancel_timer()
        if math.isfinite(due):
            self._timer_due = due
            delay = max(0.0, due - self._wall_clock())
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(delay, self._on_timer)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_due = None, math.inf

    def _on_timer(self) -> None:
        self._timer, self._timer_due = None, math.inf
        self._guarded(self._time_passed)

    def _time_passed(self) -> None:
        self.core.receive_time(self._wall_clock())
        self._carry_out()

    async def _set_clock(self, command: ClockSetAndRun) -> None:
        refused = False
        try:
            await self.supervisor.send_clock(command)
        except ClockRefused:
            refused = True  # not in mode 23: the core says so once
        except DgtLinkError as exc:
            log.info("board %d: increment not set on the clock: %s", self.board.number, exc)
        except Exception as exc:  # a bug in a clock command: this board's
            self._fault(f"board {self.board.number}'s clock command", exc)
        finally:
            self._guarded(self._clock_done, refused)

    def _clock_done(self, refused: bool) -> None:
        now = self._wall_clock()
        if refused:
            self.core.receive_clock_refused(now)
        self.core.receive_clock_done(now)
        self._carry_out()

    def _spawn(self, job: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(job)
        self._commands.add(task)
        task.add_done_callback(self._commands.discard)

    def _record(self, item: BoardInput | FloodInput) -> None:
        self.service.receive_grouped(item)

    # -- faults and times ---------------------------------------------------------------

    def _guarded(self, step: Callable[..., None], *args: Any) -> None:
        """Run one step of the session; a bug in it is this board's fault."""
        try:
            step(*args)
        except Exception as exc:  # a bug: this board's, and it goes on
            self._fault(f"board {self.board.number}'s session", exc)

    def _fault(self, where: str, exc: BaseException) -> None:
        """Report a bug (or raise it, without :attr:`on_fault`); then start afresh from
        the session's state: the whole board is read again, the increments decided anew."""
        if self.on_fault is None:
            raise exc
        self.on_fault(where, exc)
        self.core.receive_fault(self._wall_clock())
        try:
            self._carry_out()
        except Exception as again:  # the same bug once more: reported, not raised
            self.on_fault(where, again)

    def _to_wall(self, loop_time: float) -> float:
        """The wall-clock time of a report stamped with the loop's clock, never earlier
        than the report before it.

        Reports read in one burst share a loop stamp; the wall clock and the loop clock
        are read at slightly different instants for each, so without the floor a later
        report could come out a microsecond earlier, and the game tracker (which orders a
        lever press against the move before it by these times) would miss a press.
        """
        age = max(0.0, asyncio.get_running_loop().time() - loop_time)
        wall = max(self._wall_clock() - age, self._last_wall)
        self._last_wall = wall
        return wall


def board_supervisor(
    board: BoardConfig,
    *,
    timeouts: DeviceTimeouts | None = None,
    backoff: BackoffPolicy | None = None,
    sightings: SerialSightings | None = None,
) -> BoardSupervisor:
    """The supervisor of a board's e-board: on ``port`` (a path or glob; every serial port
    when only ``serial`` is given), accepting only the board with ``serial`` if given;
    ``sightings`` is shared by the daemon's boards (drivers/dgt/aio/supervisor.py)."""
    if not board.has_eboard:
        raise ValueError(f"board {board.number} has no e-board port or serial")
    spec = PortSpec.auto() if board.port is None else PortSpec.from_str(board.port)
    return BoardSupervisor(
        spec, timeouts=timeouts, backoff=backoff, serial=board.serial, sightings=sightings
    )


def read_memory(sessions: Mapping[int, BoardSession], command: RebuildFromMemory) -> CommandReply:
    """Carry out an arbiter's ``rebuild_from_memory`` on the board's session (the service's
    :data:`~daemon.shell.service.MemoryReader`)."""
    session = sessions.get(command.board)
    if session is None:
        return CommandReply(ok=False, reason=f"board {command.board} has no e-board session")
    refused = session.read_memory()
    if refused is not None:
        return CommandReply(ok=False, reason=refused)
    return CommandReply(ok=True, details={"reading": command.board})
