"""The asyncio serial link to one DGT board (layer L1): port bytes in and out of a protocol.

A :class:`DgtLink` opens the port at 9600 baud, 8 data bits, no parity, one stop bit, no
flow control (docs/protocol.md §1), feeds every byte it reads into a sans-I/O
:class:`~drivers.dgt.protocol.DgtProtocol` and stamps the decoded events with their arrival
time (``loop.time()``). It knows nothing of handshakes or clocks: that is
:mod:`drivers.dgt.aio.device`.

At DEBUG level the link logs a wire trace, one line per chunk::

    /dev/ttyACM0 = open 9600 8N1
    /dev/ttyACM0 > 4d
    /dev/ttyACM0 < 93 00 05 01 02
    /dev/ttyACM0 = closed: the cable was pulled or the board is gone (Input/output error)

Exceptions of the L1 modules (link, device, supervisor); every one is a peer fault (the
board, the cable, the port), never a bug of ours::

    DgtLinkError
    ├── LinkClosed            the port is gone: EOF/EIO, a failed write, closed by us
    │   └── PortUnavailable   the port could not be opened (missing, busy, no permission)
    ├── ReplyTimeout          a request got no answer in time
    │   └── HandshakeFailed   the board did not answer the connect handshake
    └── ClockError            a clock command failed (docs/protocol.md §7.3, §7.4)
        ├── ClockRefused      the clock answered with an error ack
        └── ClockTimeout      no ack after every resend

Misuse (waiting for events from two tasks at once) raises :class:`RuntimeError`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Iterable
from typing import Generic, TypeVar

import serial
from serial_asyncio_fast import SerialTransport

from base.drain import drain
from drivers.dgt.commands import Command
from drivers.dgt.events import ClockAck, TimedEvent
from drivers.dgt.protocol import DgtProtocol

__all__ = [
    "BAUD_RATE",
    "GONE",
    "ClockError",
    "ClockRefused",
    "ClockTimeout",
    "DgtLink",
    "DgtLinkError",
    "HandshakeFailed",
    "Inbox",
    "LinkClosed",
    "PortUnavailable",
    "ReplyTimeout",
    "plain_reason",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: docs/protocol.md §1: 9600 baud, 8N1, neither RTS/CTS nor XON/XOFF.
BAUD_RATE = 9600


class DgtLinkError(Exception):
    """A fault of the board, the cable or the port: expected, handled by reconnecting."""


class LinkClosed(DgtLinkError):
    """The port is gone (EOF, EIO, a failed write) or was closed on purpose."""


class PortUnavailable(LinkClosed):
    """The port could not be opened: it does not exist (yet), is busy, or is not ours."""


class ReplyTimeout(DgtLinkError):
    """A request got no answer within its timeout."""


class HandshakeFailed(ReplyTimeout):
    """The board did not answer the connect handshake: not a DGT board, or a dead one."""


class ClockError(DgtLinkError):
    """A clock command did not succeed (docs/protocol.md §7.3, §7.4)."""


class ClockRefused(ClockError):
    """The clock acknowledged the command with an error (ack0 other than 0x10).

    The usual cause is a SetAndRun while the DGT XL is not in option 23, the computer
    mode (docs/protocol.md §7.3, §8).

    Attributes:
        ack: the error acknowledgement as received.
    """

    def __init__(self, message: str, *, ack: ClockAck) -> None:
        super().__init__(message)
        self.ack = ack


class ClockTimeout(ClockError):
    """No acknowledgement came for a clock command, even after every resend (§7.4)."""


class Inbox(Generic[T]):
    """Items put by callbacks, taken in batches by one waiting task, until closed.

    Unbounded on purpose: a board sends at most ~190 messages a second at 9600 baud, and
    dropping one would lose a move; the single reader takes everything at each wake-up.
    """

    def __init__(self) -> None:
        self._items: list[T] = []
        #: The reader's wake-up while it waits (a bare future: the cheapest wake there is).
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None  # the waiting reader's deadline
        self.close_reason: str | None = None

    def put(self, items: Iterable[T]) -> None:
        """Append ``items``; ignored once closed."""
        if self.close_reason is None:
            self._items.extend(items)
            if self._items:
                self._wake()

    def close(self, reason: str) -> None:
        """No more items; the first reason given is kept."""
        if self.close_reason is None:
            self.close_reason = reason
            self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get_batch(self, deadline: float | None = None) -> list[T]:
        """Wait for items and take them all; ``[]`` means closed and drained, or that
        ``deadline`` (loop time; None: none) came first (``close_reason`` tells which).

        A deadline costs one timer handle, not an ``asyncio.timeout``: the reader of
        every board waits here for each batch (docs/performance.md).

        Raises:
            RuntimeError: another task is already waiting.
        """
        if self._waiter is not None:
            raise RuntimeError("only one task may wait on an inbox")
        loop = asyncio.get_running_loop()
        while not self._items and self.close_reason is None:
            if deadline is not None and loop.time() >= deadline:
                break
            self._waiter = loop.create_future()
            self._arm(deadline)
            try:
                await self._waiter
            finally:
                self._waiter = None
                if self._timer is not None:
                    deadline = self._timer.when()  # moved by move_deadline, maybe
                    self._timer.cancel()
                    self._timer = None
        return drain(self._items)

    @property
    def waiting(self) -> bool:
        """Whether a reader waits in :meth:`get_batch` now."""
        return self._waiter is not None and not self._waiter.done()

    def move_deadline(self, deadline: float | None) -> None:
        """Give the reader waiting now another deadline (None: none)."""
        if not self.waiting:
            return
        if (None if self._timer is None else self._timer.when()) == deadline:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._arm(deadline)

    def _arm(self, deadline: float | None) -> None:
        """Wake the waiting reader at ``deadline`` (loop time; None: no timer)."""
        loop = asyncio.get_running_loop()
        self._timer = None if deadline is None else loop.call_at(deadline, self._wake)


class _SerialTransport(SerialTransport):
    """The pyserial-asyncio-fast transport, minus its ERROR log for a failed write.

    A write to an unplugged board fails with EIO: a peer fault that the link reports by
    closing, not a bug worth a traceback in the event loop's error log.
    """

    def _fatal_error(self, exc: BaseException, message: str = "") -> None:
        log.debug("%s = write failed: %s", self.serial.port if self.serial else "?", exc)
        self._abort(exc)

    if sys.platform != "win32":  # Windows pyserial has no descriptor: it polls instead

        def _read_ready(self) -> None:
            """Read what the port holds with one ``os.read`` (the descriptor is non-blocking).

            pyserial's ``read`` first waits in ``select()``, which refuses descriptors above
            1023: a daemon with a few hundred boards (five descriptors each) has those.
            """
            fd = self._serial.fd
            assert fd is not None  # the port is open while the transport reads
            try:
                data = os.read(fd, self._max_read_size)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self._close(exc=serial.SerialException(f"read failed: {exc}"))
                return
            if not data:  # a disconnected device reads as ready but empty
                self._close(exc=serial.SerialException(GONE))
                return
            self._protocol.data_received(data)


#: Why a link closed when the port went away under it (a USB cable pulled, a Bluetooth
#: board switched off), in the words the log and the alerts use.
GONE = "the cable was pulled or the board is gone"

#: pyserial's and the system's words for a port that went away, as they reach us.
_PORT_GONE = (
    "readiness to read but returned no data",  # pyserial: ready, yet nothing to read
    "Input/output error",  # EIO: Linux and macOS, the device was removed
    "No such device",  # ENXIO, ENODEV
    "ClearCommError",  # Windows: the COM port vanished
)


def plain_reason(text: str) -> str:
    """A closed port's reason in plain words: :data:`GONE` for a port that went away
    (the system's words kept in brackets), else ``text`` unchanged."""
    if text == GONE or text.startswith(GONE + " ("):
        return text
    for words in _PORT_GONE:
        if words in text:
            cause = "" if words.startswith("readiness") else f" ({words})"
            return f"{GONE}{cause}"
    return text


class _Receiver(asyncio.Protocol):
    """Feeds port bytes into the link (asyncio's protocol callbacks)."""

    def __init__(self, link: DgtLink) -> None:
        self._link = link

    def data_received(self, data: bytes) -> None:
        self._link._receive_bytes(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._link._receive_close(plain_reason(str(exc)) if exc else "closed")


class DgtLink:
    """One open serial port speaking the DGT protocol.

    Open it with :meth:`open`; then :meth:`send` commands and await
    :meth:`events_received` for what the board says. Once the port is gone, the events
    still buffered are handed out, then :meth:`events_received` raises :class:`LinkClosed`.
    """

    def __init__(self, path: str, protocol: DgtProtocol, loop: asyncio.AbstractEventLoop) -> None:
        """Use :meth:`open`; this only wires the parts together."""
        self.path = path
        self._protocol = protocol
        self._loop = loop
        self._transport: _SerialTransport | None = None
        self._inbox: Inbox[TimedEvent] = Inbox()
        self._lost = loop.create_future()
        #: Loop time of the last bytes received (a long message, e.g. the 8 s EE_MOVES
        #: dump, is heard byte by byte before it is a whole event); None before any.
        self.last_bytes_at: float | None = None

    @classmethod
    async def open(
        cls, path: str, *, open_timeout: float = 2.0, protocol: DgtProtocol | None = None
    ) -> DgtLink:
        """Open ``path`` at 9600 8N1 without flow control (docs/protocol.md §1).

        The port is opened exclusively (``flock``) so that two supervisors never share a
        board, and its input buffer is flushed by pyserial. Send the handshake next.

        Raises:
            PortUnavailable: the port is missing, busy, not a tty, or opening it took
                longer than ``open_timeout`` seconds.
        """
        loop = asyncio.get_running_loop()
        link = cls(path, protocol or DgtProtocol(), loop)
        try:
            async with asyncio.timeout(open_timeout):
                port = await loop.run_in_executor(None, _open_port, path)
        except (OSError, serial.SerialException, TimeoutError) as exc:
            raise PortUnavailable(f"{path}: {str(exc) or 'open timed out'}") from exc
        link._transport = _SerialTransport(loop, _Receiver(link), port)
        log.debug("%s = open %d 8N1", path, BAUD_RATE)
        return link

    @property
    def is_closed(self) -> bool:
        """True once the port is gone or closing; nothing more will be received."""
        return self._inbox.close_reason is not None

    @property
    def close_reason(self) -> str | None:
        """Why the link closed (``None`` while it is open)."""
        return self._inbox.close_reason

    @property
    def protocol(self) -> DgtProtocol:
        """The sans-I/O protocol; read its counters (violations, bytes, messages)."""
        return self._protocol

    def send(self, command: Command) -> None:
        """Encode ``command`` and queue its bytes for writing; returns at once.

        A failed write closes the link: the next :meth:`events_received` says so.

        Raises:
            LinkClosed: the link is already closed.
        """
        if self._transport is None or self.is_closed:
            raise LinkClosed(f"{self.path}: {self.close_reason or 'not open'}")
        data = self._protocol.send(command)
        log.debug("%s > %s", self.path, data.hex(" "))
        self._transport.write(data)

    @property
    def waiting(self) -> bool:
        """Whether :meth:`events_received` waits now (see :meth:`move_deadline`)."""
        return self._inbox.waiting

    def move_deadline(self, deadline: float | None) -> None:
        """Give the :meth:`events_received` waiting now another deadline (None: none)."""
        self._inbox.move_deadline(deadline)

    async def events_received(self, deadline: float | None = None) -> list[TimedEvent]:
        """Wait until at least one event arrived and return every event buffered so far;
        ``[]`` once ``deadline`` (loop time, see :meth:`move_deadline`) passed first.

        Raises:
            LinkClosed: the port is gone and every event was handed out.
            RuntimeError: another task is already waiting.
        """
        events = await self._inbox.get_batch(deadline)
        if not events and self.is_closed:
            raise LinkClosed(f"{self.path}: {self.close_reason}")
        return events

    async def close(self, *, close_timeout: float = 1.0) -> None:
        """Close the port and wait (at most ``close_timeout`` s) until it is released.

        Bytes not yet written are dropped: waiting for them to drain could block on a
        line nobody reads, and a command for a board we leave has no use.
        """
        self._mark_closed("closed by us")
        if self._transport is None:
            return
        if not self._transport.is_closing():
            self._transport.abort()
        try:
            async with asyncio.timeout(close_timeout):
                await asyncio.shield(self._lost)
        except TimeoutError:
            log.debug("%s = still releasing the port after %.1f s", self.path, close_timeout)

    def _receive_bytes(self, data: bytes) -> None:
        at = self._loop.time()
        self.last_bytes_at = at
        log.debug("%s < %s", self.path, data.hex(" "))
        self._protocol.receive_data(data)
        self._inbox.put((at, event) for event in self._protocol.events_received())

    def _receive_close(self, reason: str) -> None:
        if not self._lost.done():
            self._lost.set_result(None)
        self._mark_closed(reason)

    def _mark_closed(self, reason: str) -> None:
        if not self.is_closed:
            log.debug("%s = closed: %s", self.path, reason)
            self._inbox.close(reason)


def _open_port(path: str) -> serial.Serial:
    """Open ``path`` non-blocking at 9600 8N1, no flow control (runs in a thread)."""
    return serial.Serial(
        path,
        baudrate=BAUD_RATE,
        bytesize=serial.EIGHTBITS,
        parity=serial.PARITY_NONE,
        stopbits=serial.STOPBITS_ONE,
        xonxoff=False,
        rtscts=False,
        dsrdtr=False,
        timeout=0,
        write_timeout=0,
        exclusive=True,
    )
