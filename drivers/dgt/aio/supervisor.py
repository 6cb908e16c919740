"""Keep one board connected for as long as the tournament runs (layer L1).

A :class:`BoardSupervisor` owns its retry loop: find the port, open it, run the
handshake, hand on every event, and when the link dies (unplug: EOF/EIO; a silent line:
the watchdog) report :class:`LinkDown`, wait a capped exponential backoff and start again.
After each reconnect the handshake's board dump resynchronises the consumer
(docs/protocol.md §12.3: the board comes back in IDLE and must be put in update-nice mode
again, §3). Peer faults never raise out of it; only bugs do.

States and their transitions (:data:`TRANSITIONS`)::

            ┌──────────── next candidate ───────────┐
            ▼                                       │
    ──► CONNECTING ──port open──► HANDSHAKING ──────┴──answered──► ONLINE
            │ no port answered          │ no port answered            │ link lost
            ▼                           ▼                             ▼
       DISCONNECTED ◄───────────────────┴─────────────────────────────┘
            │ backoff (0.2 s doubling up to 5 s) elapsed
            └──────────────► CONNECTING

    any state ──stop()──► STOPPED

The consumer reads :meth:`BoardSupervisor.reports`, an async iterator of
``(at, item)`` pairs: ``at`` is the loop time (``loop.time()``) the item arrived at, and
``item`` a decoded :data:`~drivers.dgt.events.Event` or a :class:`LinkUp` /
:class:`LinkDown` notice. The events of a connection follow its :class:`LinkUp` (the
handshake's replies first, so the board dump comes before any field update) and precede
its :class:`LinkDown`.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import os
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import NoReturn

from base.backoff import Backoff, BackoffPolicy
from drivers.dgt.aio.device import BoardIdentity, DgtDevice
from drivers.dgt.aio.link import DgtLinkError, HandshakeFailed, Inbox, LinkClosed, PortUnavailable
from drivers.dgt.aio.ports import PortSpec
from drivers.dgt.aio.probe import FIX_OTHER_SERIAL, FIX_SILENT, PortProblem, explain_open_error
from drivers.dgt.commands import ClockCommand
from drivers.dgt.device_core import DeviceTimeouts
from drivers.dgt.events import ClockAck, Event

__all__ = [
    "TRANSITIONS",
    "BoardSupervisor",
    "LinkCounters",
    "LinkDown",
    "LinkUp",
    "Report",
    "SerialSightings",
    "SupervisorState",
    "TimedReport",
]

log = logging.getLogger(__name__)


class SupervisorState(enum.Enum):
    """Where the supervisor is in its connect / stream / reconnect loop."""

    CONNECTING = "connecting"
    HANDSHAKING = "handshaking"
    ONLINE = "online"
    DISCONNECTED = "disconnected"
    STOPPED = "stopped"


_S = SupervisorState

#: Allowed transitions; anything else is a bug and raises.
TRANSITIONS: dict[SupervisorState, frozenset[SupervisorState]] = {
    _S.CONNECTING: frozenset({_S.HANDSHAKING, _S.DISCONNECTED, _S.STOPPED}),
    _S.HANDSHAKING: frozenset({_S.ONLINE, _S.CONNECTING, _S.DISCONNECTED, _S.STOPPED}),
    _S.ONLINE: frozenset({_S.DISCONNECTED, _S.STOPPED}),
    _S.DISCONNECTED: frozenset({_S.CONNECTING, _S.STOPPED}),
    _S.STOPPED: frozenset(),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkUp:
    """The board answered the handshake and streams events (raise ``board_online``).

    Attributes:
        port: the real device path it answered on.
        serial: its serial number (0x91); ``long_serial`` its long one (0xA2) if sent.
        version: its firmware version as DGT writes it, e.g. ``"1.02"`` (0x93).
    """

    port: str
    serial: str
    version: str
    long_serial: str | None = None

    @classmethod
    def from_identity(cls, port: str, identity: BoardIdentity) -> LinkUp:
        """What the handshake on ``port`` learned."""
        long_serial = identity.long_serial
        return cls(
            port=port,
            serial=identity.serial.text,
            version=identity.version_text,
            long_serial=None if long_serial is None else long_serial.text,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkDown:
    """The link to the board was lost or closed (raise ``board_offline``).

    Attributes:
        port: the device path it was on.
        reason: what happened, in words (``read failed: … Input/output error``,
            ``watchdog: …``, ``supervisor stopped``).
    """

    port: str
    reason: str


Report = Event | LinkUp | LinkDown
#: A report and the loop time it arrived at.
TimedReport = tuple[float, Report]


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkCounters:
    """Totals over every connection of one supervisor.

    Attributes:
        bytes_received / messages_received / violations: the protocol's counters, summed.
        connects / disconnects: links that came up (LinkUp) and went down (LinkDown).
        failed_connects: connect rounds in which no candidate port answered.
    """

    bytes_received: int = 0
    messages_received: int = 0
    violations: int = 0
    connects: int = 0
    disconnects: int = 0
    failed_connects: int = 0

    def __add__(self, other: LinkCounters) -> LinkCounters:
        return LinkCounters(
            bytes_received=self.bytes_received + other.bytes_received,
            messages_received=self.messages_received + other.messages_received,
            violations=self.violations + other.violations,
            connects=self.connects + other.connects,
            disconnects=self.disconnects + other.disconnects,
            failed_connects=self.failed_connects + other.failed_connects,
        )


class BoardSupervisor:
    """Keeps one DGT board connected, reconnecting by itself; reports to one consumer.

    Usage::

        supervisor = BoardSupervisor(PortSpec.from_str("/dev/dgt-board-3"))
        async with supervisor:                  # or: task_group.create_task(supervisor.run())
            async for at, item in supervisor.reports():
                match item:
                    case LinkUp(): ...          # board_online
                    case LinkDown(): ...        # board_offline
                    case _: ...                 # a decoded event (BoardDump, FieldUpdated, …)

    :meth:`stop` (or leaving the ``async with``) ends :meth:`run` and, once the last
    reports are read, :meth:`reports`.
    """

    def __init__(
        self,
        port: PortSpec | str,
        *,
        timeouts: DeviceTimeouts | None = None,
        backoff: BackoffPolicy | None = None,
        serial: str | None = None,
        open_timeout: float = 2.0,
        rng: random.Random | None = None,
        sightings: SerialSightings | None = None,
    ) -> None:
        """Configure; nothing happens before :meth:`run`.

        Args:
            port: a path, a glob, or several of them (see :class:`PortSpec`).
            timeouts: for the device (replies, clock acks, watchdog).
            backoff: delays between connect attempts.
            serial: accept only the board with this serial number (several boards
                behind one glob).
            open_timeout: opening one port.
            rng: draws the backoff jitter.
            sightings: which serial answered on which port, shared by the supervisors
                of one daemon (boards by serial on the same ports).
        """
        self.port = port if isinstance(port, PortSpec) else PortSpec.from_str(port)
        self.timeouts = timeouts or DeviceTimeouts()
        self._backoff = Backoff(backoff or BackoffPolicy(), rng)
        self._serial = serial
        self._sightings = sightings
        self._open_timeout = open_timeout
        self._state = SupervisorState.CONNECTING
        self._device: DgtDevice | None = None
        self._last_path: str | None = None
        self._totals = LinkCounters()
        self._inbox: Inbox[TimedReport] = Inbox()
        self._stop_requested = asyncio.Event()
        self._stopped = asyncio.Event()
        self._running = False
        self._task: asyncio.Task[None] | None = None
        #: Why each port of the last connect attempt gave no board (reason and fix).
        self.last_problems: tuple[PortProblem, ...] = ()

    @property
    def state(self) -> SupervisorState:
        """The current state."""
        return self._state

    @property
    def device(self) -> DgtDevice | None:
        """The connected board while ONLINE, else None."""
        return self._device

    def counters(self) -> LinkCounters:
        """Bytes, messages and violations over every connection so far, with (dis)connects."""
        if self._device is None:
            return self._totals
        return self._totals + _device_counters(self._device)

    async def send_clock(self, command: ClockCommand) -> ClockAck:
        """Send a clock command to the connected board (see :meth:`DgtDevice.send_clock`).

        Raises:
            LinkClosed: the board is not online.
            ClockRefused, ClockTimeout: as :meth:`DgtDevice.send_clock`.
        """
        if self._device is None:
            raise LinkClosed(f"{self.port}: board not online")
        return await self._device.send_clock(command)

    def request_refresh(self) -> None:
        """Read the whole board again soon (a fresh dump follows); nothing while offline."""
        if self._device is not None:
            self._device.request_refresh()

    def request_memory(self) -> None:
        """Ask the connected board's EEPROM log; EE_MOVES follows among the reports (§6).

        Raises:
            LinkClosed: the board is not online.
        """
        if self._device is None:
            raise LinkClosed(f"{self.port}: board not online")
        self._device.request_memory()

    def request_marker(self) -> None:
        """Put a marker on the connected board's line (:meth:`DgtDevice.request_marker`).

        Raises:
            LinkClosed: the board is not online.
        """
        if self._device is None:
            raise LinkClosed(f"{self.port}: board not online")
        self._device.request_marker()

    async def reports(self) -> AsyncIterator[TimedReport]:
        """Every report, oldest first, until the supervisor stopped (one consumer only)."""
        async for batch in self.report_batches():
            for report in batch:
                yield report

    async def report_batches(self) -> AsyncIterator[list[TimedReport]]:
        """:meth:`reports` a batch at a time: all that came since the last (one consumer)."""
        while batch := await self._inbox.get_batch():
            yield batch

    async def run(self) -> None:
        """Connect, stream and reconnect until :meth:`stop`; raises only on a bug.

        A supervisor stopped before it ran returns at once (a daemon stopped right after
        its start); running one twice is a bug.
        """
        if self._running:
            raise RuntimeError("a supervisor runs once")
        if self._stopped.is_set():
            return
        self._running = True
        work = asyncio.create_task(self._supervise(), name=f"dgt-supervisor {self.port}")
        stop = asyncio.create_task(self._stop_requested.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            work.cancel()
            stop.cancel()
            await asyncio.wait({work, stop})
            self._finish()
        if not work.cancelled() and (bug := work.exception()) is not None:
            raise bug

    async def stop(self, *, stop_timeout: float = 5.0) -> None:
        """End :meth:`run` cleanly: close the board, report STOPPED, end :meth:`reports`."""
        self._stop_requested.set()
        if not self._running:
            self._finish()
        async with asyncio.timeout(stop_timeout):
            await self._stopped.wait()

    async def __aenter__(self) -> BoardSupervisor:
        self._task = asyncio.create_task(self.run(), name=f"dgt-run {self.port}")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()
        if self._task is not None:
            await self._task

    def _finish(self) -> None:
        self._enter(SupervisorState.STOPPED)
        self._inbox.close("stopped")
        self._stopped.set()

    def _enter(self, state: SupervisorState) -> None:
        if state is self._state:
            return
        if state not in TRANSITIONS[self._state]:
            raise RuntimeError(f"bad transition {self._state.name} -> {state.name}")
        log.debug("%s = %s", self.port, state.name)
        self._state = state

    def _report(self, item: Report) -> None:
        self._inbox.put([(asyncio.get_running_loop().time(), item)])

    async def _supervise(self) -> NoReturn:
        while True:
            device = await self._connect()
            if device is not None:
                await self._stream(device)
            self._enter(SupervisorState.DISCONNECTED)
            await asyncio.sleep(self._backoff.next_delay())

    async def _connect(self) -> DgtDevice | None:
        """Try each candidate port in turn; the first board that answers wins."""
        self._enter(SupervisorState.CONNECTING)
        problems: list[PortProblem] = []
        candidates = self.port.candidates(preferred=self._last_path)
        if self._serial is not None and self._sightings is not None:
            candidates = self._sightings.order(candidates, self._serial)
        for path in candidates:
            device = await self._try_port(path, problems)
            if device is not None:
                self.last_problems = ()
                return device
            self._enter(SupervisorState.CONNECTING)
        self.last_problems = tuple(problems)
        self._totals += LinkCounters(failed_connects=1)
        return None

    async def _try_port(self, path: str, problems: list[PortProblem]) -> DgtDevice | None:
        try:
            device = await DgtDevice.open(
                path, timeouts=self.timeouts, open_timeout=self._open_timeout
            )
        except PortUnavailable as exc:
            log.debug("%s = %s", self.port, exc)
            problems.append(explain_open_error(path, exc))
            return None
        self._enter(SupervisorState.HANDSHAKING)
        try:
            identity = await device.handshake()
            if self._sightings is not None:
                self._sightings.saw(path, identity.serial.text)
            if self._serial is not None and identity.serial.text != self._serial:
                problems.append(
                    PortProblem(
                        port=path,
                        reason=f"{path} holds the board with serial {identity.serial.text}",
                        fix=FIX_OTHER_SERIAL,
                    )
                )
                raise HandshakeFailed(f"{path}: serial {identity.serial.text}, not {self._serial}")
        except HandshakeFailed as exc:
            log.info("%s = %s", self.port, exc)
            if not problems or problems[-1].port != path:
                problems.append(PortProblem(port=path, reason=str(exc), fix=FIX_SILENT))
        except DgtLinkError as exc:
            log.info("%s = %s", self.port, exc)
        except BaseException:
            await self._discard(device)
            raise
        else:
            return device
        await self._discard(device)
        return None

    async def _stream(self, device: DgtDevice) -> None:
        """Hand on the device's events until its link dies; then report LinkDown."""
        assert device.identity is not None, "a device is streamed only after its handshake"
        self._device, self._last_path = device, device.path
        self._enter(SupervisorState.ONLINE)
        self._backoff.reset()
        self._totals += LinkCounters(connects=1)
        up = LinkUp.from_identity(device.path, device.identity)
        log.info(
            "%s = online: %s, serial %s, version %s", self.port, up.port, up.serial, up.version
        )
        self._report(up)
        reason, level = "supervisor stopped", logging.INFO
        try:
            await device.stream_to(self._inbox.put)
        except LinkClosed as exc:
            reason, level = str(exc), logging.WARNING
        finally:
            self._device = None
            self._totals += LinkCounters(disconnects=1)
            await self._discard(device)
            log.log(level, "%s = offline: %s", self.port, reason)
            self._report(LinkDown(port=device.path, reason=reason))

    async def _discard(self, device: DgtDevice) -> None:
        self._totals += _device_counters(device)
        await device.close()


class SerialSightings:
    """Which serial number answered on which port last, shared by the supervisors of the
    boards named by serial on the same ports.

    A board tries first the ports where its serial was seen, then ports nobody has read
    yet, and last those where another board answered (boards may have been swapped since):
    two supervisors never hold each other's board in turn, connect after connect.
    """

    def __init__(self) -> None:
        self._serials: dict[str, str] = {}

    def saw(self, port: str, serial: str) -> None:
        """The board with ``serial`` answered on ``port``."""
        self._serials[os.path.realpath(port)] = serial

    def order(self, candidates: list[str], serial: str) -> list[str]:
        """``candidates`` (real paths) in the order the board ``serial`` tries them."""
        seen = self._serials
        mine = [p for p in candidates if seen.get(p) == serial]
        unread = [p for p in candidates if p not in seen]
        others = [p for p in candidates if p in seen and seen[p] != serial]
        return mine + unread + others


def _device_counters(device: DgtDevice) -> LinkCounters:
    protocol = device.link.protocol
    return LinkCounters(
        bytes_received=protocol.bytes_received,
        messages_received=protocol.messages_received,
        violations=protocol.violations,
    )
