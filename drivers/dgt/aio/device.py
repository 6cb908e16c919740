"""One connected DGT board: handshake, request/reply, the clock command queue, a watchdog.

Two parts, in the sans-I/O manner:

* :class:`~drivers.dgt.device_core.DeviceCore` (its own module) decides, given events and
  ``now``: which clock command goes out next, when an unacknowledged one is resent or
  given up (docs/protocol.md §7.4), when a silent line is probed and when it is declared
  dead (§12.3). It never awaits or reads a clock.
* :class:`DgtDevice` is the asyncio shell: one task reads the
  :class:`~drivers.dgt.aio.link.DgtLink`, feeds the core, writes what the core asks for,
  resolves waiting requests, and hands every event on to
  :meth:`DgtDevice.events_received`.

Handshake (:meth:`DgtDevice.handshake`, docs/protocol.md §3, §12.3, §15): reset 0x40 (the
board goes IDLE), version 0x4D, serial number 0x45, long serial number 0x55 (only newer
boards answer), board dump 0x42, update-nice 0x4B (field updates and clock changes flow
from now on; clock commands are acknowledged only in this mode, §7.4), then the clock
version ``2B 03 03 09 00`` through the clock queue, without waiting for its ack. Field
updates heard before the handshake's board dump are dropped: a board left in update mode
(the daemon restarted, a hand on a piece as the port opens) may still be sending them as
the reset goes out, and the dump that follows supersedes them. From
then on the board is read again (0x42) after a protocol violation, on
:meth:`DgtDevice.request_refresh` and every ``refresh`` seconds (drivers/dgt/refresh.py),
and its battery is asked (0x4C) at once and every ``battery`` seconds: the BATTERY_STATUS
answers of Bluetooth boards come with the other events (drivers/dgt/battery.py).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from drivers.dgt.aio.link import (
    ClockRefused,
    ClockTimeout,
    DgtLink,
    HandshakeFailed,
    Inbox,
    LinkClosed,
    ReplyTimeout,
)
from drivers.dgt.commands import (
    ClockCommand,
    ClockVersion,
    Command,
    RequestBattery,
    RequestBoard,
    RequestClock,
    RequestEEMoves,
    RequestLongSerialNumber,
    RequestSerialNumber,
    RequestTrademark,
    RequestVersion,
    Reset,
    StartUpdateNice,
)
from drivers.dgt.device_core import ClockDone, DeviceCore, DeviceTimeouts
from drivers.dgt.events import (
    BatteryStatus,
    BoardDump,
    ClockAck,
    ClockTimes,
    Event,
    FieldUpdated,
    LongSerialNumber,
    SerialNumber,
    TimedEvent,
    Trademark,
    Version,
)

__all__ = ["BoardIdentity", "DgtDevice"]

log = logging.getLogger(__name__)

E = TypeVar("E", bound=Event)


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardIdentity:
    """What the handshake learned about the board."""

    version: Version
    serial: SerialNumber
    long_serial: LongSerialNumber | None
    board: BoardDump

    @property
    def version_text(self) -> str:
        """The firmware version as DGT writes it, e.g. ``"1.02"`` (§4)."""
        return f"{self.version.major}.{self.version.minor:02d}"


class DgtDevice:
    """One connected DGT board and its clock (the asyncio shell around :class:`DeviceCore`).

    Usage::

        device = await DgtDevice.open("/dev/ttyACM0")
        try:
            identity = await device.handshake()
            ack = await device.send_clock(ClockAscii(text="board 3"))
            while batch := await device.events_received():
                ...
        except DgtLinkError:
            ...  # a peer fault: reconnect (BoardSupervisor does all this)
        finally:
            await device.close()
    """

    def __init__(self, link: DgtLink, *, timeouts: DeviceTimeouts | None = None) -> None:
        """Drive an open ``link``; starts the reader task (call from a running loop)."""
        self.link = link
        self.timeouts = timeouts or DeviceTimeouts()
        self.identity: BoardIdentity | None = None
        self._loop = asyncio.get_running_loop()
        self._core = DeviceCore(self.timeouts, now=self._loop.time())
        self._inbox: Inbox[TimedEvent] = Inbox()
        #: Where the reader hands events while :meth:`stream_to` runs (else the inbox).
        self._sink: Callable[[list[TimedEvent]], None] | None = None
        self._bug: Exception | None = None  # what broke the reader (a bug, a sink's)
        self._waiters: dict[type[object], list[asyncio.Future[Any]]] = {}
        self._clock_waiters: dict[int, asyncio.Future[ClockDone]] = {}
        self._helpers: set[asyncio.Task[None]] = set()
        self._bytes_heard_at: float | None = None  # the link's last bytes, as fed to the core
        self._dumped = False  # the handshake's board dump has come: field updates count
        self._reader = asyncio.create_task(self._read(), name=f"dgt-device {link.path}")

    @classmethod
    async def open(
        cls, path: str, *, timeouts: DeviceTimeouts | None = None, open_timeout: float = 2.0
    ) -> DgtDevice:
        """Open the port at ``path`` (see :meth:`DgtLink.open`); run :meth:`handshake` next."""
        return cls(await DgtLink.open(path, open_timeout=open_timeout), timeouts=timeouts)

    @property
    def path(self) -> str:
        """The port this board is on."""
        return self.link.path

    @property
    def close_reason(self) -> str | None:
        """Why the device stopped (None while it runs)."""
        return self._inbox.close_reason

    @property
    def battery_silent(self) -> bool:
        """The board left the battery requests unanswered and is no longer asked: a USB
        board (drivers/dgt/battery.py)."""
        return self._core.battery.silent

    async def handshake(self) -> BoardIdentity:
        """Identify the board and start its event stream (docs/protocol.md §3, §15).

        Update-nice mode is asked before the board dump: a piece moved between the two
        is then in the dump or in a field update after it. The other way round, a piece
        moved after the dump and before the mode command went unreported (the board is
        IDLE after the reset), and the sensed board stayed wrong until a later dump.

        Raises:
            HandshakeFailed: the board did not answer the version, serial or board request.
            LinkClosed: the port went away meanwhile.
        """
        self.send(Reset())
        try:
            version = await self.request_version()
            serial = await self.request_serial_number()
            long_serial = await self._request_optional_long_serial()
            self.send(StartUpdateNice())
            board = await self.request_board()
        except ReplyTimeout as exc:
            raise HandshakeFailed(f"{self.path}: no handshake ({exc})") from exc
        self._core.start_refresh(self._loop.time())
        self._pump()
        self.identity = BoardIdentity(
            version=version, serial=serial, long_serial=long_serial, board=board
        )
        helper = asyncio.create_task(self._ask_clock_version(), name=f"dgt-clock {self.path}")
        self._helpers.add(helper)
        helper.add_done_callback(self._helpers.discard)
        return self.identity

    def request_refresh(self) -> None:
        """Read the whole board (and the clock) again soon; their events follow as usual.

        Does nothing before the handshake is done or after the link closed.
        """
        if not self.link.is_closed:
            self._core.request_refresh(self._loop.time())
            self._pump()

    def send(self, command: Command) -> None:
        """Write a command that has no reply (e.g. ``Reset``, ``StartUpdateNice``).

        Raises:
            LinkClosed: the link is closed.
        """
        self.link.send(command)

    async def request_version(self) -> Version:
        """Ask the board's firmware version (0x4D → 0x93)."""
        return await self._request(RequestVersion(), Version)

    async def request_serial_number(self) -> SerialNumber:
        """Ask the serial number (0x45 → 0x91)."""
        return await self._request(RequestSerialNumber(), SerialNumber)

    async def request_long_serial_number(self) -> LongSerialNumber:
        """Ask the long serial number (0x55 → 0xA2); older boards never answer."""
        return await self._request(RequestLongSerialNumber(), LongSerialNumber)

    async def request_trademark(self) -> Trademark:
        """Ask the trademark text (0x47 → 0x92)."""
        return await self._request(RequestTrademark(), Trademark)

    async def request_board(self) -> BoardDump:
        """Ask the whole board (0x42 → 0x86); the mode does not change (§3)."""
        return await self._request(RequestBoard(), BoardDump)

    def request_memory(self) -> None:
        """Ask the board's EEPROM log (0x49 → 0x8F, ~7.9 kB: about 8 s at 9600 baud, §3, §6).

        The EE_MOVES event comes through :meth:`events_received` like any other; the
        board's live messages queue behind it. The watchdog hears the dump's bytes.

        Battery requests wait until the dump arrived (drivers/dgt/battery.py).

        Raises:
            LinkClosed: the link is closed.
        """
        self._core.request_memory(self._loop.time())
        self.send(RequestEEMoves())

    def request_marker(self) -> None:
        """Put a marker on the line: the firmware version (0x4D → 0x93), which nothing but
        the handshake asks otherwise. The board answers after every message it queued
        before (behind its memory dump, the moves made while it was sent), so its
        VERSION in the stream tells that the backlog has arrived.

        Raises:
            LinkClosed: the link is closed.
        """
        self.send(RequestVersion())

    async def request_clock(self) -> ClockTimes:
        """Ask the clock times (0x41 → 0x8D); the mode does not change (§3)."""
        return await self._request(RequestClock(), ClockTimes)

    async def request_battery(self, wait: float) -> BatteryStatus | None:
        """Ask the battery status (0x4C → 0xA0); None when no answer came within ``wait``.

        Only Bluetooth boards answer (docs/protocol.md §4.1), so silence is no fault.
        """
        try:
            return await self._request(RequestBattery(), BatteryStatus, wait)
        except ReplyTimeout:
            return None

    async def send_clock(self, command: ClockCommand) -> ClockAck:
        """Send a clock command through the queue and wait for its ack (§7.4, §7.5).

        Raises:
            ClockRefused: the clock answered with an error ack (e.g. SetAndRun outside
                mode 23, §8).
            ClockTimeout: no ack after every resend.
            LinkClosed: the link closed meanwhile.
        """
        if self.close_reason is not None:
            raise LinkClosed(f"{self.path}: {self.close_reason}")
        ticket = self._core.submit_clock(command, self._loop.time())
        waiter: asyncio.Future[ClockDone] = self._loop.create_future()
        self._clock_waiters[ticket] = waiter
        self._pump()
        try:
            done = await waiter
        finally:
            self._clock_waiters.pop(ticket, None)
            self._core.cancel_clock(ticket)
        return _clock_outcome(command, done)

    async def events_received(self) -> list[TimedEvent]:
        """Wait for events and take every one buffered, with arrival times, oldest first.

        The handshake's replies are included. Has no timeout of its own: the watchdog
        ends a silent link.

        Raises:
            LinkClosed: the link is gone and every event was handed out.
        """
        events = await self._inbox.get_batch()
        if not events:
            self._end_of_stream()
        return events

    async def stream_to(self, sink: Callable[[list[TimedEvent]], None]) -> NoReturn:
        """Hand every event to ``sink`` until the link dies, as :meth:`events_received`
        would return them, but from the reader itself: no task wakes in between.

        ``sink`` is called on the event loop and must not raise (it would end the reader
        as a bug does).

        Raises:
            LinkClosed: the link is gone and every event was handed on.
            Exception: what broke the reader (a bug there or in ``sink``).
        """
        if self._sink is not None:
            raise RuntimeError("only one stream per device")
        self._sink = sink
        try:
            while batch := await self._inbox.get_batch():  # what came before the sink
                sink(batch)
        finally:
            self._sink = None
        self._end_of_stream()

    def _end_of_stream(self) -> NoReturn:
        """Every event was handed out and the link is gone: what broke the reader, if a
        bug did, else :class:`LinkClosed`."""
        self._raise_reader_bug()
        raise LinkClosed(f"{self.path}: {self.close_reason}")

    async def close(self) -> None:
        """Stop the reader and close the port; safe to call more than once."""
        tasks = [self._reader, *self._helpers]
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)
        await self.link.close()
        self._raise_reader_bug()

    def _raise_reader_bug(self) -> None:
        """Re-raise what broke the reader task: only bugs get there, never peer faults
        (known before the task has finished closing the link)."""
        if self._bug is not None:
            raise self._bug

    async def _request(
        self, command: Command, kind: type[E], reply_timeout: float | None = None
    ) -> E:
        waiter: asyncio.Future[E] = self._loop.create_future()
        self._waiters.setdefault(kind, []).append(waiter)
        try:
            self.send(command)
            async with asyncio.timeout(reply_timeout or self.timeouts.reply):
                return await waiter
        except TimeoutError:
            raise ReplyTimeout(f"{self.path}: no {kind.__name__} within the timeout") from None
        finally:
            self._waiters[kind].remove(waiter)

    async def _request_optional_long_serial(self) -> LongSerialNumber | None:
        try:
            return await self._request(
                RequestLongSerialNumber(), LongSerialNumber, self.timeouts.long_serial
            )
        except ReplyTimeout:
            return None

    async def _ask_clock_version(self) -> None:
        try:
            ack = await self.send_clock(ClockVersion())
        except (ClockTimeout, ClockRefused, LinkClosed) as exc:
            log.info("%s = no clock version: %s", self.path, exc)
        else:
            major, minor = ack.version or (0, 0)
            log.info("%s = clock version %d.%d", self.path, major, minor)

    async def _read(self) -> None:
        reason = "closed"
        try:
            while self._core.dead_reason is None:
                self._receive(await self.link.events_received(self._deadline()))
            reason = self._core.dead_reason
            log.debug("%s = %s", self.path, reason)
        except LinkClosed:
            reason = self.link.close_reason or "closed"
        except asyncio.CancelledError:
            reason = "closed by us"
            raise
        except Exception as exc:  # a bug, here or in the sink: the stream raises it
            self._bug, reason = exc, f"bug: {exc!r}"
            raise
        finally:
            self._stop(reason)
            await self.link.close()

    def _receive(self, events: list[TimedEvent]) -> None:
        """One batch from the link (``[]``: a deadline passed), then what the core asks."""
        self._core.receive_events(events)
        self._answer_waiters(events)
        if not self._dumped:
            events = self._after_first_dump(events)
        if self._sink is not None and events:
            self._sink(events)
        else:
            self._inbox.put(events)
        self._pump()

    def _pump(self) -> None:
        """Let deadlines pass, write what the core asks for, resolve finished clock jobs."""
        heard = self.link.last_bytes_at
        if heard is not None and heard != self._bytes_heard_at:
            self._bytes_heard_at = heard
            self._core.receive_bytes(heard)
        self._core.receive_time(self._loop.time())
        for command in self._core.commands_to_send():
            if not self.link.is_closed:
                self.link.send(command)
        for done in self._core.clock_results():
            waiter = self._clock_waiters.get(done.ticket)
            if waiter is not None and not waiter.done():
                waiter.set_result(done)
        if self.link.waiting:  # a new clock command may have brought the deadline forward
            self.link.move_deadline(self._deadline())

    def _deadline(self) -> float | None:
        deadline = self._core.next_deadline()
        return deadline if math.isfinite(deadline) else None

    def _after_first_dump(self, events: list[TimedEvent]) -> list[TimedEvent]:
        """``events`` without the field updates that precede the first board dump."""
        kept: list[TimedEvent] = []
        for at, event in events:
            if isinstance(event, BoardDump):
                self._dumped = True
            if self._dumped or not isinstance(event, FieldUpdated):
                kept.append((at, event))
            else:
                log.debug("%s = field update before the board dump dropped", self.path)
        return kept

    def _answer_waiters(self, events: list[TimedEvent]) -> None:
        for _, event in events:
            for waiter in self._waiters.get(type(event), ()):
                if not waiter.done():
                    waiter.set_result(event)

    def _stop(self, reason: str) -> None:
        self._inbox.close(reason)
        error = LinkClosed(f"{self.path}: {reason}")
        waiters = [w for ws in self._waiters.values() for w in ws]
        for waiter in [*waiters, *self._clock_waiters.values()]:
            if not waiter.done():
                waiter.set_exception(error)


def _clock_outcome(command: ClockCommand, done: ClockDone) -> ClockAck:
    if done.ack is None:
        raise ClockTimeout(f"no ack for {type(command).__name__} after {done.sends} sends")
    if done.ack.is_error:
        raise ClockRefused(
            f"{type(command).__name__} refused by the clock (ack0 0x{done.ack.ack0:02x})",
            ack=done.ack,
        )
    return done.ack
