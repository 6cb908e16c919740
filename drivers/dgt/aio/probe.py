"""Which serial ports hold a DGT board, and why a port does not answer (layer L1).

:func:`probe_port` opens one port, runs the handshake (docs/protocol.md §3, §15) and asks
the clock (0x41, §7.2) and, briefly, the battery (0x4C, §4.1: Bluetooth boards only);
:func:`probe_ports` does that for many ports at once. A port that does not answer as a
DGT board gives a :class:`PortProblem` with the reason and the fix in words, for
``dgtcast boards`` and for the daemon's warnings at start-up (:func:`explain_open_error`).
Nothing here raises for a peer fault.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from drivers.dgt.aio.device import DgtDevice
from drivers.dgt.aio.link import DgtLinkError, PortUnavailable
from drivers.dgt.device_core import DeviceTimeouts
from drivers.dgt.events import BatteryStatus, ClockTimes

__all__ = [
    "FIX_BUSY",
    "FIX_MISSING",
    "FIX_OTHER_SERIAL",
    "FIX_PERMISSION",
    "FIX_SILENT",
    "BoardFound",
    "PortProblem",
    "ProbeResult",
    "explain_open_error",
    "explain_path",
    "probe_port",
    "probe_ports",
]

#: What to do when the user may not open serial ports (Linux: the ``dialout`` group).
FIX_PERMISSION = (
    "add the user to the serial ports' group: sudo usermod -aG dialout $USER, then log"
    " out and in again"
)
FIX_MISSING = (
    "check the USB cable and that the board is switched on; `dgtcast boards` lists the"
    " ports that answer"
)
FIX_BUSY = "another program holds the port (a second dgtcast, DGT LiveChess): close it"
FIX_SILENT = (
    "the port opened but no DGT board answered: switch the board on, check the cable, or"
    " this port is another device"
)
FIX_OTHER_SERIAL = (
    "another board answers there; if the board was replaced, change its serial in"
    " [[boards]] (`dgtcast boards` lists the serials found)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardFound:
    """A port where a DGT board answered the handshake.

    Attributes:
        port: the device path.
        serial: the serial number (SERIALNR, 5 digits) the board reports.
        long_serial: the long serial number (LONG_SERIALNR) if the board sent one.
        version: the firmware version, e.g. ``"1.02"``.
        clock: the clock's answer; None if none came, ``clock.no_clock`` if not cabled.
        battery: the battery status of a Bluetooth board; None for USB boards.
    """

    port: str
    serial: str
    version: str
    long_serial: str | None = None
    clock: ClockTimes | None = None
    battery: BatteryStatus | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PortProblem:
    """A port that holds no answering DGT board: ``reason`` and ``fix`` in words."""

    port: str
    reason: str
    fix: str


ProbeResult = BoardFound | PortProblem


def explain_path(path: str) -> PortProblem | None:
    """What is wrong with a port path before opening it (None: nothing visible).

    Windows ports (``COM3``) are no files: only opening them tells.
    """
    if sys.platform == "win32":
        return None
    if not os.path.exists(path):
        return PortProblem(port=path, reason=f"{path} does not exist", fix=FIX_MISSING)
    if not os.access(path, os.R_OK | os.W_OK):
        reason = f"no permission to open {path}"
        return PortProblem(port=path, reason=reason, fix=FIX_PERMISSION)
    return None


def explain_open_error(path: str, error: BaseException) -> PortProblem:
    """The reason and fix for a port that could not be opened."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.__cause__ or cause.__context__
    code = cause.errno if isinstance(cause, OSError) else None
    text = str(error)
    if code in (errno.EACCES, errno.EPERM) or "Permission denied" in text:
        return PortProblem(port=path, reason=f"no permission to open {path}", fix=FIX_PERMISSION)
    if code in (errno.ENOENT, errno.ENODEV, errno.ENXIO) or "No such file" in text:
        return PortProblem(port=path, reason=f"{path} does not exist", fix=FIX_MISSING)
    if code in (errno.EBUSY, errno.EAGAIN) or "busy" in text or "lock" in text.lower():
        return PortProblem(port=path, reason=f"{path} is in use", fix=FIX_BUSY)
    return PortProblem(port=path, reason=f"{path} cannot be opened: {text}", fix=FIX_MISSING)


async def probe_port(
    path: str, *, timeouts: DeviceTimeouts | None = None, battery_wait: float = 0.5
) -> ProbeResult:
    """Open ``path``, identify the board, ask its clock and battery; then close it."""
    problem = explain_path(path)
    if problem is not None:
        return problem
    try:
        device = await DgtDevice.open(path, timeouts=timeouts)
    except PortUnavailable as exc:
        return explain_open_error(path, exc)
    try:
        identity = await device.handshake()
        clock: ClockTimes | None = None
        with contextlib.suppress(DgtLinkError):
            clock = await device.request_clock()
        battery = await device.request_battery(battery_wait)
    except DgtLinkError as exc:
        reason = f"no DGT board answers on {path} ({exc})"
        return PortProblem(port=path, reason=reason, fix=FIX_SILENT)
    finally:
        await device.close()
    long_serial = identity.long_serial
    return BoardFound(
        port=path,
        serial=identity.serial.text,
        long_serial=None if long_serial is None else long_serial.text,
        version=identity.version_text,
        clock=clock,
        battery=battery,
    )


async def probe_ports(
    paths: Sequence[str], *, timeouts: DeviceTimeouts | None = None
) -> list[ProbeResult]:
    """:func:`probe_port` for every path at once; results in the order of ``paths``."""
    return list(await asyncio.gather(*(probe_port(p, timeouts=timeouts) for p in paths)))
