"""One e-board's session: driver reports in, journal inputs out (layer L3).

A :class:`BoardSession` reads its :class:`~drivers.dgt.aio.supervisor.BoardSupervisor`'s
reports and turns them into the vendor-neutral inputs of the round: a whole placement
whenever a board dump or field update changed it, a clock reading whenever the clock
reported, the link going up or down. The :class:`~daemon.shell.service.RoundService` journals
each before the game layer sees it. Clock commands (mode 23) go out through the same
supervisor.

Catching up (docs/reconstruction.md, "Recovery from the board's memory"): when a board
comes online and its first dump does not match the game (a cable pull, a restart, a
daemon started mid-round), the session asks the board's EEPROM log (about 8 s at 9600
baud, dgt-protocol.md §6) and journals ``recovery`` ``reading``. Meanwhile it holds the
board's reports back (they are in the log, or queue behind it on the line), keeping only
the placement and the last clock reading. The log arrives as ``recovery`` ``read``; then
the placement and clock reading as they stand now, and live input follows on. Without a
log within :data:`MEMORY_TIMEOUT` (or if the link drops) ``recovery`` ``failed``: the
held placement and reading go on as if nothing had been tried.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import time
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any

from base.backoff import BackoffPolicy
from base.fen import board_fen
from daemon.config.model import BoardConfig
from daemon.config.sections import Section
from daemon.journal.inputs import (
    BATTERY,
    CLOCK,
    FLOOD,
    LINK,
    PLACEMENT,
    RECOVERY,
    battery_payload,
    clock_payload,
    link_payload,
    placement_payload,
)
from daemon.round.mode23 import IncrementControl, IncrementState, game_move_number
from daemon.shell.clock_set import ClockSetResult, set_clock
from daemon.shell.flood import FloodGuard
from daemon.shell.service import RoundService
from drivers.dgt.aio.link import DgtLinkError
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
from drivers.dgt.events import BatteryStatus, BoardDump, ClockTimes, EEMoves, FieldUpdated
from drivers.dgt.memory import board_memory
from drivers.dgt.observe import SensorBoard, battery_observation, clock_observation
from drivers.memory import memory_payload
from drivers.observations import (
    ClockObserved,
    ClockSide,
    LinkObserved,
    LinkState,
    PlacementObserved,
)

__all__ = [
    "MEMORY_TIMEOUT",
    "BoardSession",
    "board_supervisor",
]

log = logging.getLogger(__name__)

#: Seconds to wait for the EEPROM log (7,939 bytes ≈ 8.3 s at 9600 baud, §3) and the
#: messages queued before it.
MEMORY_TIMEOUT = 30.0


class BoardSession:
    """Feeds one e-board's reports to the round service.

    Args:
        board: the board's configuration (``port`` set).
        service: the round service.
        supervisor: the board's supervisor (made from ``board.port`` when None).
        section: the board's section; with ``dgt_mode = 23`` dgtcast adds the increments
            and the periods' time (daemon/round/mode23.py).
        refresh_after: seconds the sensed placement may match nothing of the game before
            the whole board is read again (a lost field update leaves it wrong for good,
            docs/faults.md); once per such episode.

    A bug met while handling one report (or in a clock command, or a timer of the
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
        refresh_after: float = 0.5,
    ) -> None:
        if not board.has_eboard:
            raise ValueError(f"board {board.number} has no e-board port or serial")
        self.board = board
        self.service = service
        self.supervisor = supervisor or board_supervisor(board)
        #: Makes the next supervisor when :meth:`run` runs again after a failure.
        self.new_supervisor: Callable[[], BoardSupervisor] = lambda: board_supervisor(self.board)
        #: Told ``(where, exception)`` of a bug the session survives; None: it ends run().
        self.on_fault: Callable[[str, BaseException], None] | None = None
        self._runs = 0
        self._sensors = SensorBoard()
        self._last_clock: dict[str, object] | None = None
        self._last_battery: dict[str, object] | None = None  # journalled on this connection
        self._wall_clock = wall_clock
        self._last_wall = -math.inf
        self.online = asyncio.Event()
        self._stopping = False
        self.increments: IncrementControl | None = None
        if section is not None and section.event.dgt_mode == 23:
            side = ClockSide(board.clock_white_side) if board.clock_white_side else None
            self.increments = IncrementControl(
                section.event.clock_rules, white_side=side, move_number=self._move_number
            )
        self._commands: set[asyncio.Task[None]] = set()
        self.refresh_after = refresh_after
        self._refresh_timer: asyncio.TimerHandle | None = None
        self._refreshed_episode: float | None = None
        self._first_dump = False  # the next board dump is the handshake's
        self._catching_up = False  # the board's memory was asked, not yet received
        self._held_clock: ClockObserved | None = None
        self._memory_timer: asyncio.TimerHandle | None = None
        self.memory_timeout = MEMORY_TIMEOUT
        self.flood = FloodGuard()
        self._held: PlacementObserved | None = None
        self._flood_timer: asyncio.TimerHandle | None = None
        self._last_placement: dict[str, Any] | None = None
        self._recent: deque[str] = deque(maxlen=2)  # the last placements offered (FEN)

    def _journalled_reading(self) -> ClockObserved | None:
        """The board's last clock reading in the journal (before a reconnection)."""
        game = self.service.core.games.get(self.board.number)
        return None if game is None else game.reading

    def _move_number(self, side: ClockSide) -> int | None:
        """The move a press on ``side`` completes, from the board's game (None: no game;
        0: none, the start position stands and the press starts the clock)."""
        game = self.service.core.games.get(self.board.number)
        tracker = None if game is None else game.tracker
        return None if tracker is None else game_move_number(tracker, side)

    def _owe_increments(self, *, recovered: bool) -> None:
        """Give the clock what the board's game says it lacks (mode 23): increments of
        presses replayed from the memory, in their ``[%clk]`` already. Known from the
        journal, so a restart before the clock got them owes them again, once; after a
        memory whose presses show the clock adding its own time, nothing is added."""
        game = self.service.core.games.get(self.board.number)
        if self.increments is None or game is None:
            return
        if recovered and game.clock_adds:
            self.increments.leave_alone()
        elif recovered or game.clock_owed:
            self.increments.owe(game.clock_owed)

    def new_round(self) -> None:
        """The board's section moved on to another round: a new game, maybe another
        clock, so who adds its increments is decided afresh (daemon/round/mode23.py)."""
        if self.increments is not None:
            self.increments.reset()

    async def set_clock(self, section: Section) -> ClockSetResult:
        """Set this board's clock (:func:`set_clock`); its move counters start afresh the
        moment the clock took the times (a press may follow before its text is shown), and
        who adds its increments is decided anew."""
        reset = None if self.increments is None else self.increments.reset
        return await set_clock(self.supervisor, self.board, section, on_set=reset)

    async def stop(self) -> None:
        """Stop the board's supervisor; the link closing then is no ``board_offline``."""
        self._stopping = True
        self._cancel_refresh()
        if self._flood_timer is not None:
            self._flood_timer.cancel()
            self._flood_timer = None
        await self.supervisor.stop()

    async def run(self) -> None:
        """Supervise the board and feed its reports until cancelled or stopped.

        Run again after it failed (a supervisor's bug), it starts a new supervisor: the
        board is offline until that one has connected.
        """
        if self._stopping:
            return  # stopped before it ran (a daemon stopped right after its start)
        self._runs += 1
        if self._runs > 1:
            down = LinkDown(port=self.board.port or "", reason="its session restarted")
            self.receive_report(down, self._wall_clock())
            self.supervisor = self.new_supervisor()
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(self.supervisor.run())
            async for batch in self.supervisor.report_batches():
                for at, report in batch:
                    try:
                        self.receive_report(report, self._to_wall(at))
                    except Exception as exc:  # a bug: this board's, and it goes on
                        self._fault(f"board {self.board.number}'s session", exc)

    def _fault(self, where: str, exc: BaseException) -> None:
        """Report a bug (or raise it, without :attr:`on_fault`); then start afresh from
        the session's state: the whole board is read again, the increments decided anew."""
        if self.on_fault is None:
            raise exc
        self.on_fault(where, exc)
        self._last_clock = None
        if self.increments is not None:
            self.increments.reset()
            self._owe_increments(recovered=False)
        with contextlib.suppress(DgtLinkError):
            self.supervisor.request_refresh()

    def _guarded(self, callback: Callable[[], None]) -> Callable[[], None]:
        """``callback`` for the event loop's timers: a bug in it is a fault of the session."""

        def run() -> None:
            try:
                callback()
            except Exception as exc:
                self._fault(f"board {self.board.number}'s session", exc)

        return run

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

    def receive_report(self, report: Report, at: float) -> None:
        """Turn one driver report into round inputs (none for most)."""
        number = self.board.number
        match report:
            case LinkUp():
                self.online.set()
                self._first_dump = True
                if self.increments is not None:  # maybe another clock: decided afresh
                    self.increments.reset(self._journalled_reading())
                    self._owe_increments(recovered=False)
                log.info("= board %d online on %s (serial %s)", number, report.port, report.serial)
                online = LinkObserved(state=LinkState.ONLINE, at=at)
                self._send(LINK, link_payload(online, serial=report.serial, port=report.port), at)
            case LinkDown() if self._stopping:
                self.online.clear()
                self._end_catching_up({"state": "failed", "reason": "stopped"}, at)
            case LinkDown():
                self.online.clear()
                self._end_catching_up({"state": "failed", "reason": "link lost"}, at)
                log.warning("= board %d offline: %s", number, report.reason)
                self._sensors = SensorBoard()  # the next dump resynchronises
                self._first_dump, self._held_clock = False, None
                self._last_clock = self._last_battery = None
                self._last_placement, self._held = None, None
                self._cancel_refresh()
                payload = link_payload(LinkObserved(state=LinkState.OFFLINE, at=at), report.reason)
                self._send(LINK, payload, at)
            case BoardDump() | FieldUpdated():
                self._receive_placement(report, at)
            case ClockTimes():
                self._receive_clock(clock_observation(report, at), at)
            case BatteryStatus():
                self._receive_battery(report, at)
            case EEMoves() if self._catching_up:
                memory = board_memory(report.records)
                log.info("= board %d memory read: %d steps", number, len(memory.steps))
                self._end_catching_up({"state": "read", "memory": memory_payload(memory)}, at)
            case _:
                pass  # acks, serial numbers, versions: the driver's business

    def _receive_placement(self, report: BoardDump | FieldUpdated, at: float) -> None:
        corrections = self._sensors.corrections
        placement = self._sensors.receive_event(report, at)
        first = self._first_dump and isinstance(report, BoardDump)
        if isinstance(report, BoardDump):
            self._first_dump = False  # a field update first does not make it any later dump
        if placement is None or self._catching_up:
            if first:
                self._release_held_clock(at)
            return
        if self._sensors.corrections > corrections:
            log.info("= board %d: a fresh dump corrected the sensed board", self.board.number)
        needed = first and self.service.core.memory_needed(self.board.number, placement.board)
        if needed and self._start_catching_up(at):
            return
        self._offer_placement(placement, at)
        if first:
            self._release_held_clock(at)

    def _release_held_clock(self, at: float) -> None:
        """The first dump is in and no memory is read: the clock reading held back until
        then goes on, after the placement it follows."""
        held, self._held_clock = self._held_clock, None
        if held is not None:
            self._receive_clock(dataclasses.replace(held, at=at), at)

    def _receive_battery(self, report: BatteryStatus, at: float) -> None:
        """A wireless board's battery level (asked every minute, drivers/dgt/battery.py):
        journalled when it changed (a reconnect journals it once again)."""
        payload = battery_payload(battery_observation(report, at))
        if payload != self._last_battery:
            self._last_battery = payload
            self._send(BATTERY, payload, at)

    def _start_catching_up(self, at: float) -> bool:
        """Ask the board's memory; hold its reports back until it comes. False: not asked."""
        try:
            self.supervisor.request_memory()
        except DgtLinkError as exc:
            log.warning("board %d: memory not asked: %s", self.board.number, exc)
            return False
        log.info("= board %d catching up: reading its memory", self.board.number)
        self._catching_up = True
        self._send(RECOVERY, {"state": "reading"}, at)
        loop = asyncio.get_running_loop()
        self._memory_timer = loop.call_later(
            self.memory_timeout, self._guarded(self._memory_timed_out)
        )
        return True

    def _memory_timed_out(self) -> None:
        self._memory_timer = None
        log.warning("= board %d: no memory within %.0f s", self.board.number, self.memory_timeout)
        self._end_catching_up({"state": "failed", "reason": "no answer"}, self._wall_clock())

    def _end_catching_up(self, payload: dict[str, object], at: float) -> None:
        """Journal the end of catching up; then the placement and clock as they stand."""
        if not self._catching_up:
            return
        self._catching_up = False
        if self._memory_timer is not None:
            self._memory_timer.cancel()
            self._memory_timer = None
        placement = self._sensors.placement
        held, self._held_clock = self._held_clock, None
        if placement is not None:  # for the gap search when the memory cannot cover it
            payload = {**payload, "placement": board_fen(placement)}
            payload["running"] = (
                None if held is None or held.running is None else held.running.value
            )
        self._send(RECOVERY, payload, at)
        if payload["state"] == "read":
            self._owe_increments(recovered=True)
        if placement is not None:
            self._send_placement(PlacementObserved(board=placement, at=at), at)
        if held is not None:
            self._receive_clock(dataclasses.replace(held, at=at), at)

    def _offer_placement(self, placement: PlacementObserved, at: float) -> None:
        """Send a placement on, unless the board floods the line (daemon/shell/flood.py)."""
        was_flooding = self.flood.flooding
        fen = board_fen(placement.board)
        flicker = len(self._recent) == 2 and fen == self._recent[0] != self._recent[1]
        self._recent.append(fen)
        if self.flood.admit(at, flicker=flicker):
            self._held = None
            self._send_placement(placement, at)
        else:
            self._held = placement
        if self.flood.flooding and not was_flooding:
            log.warning(
                "= board %d floods the line (%d placements a second): one in every %.1f s"
                " goes on until it calms down",
                self.board.number,
                self.flood.rate,
                self.flood.interval,
            )
            self._send(FLOOD, {"flooding": True, "rate": self.flood.rate}, at)
        if self.flood.flooding and self._flood_timer is None:
            delay = max(0.0, self.flood.next_release() - at)
            loop = asyncio.get_running_loop()
            self._flood_timer = loop.call_later(delay, self._guarded(self._flood_tick))

    def _flood_tick(self) -> None:
        """While flooding: send the latest held placement, and notice the calm."""
        self._flood_timer = None
        now = self._wall_clock()
        if self._held is not None:
            placement, self._held = self._held, None
            self.flood.released(now)
            self._send_placement(replace(placement, at=now), now)
        if self.flood.calmed(now):
            log.warning("= board %d calmed down", self.board.number)
            self._send(FLOOD, {"flooding": False, "rate": self.flood.rate}, now)
            return
        if self.flood.flooding:
            delay = self.flood.interval if self._held is not None else 0.5
            loop = asyncio.get_running_loop()
            self._flood_timer = loop.call_later(delay, self._guarded(self._flood_tick))

    def _send_placement(self, placement: PlacementObserved, at: float) -> None:
        payload = placement_payload(placement)
        if payload == self._last_placement:
            return  # a flicker back to what was sent last: nothing new
        self._last_placement = payload
        self._send(PLACEMENT, payload, at)
        self._watch_match()

    def _watch_match(self) -> None:
        """Read the board again when its placement has matched nothing for a moment."""
        since = self._unmatched_since()
        if since is None or since == self._refreshed_episode or self._refresh_timer is not None:
            return
        loop = asyncio.get_running_loop()
        self._refresh_timer = loop.call_later(
            self.refresh_after, self._guarded(self._refresh_if_unmatched)
        )

    def _refresh_if_unmatched(self) -> None:
        self._refresh_timer = None
        since = self._unmatched_since()
        if since is not None and since != self._refreshed_episode:
            self._refreshed_episode = since
            self.supervisor.request_refresh()

    def _unmatched_since(self) -> float | None:
        game = self.service.core.games.get(self.board.number)
        tracker = None if game is None else game.tracker
        return None if tracker is None else tracker.unmatched_since

    def _cancel_refresh(self) -> None:
        if self._refresh_timer is not None:
            self._refresh_timer.cancel()
            self._refresh_timer = None

    def _receive_clock(self, reading: ClockObserved, at: float) -> None:
        if self._catching_up or self._first_dump:
            # The presses before it are in the memory; before a connection's first dump,
            # readings queued while nobody listened would complete a pending move with a
            # later press's time before the memory is asked.
            self._held_clock = reading
            return
        if self.increments is not None:
            corrected, command = self.increments.receive_reading(reading)
            if corrected is None:
                return  # stale: the clock is being set
            reading = corrected
            if command is not None:
                self._spawn(self._set_clock(command))
        adding = self.increments
        clock_adds = adding is not None and adding.state is IncrementState.CLOCK_ADDS
        payload = clock_payload(reading, clock_adds=clock_adds)
        if payload != self._last_clock:  # update-nice repeats nothing new
            self._last_clock = payload
            self._send(CLOCK, payload, at)

    async def _set_clock(self, command: ClockSetAndRun) -> None:
        assert self.increments is not None
        try:
            await self.supervisor.send_clock(command)
        except DgtLinkError as exc:
            log.warning("board %d: increment not set on the clock: %s", self.board.number, exc)
        except Exception as exc:  # a bug in a clock command: this board's
            self._fault(f"board {self.board.number}'s clock command", exc)
        finally:
            self.increments.receive_done()

    def _spawn(self, job: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(job)
        self._commands.add(task)
        task.add_done_callback(self._commands.discard)

    def _send(self, kind: str, payload: dict[str, object], at: float) -> None:
        self.service.receive_grouped(self.board.number, kind, payload, at)


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
