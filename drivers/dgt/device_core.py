"""The decisions of one connected DGT board, sans I/O (see :mod:`drivers.dgt.aio.device`).

:class:`DeviceCore` decides, given events and ``now``: which clock command goes out next,
when an unacknowledged one is resent or given up (docs/protocol.md §7.4), when a silent
line is probed and when it is declared dead (§12.3), when the board is read again
(drivers/dgt/refresh.py) and when its battery is asked (drivers/dgt/battery.py). It never
awaits or reads a clock.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from base.drain import drain
from drivers.dgt.battery import BatteryPoll
from drivers.dgt.commands import CLOCK_COMMAND_IDS, ClockCommand, Command, RequestSerialNumber
from drivers.dgt.events import (
    BatteryStatus,
    BoardDump,
    ClockAck,
    EEMoves,
    ProtocolViolation,
    TimedEvent,
)
from drivers.dgt.refresh import BoardRefresh

__all__ = ["ClockDone", "DeviceCore", "DeviceTimeouts"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceTimeouts:
    """How long to wait for the board, in seconds.

    Attributes:
        reply: a request (version, serial number, board, clock) and its answer.
        long_serial: the long serial number; older boards never answer it.
        clock_ack: a clock command and its ack before a resend (§7.4: 2 s).
        clock_resends: resends of an unacknowledged clock command before giving up (§7.4: 3).
        quiet: silence after which the watchdog probes with 0x45 (§12.3).
        probe: the probe's answer; without one the link is dead.
        refresh: the whole board is read again (0x42) at least this often
            (drivers/dgt/refresh.py).
        refresh_settle: delay between a protocol violation and the dump it asks for.
        battery: the battery level is asked this often (0x4C, §4.1; Bluetooth boards
            answer, USB boards are not asked again after two silences,
            drivers/dgt/battery.py).
    """

    reply: float = 1.0
    long_serial: float = 0.5
    clock_ack: float = 2.0
    clock_resends: int = 3
    quiet: float = 3.0
    probe: float = 1.5
    refresh: float = 10.0
    refresh_settle: float = 0.2
    battery: float = 60.0

    def __post_init__(self) -> None:
        times = (
            self.reply,
            self.long_serial,
            self.clock_ack,
            self.quiet,
            self.probe,
            self.refresh,
            self.refresh_settle,
            self.battery,
        )
        if min(times) <= 0 or self.clock_resends < 0:
            raise ValueError("timeouts must be positive and resends not negative")

    def scaled(self, factor: float) -> DeviceTimeouts:
        """Every duration divided by ``factor`` (tests and demos run faster than life)."""
        return DeviceTimeouts(
            reply=self.reply / factor,
            long_serial=self.long_serial / factor,
            clock_ack=self.clock_ack / factor,
            clock_resends=self.clock_resends,
            quiet=self.quiet / factor,
            probe=self.probe / factor,
            refresh=self.refresh / factor,
            refresh_settle=self.refresh_settle / factor,
            battery=self.battery / factor,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockDone:
    """A clock command left the queue.

    Attributes:
        ticket: what :meth:`DeviceCore.submit_clock` returned.
        ack: the clock's answer (maybe an error ack), or None when every resend went
            unanswered.
        sends: how often the command was written (1 + resends).
    """

    ticket: int
    ack: ClockAck | None
    sends: int


@dataclass(slots=True, kw_only=True)
class _ClockJob:
    ticket: int
    command: ClockCommand
    command_id: int
    sends: int = 0
    deadline: float = math.inf


@dataclass(slots=True)
class _Watchdog:
    quiet: float
    probe: float
    last_heard: float
    probe_sent: float | None = None
    dead_reason: str | None = None
    commands: list[Command] = field(default_factory=list)

    def receive_heard(self, at: float) -> None:
        self.last_heard = max(self.last_heard, at)
        self.probe_sent = None

    def receive_time(self, now: float) -> None:
        if self.dead_reason is not None:
            return
        if self.probe_sent is not None and now >= self.probe_sent + self.probe:
            self.dead_reason = (
                f"watchdog: silent for {now - self.last_heard:.1f} s, no answer to the probe"
            )
        elif self.probe_sent is None and now >= self.last_heard + self.quiet:
            self.probe_sent = now
            self.commands.append(RequestSerialNumber())

    def next_deadline(self) -> float:
        if self.dead_reason is not None:
            return math.inf
        if self.probe_sent is not None:
            return self.probe_sent + self.probe
        return self.last_heard + self.quiet


class DeviceCore:
    """The decisions of one board connection, pure: events and ``now`` in, commands out.

    * Clock queue (docs/protocol.md §7.4): one clock command in flight at a time; it is
      done when the clock acks *that* command (ack1 = its id, §7.3), resent after
      ``clock_ack`` seconds without one, given up after ``clock_resends`` resends. A
      clock-times BWTIME does not complete it: a running clock sends one every second,
      which would hide a refused SetAndRun.
    * Watchdog (§12.3): after ``quiet`` seconds without any message, probe with
      RequestSerialNumber 0x45; anything heard within ``probe`` seconds clears it,
      otherwise :attr:`dead_reason` is set and the link must be closed.
    * Board refresh (:mod:`drivers.dgt.refresh`): once :meth:`start_refresh` is called, a
      board dump is requested after a protocol violation, on :meth:`request_refresh`,
      and every ``refresh`` seconds.
    * Battery (:mod:`drivers.dgt.battery`): once :meth:`start_refresh` is called, the
      battery level is asked at once and every ``battery`` seconds, never while the
      board's memory dump is on its way (:meth:`request_memory`).

    After each ``receive_*`` call, send :meth:`commands_to_send`, collect
    :meth:`clock_results`, check :attr:`dead_reason`, and call :meth:`receive_time`
    again at :meth:`next_deadline`.
    """

    def __init__(self, timeouts: DeviceTimeouts, *, now: float) -> None:
        """Start the watchdog's quiet period at ``now``."""
        self._timeouts = timeouts
        self._watchdog = _Watchdog(quiet=timeouts.quiet, probe=timeouts.probe, last_heard=now)
        self._queue: deque[_ClockJob] = deque()
        self._in_flight: _ClockJob | None = None
        self._tickets = 0
        self._commands: list[Command] = []
        self._results: list[ClockDone] = []
        self.refresh = BoardRefresh(
            period=timeouts.refresh, settle=timeouts.refresh_settle, reply=timeouts.reply
        )
        self.battery = BatteryPoll(period=timeouts.battery, reply=timeouts.reply)

    @property
    def dead_reason(self) -> str | None:
        """Why the link must be considered dead, or None while it lives."""
        return self._watchdog.dead_reason

    @property
    def clock_busy(self) -> bool:
        """A clock command is in flight or waiting."""
        return self._in_flight is not None or bool(self._queue)

    def submit_clock(self, command: ClockCommand, now: float) -> int:
        """Queue a clock command; returns its ticket. Send :meth:`commands_to_send` next."""
        self._tickets += 1
        job = _ClockJob(
            ticket=self._tickets, command=command, command_id=CLOCK_COMMAND_IDS[type(command)]
        )
        self._queue.append(job)
        self._send_next_clock(now)
        return job.ticket

    def cancel_clock(self, ticket: int) -> None:
        """Forget a queued command nobody waits for; one in flight still runs its course."""
        self._queue = deque(job for job in self._queue if job.ticket != ticket)

    def start_refresh(self, now: float) -> None:
        """The handshake is done: read the board again when it may be wrong, and often;
        ask the battery now and then."""
        self.refresh.start(now)
        self.battery.start(now)
        self.battery.receive_time(now)

    def request_memory(self, now: float) -> None:
        """The board's memory (0x49) is asked: no battery request until its dump arrived."""
        self.battery.receive_memory_request(now)

    def request_refresh(self, now: float) -> None:
        """Read the whole board again as soon as possible (after :meth:`start_refresh`)."""
        self.refresh.request(now)
        self.refresh.receive_time(now)

    def receive_events(self, events: Iterable[TimedEvent]) -> None:
        """Take events the board sent (with arrival times). Collect outputs next."""
        for at, event in events:
            self._watchdog.receive_heard(at)
            if isinstance(event, ClockAck):
                self._receive_ack(event, at)
            elif isinstance(event, BoardDump):
                self.refresh.receive_dump(at)
            elif isinstance(event, ProtocolViolation):
                self.refresh.receive_violation(at)
            elif isinstance(event, BatteryStatus):
                self.battery.receive_answer(at)
            elif isinstance(event, EEMoves):
                self.battery.receive_memory_dump(at)

    def receive_bytes(self, at: float) -> None:
        """Bytes arrived at ``at`` (maybe part of a long message): the line is alive.

        A board sending its ~8 s EEPROM dump (docs/protocol.md §3, §6) is heard all along,
        though no whole message arrives meanwhile; the watchdog must not probe it.
        """
        self._watchdog.receive_heard(at)

    def receive_time(self, now: float) -> None:
        """Let deadlines up to ``now`` pass: resend or give up a clock command, probe."""
        self._watchdog.receive_time(now)
        self.refresh.receive_time(now)
        self.battery.receive_time(now)
        job = self._in_flight
        if job is None or now < job.deadline:
            return
        if job.sends <= self._timeouts.clock_resends:
            self._write_clock(job, now)
        else:
            self._finish(ClockDone(ticket=job.ticket, ack=None, sends=job.sends), now)

    def commands_to_send(self) -> list[Command]:
        """Return and forget the commands to write, in order."""
        refresh, battery = self.refresh.commands_to_send(), self.battery.commands_to_send()
        commands = self._watchdog.commands + self._commands + refresh + battery
        self._watchdog.commands, self._commands = [], []
        return commands

    def clock_results(self) -> list[ClockDone]:
        """Return and forget the clock commands that left the queue."""
        return drain(self._results)

    def next_deadline(self) -> float:
        """When :meth:`receive_time` must be called next (loop time, maybe ``inf``)."""
        clock = self._in_flight.deadline if self._in_flight else math.inf
        return min(
            clock,
            self._watchdog.next_deadline(),
            self.refresh.next_deadline(),
            self.battery.next_deadline(),
        )

    def _receive_ack(self, ack: ClockAck, at: float) -> None:
        job = self._in_flight
        if job is not None and ack.command == job.command_id:
            self._finish(ClockDone(ticket=job.ticket, ack=ack, sends=job.sends), at)

    def _finish(self, done: ClockDone, now: float) -> None:
        self._results.append(done)
        self._in_flight = None
        self._send_next_clock(now)

    def _send_next_clock(self, now: float) -> None:
        if self._in_flight is None and self._queue:
            self._in_flight = self._queue.popleft()
            self._write_clock(self._in_flight, now)

    def _write_clock(self, job: _ClockJob, now: float) -> None:
        job.sends += 1
        job.deadline = now + self._timeouts.clock_ack
        self._commands.append(job.command)
