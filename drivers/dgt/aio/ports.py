"""Where a board is plugged in: a port path or a glob, resolved again at every connect.

A DGT USB board appears as a CDC-ACM device (``/dev/ttyACM*``), some adapters as
``/dev/ttyUSB*``, Bluetooth boards as ``/dev/rfcomm*`` (docs/protocol.md §1). After an
unplug the kernel may give the board another number, so a udev symlink such as
``/dev/dgt-board-3`` is resolved anew at each connect, never once at start-up
(docs/protocol.md §12.3, picochess issue #150).

A glob names every port a board may sit on. The supervisor tries the candidates in order
and keeps the one whose board answers the version handshake; the port that answered last
time is tried first.

Each platform names its ports differently (:data:`DEFAULT_PATTERNS` is this platform's):

=========  ==========================================================================
Linux      ``/dev/ttyACM*`` (USB), ``/dev/ttyUSB*`` (adapters), ``/dev/rfcomm*`` (Bluetooth)
macOS      ``/dev/cu.usbmodem*``, ``/dev/cu.usbserial*``, ``/dev/cu.DGT_BT_*`` and
           ``/dev/cu.PCS-REVII*`` (Bluetooth serial ports are named after the device)
Windows    ``COM3``, ``COM*``: names and globs are matched against the serial ports
           Windows lists (``serial.tools.list_ports``), not against files
=========  ==========================================================================

:func:`serial_ports` is the one place that lists the serial ports of this machine that
may hold a DGT board (``dgtcast boards``, boards configured by serial number only).

Emulated boards (``dgtcast emulate``, a rehearsal) are among them: each one running puts
a symlink to its pseudo-terminal in :func:`emulated_ports_dir`, a folder of this user's
(``DGTCAST_EMULATED_PORTS`` names another), named ``dgt-SERIAL-PID`` and removed when it
stops. Only links of emulators still running are listed, and only from a folder that
belongs to this user and no one else may write to; when no emulator runs the folder is
empty and a real event sees exactly the machine's serial ports.
"""

from __future__ import annotations

import contextlib
import fnmatch
import glob
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from serial.tools import list_ports

__all__ = [
    "DEFAULT_PATTERNS",
    "EMULATED_PORTS_ENV",
    "PortSpec",
    "emulated_port_of",
    "emulated_ports",
    "emulated_ports_dir",
    "natural_key",
    "new_emulated_port",
    "patterns_for",
    "serial_ports",
]

#: The environment variable that moves :func:`emulated_ports_dir` (tests, several users).
EMULATED_PORTS_ENV = "DGTCAST_EMULATED_PORTS"

_PATTERNS = {
    "linux": ("/dev/ttyACM*", "/dev/ttyUSB*", "/dev/rfcomm*"),
    "darwin": ("/dev/cu.usbmodem*", "/dev/cu.usbserial*", "/dev/cu.DGT_BT_*", "/dev/cu.PCS-REVII*"),
    "win32": ("COM*",),
}


def patterns_for(platform: str) -> tuple[str, ...]:
    """Where a DGT board shows up on ``platform`` (a ``sys.platform`` value); Linux's
    names for any other POSIX system (docs/protocol.md §1)."""
    return _PATTERNS.get(platform, _PATTERNS["linux"])


#: Where a DGT board shows up on this platform when no port is configured.
DEFAULT_PATTERNS = patterns_for(sys.platform)

_GLOB_CHARS = re.compile(r"[*?\[]")
_DIGITS = re.compile(r"(\d+)")


def natural_key(path: str) -> tuple[str | int, ...]:
    """Sort key that puts ``ttyACM2`` before ``ttyACM10``."""
    return tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(path))


@dataclass(frozen=True, slots=True, kw_only=True)
class PortSpec:
    """One or more port paths or globs, e.g. ``/dev/dgt-board-3`` or ``/dev/ttyACM*``.

    Attributes:
        patterns: paths or glob patterns, tried in this order.
        system: also every serial port the operating system lists (:func:`serial_ports`);
            ``auto`` means this, with the default patterns.
    """

    patterns: tuple[str, ...]
    system: bool = False

    def __post_init__(self) -> None:
        if not self.patterns or not all(self.patterns):
            raise ValueError("a port spec needs at least one non-empty path or glob")

    @classmethod
    def from_str(cls, text: str) -> PortSpec:
        """Parse ``"/dev/ttyACM*,/dev/ttyUSB*"``; an empty text or ``auto`` means the defaults."""
        parts = tuple(part.strip() for part in text.split(",") if part.strip())
        if not parts or parts == ("auto",):
            return cls.auto()
        return cls(patterns=parts)

    @classmethod
    def auto(cls) -> PortSpec:
        """Every serial port of this machine (a board configured by its serial number)."""
        return cls(patterns=DEFAULT_PATTERNS, system=True)

    @property
    def is_glob(self) -> bool:
        """True when the spec may match several ports (discovery is needed)."""
        if self.system or len(self.patterns) > 1:
            return True
        return bool(_GLOB_CHARS.search(self.patterns[0]))

    def candidates(self, preferred: str | None = None) -> list[str]:
        """The real device paths that exist now, symlinks resolved, duplicates removed.

        Reads the file system (on Windows: the system's list of serial ports), so call it
        at each connect: a re-enumerated board behind a udev symlink is found at its new
        place.

        Args:
            preferred: a real path to try first if it is still there (the port whose
                board answered last time).
        """
        if self.system:
            found = _unique(os.path.realpath(path) for path in serial_ports(self.patterns))
        elif sys.platform == "win32":
            found = _unique(_windows_matches(self.patterns, _windows_ports()))
        else:
            found = _unique(os.path.realpath(path) for path in self._existing_paths())
        if preferred in found:
            found.remove(preferred)
            found.insert(0, preferred)
        return found

    def _existing_paths(self) -> list[str]:
        paths: list[str] = []
        for pattern in self.patterns:
            if _GLOB_CHARS.search(pattern):
                paths.extend(sorted(glob.glob(pattern), key=natural_key))
            elif os.path.exists(pattern):
                paths.append(pattern)
        return paths

    def __str__(self) -> str:
        return "auto" if self.system else ",".join(self.patterns)


def _unique(paths: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(paths))


def _windows_ports() -> list[str]:
    """The serial ports Windows lists now (``COM3``, ``COM10``, …), in natural order."""
    return sorted((port.device for port in list_ports.comports()), key=natural_key)


def _windows_matches(patterns: Iterable[str], ports: list[str]) -> list[str]:
    """The ``ports`` each pattern names, in pattern order; Windows names ignore case."""
    matches: list[str] = []
    for pattern in patterns:
        wanted = pattern.removeprefix("\\\\.\\").upper()
        matches.extend(port for port in ports if fnmatch.fnmatchcase(port.upper(), wanted))
    return matches


def serial_ports(patterns: Sequence[str] = ()) -> list[str]:
    """Every serial port of this machine that may hold a DGT board, in natural order.

    The ports the operating system lists (pyserial's ``list_ports``: COM ports on
    Windows, ``/dev/cu.*`` on macOS, USB serial devices on Linux) plus those matching
    :data:`DEFAULT_PATTERNS` (Bluetooth ``rfcomm`` ports are not listed by Linux) and
    the given extra ``patterns`` (paths or globs, e.g. a folder of udev symlinks), then
    the ports of running emulators (:func:`emulated_ports`).
    A port reached by several names is listed once, by the name a pattern gave (a udev
    symlink such as ``/dev/dgt-board-3`` rather than ``/dev/ttyACM0``); ``/dev/ttyS*``
    (the motherboard's legacy UARTs, never a DGT board) is left out unless a pattern
    names it.
    """
    system = [port.device for port in list_ports.comports()]
    if sys.platform == "win32":
        return sorted(_unique(system), key=natural_key)
    system = [path for path in system if not os.path.basename(path).startswith("ttyS")]
    every = tuple(dict.fromkeys((*patterns, *DEFAULT_PATTERNS)))
    named: dict[str, str] = {}  # real path -> the name shown (a pattern's symlink first)
    for path in [*PortSpec(patterns=every)._existing_paths(), *system]:
        named.setdefault(os.path.realpath(path), path)
    emulated = [p for p in emulated_ports() if os.path.realpath(p) not in named]
    # real ports first: a rehearsal's emulator left running never wins over the real board
    return sorted(named.values(), key=natural_key) + emulated


def emulated_ports_dir() -> Path:
    """The folder where running emulators put their ports (see the module docstring)."""
    given = os.environ.get(EMULATED_PORTS_ENV)
    if given:
        return Path(given)
    user = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    return Path(tempfile.gettempdir()) / f"dgtcast-{user}" / "emulated"


def new_emulated_port(serial: str) -> Path:
    """Where this process, an emulator of the board ``serial``, puts its port's link.

    Makes the folder (this user's only) and removes the links of emulators that are no
    longer running (killed before they could).
    """
    folder = emulated_ports_dir()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for entry in folder.glob("dgt-*"):
        pid = entry.name.rsplit("-", 1)[-1]
        if entry.is_symlink() and pid.isdigit() and not _running(int(pid)):
            with contextlib.suppress(OSError):
                entry.unlink()
    return folder / f"dgt-{serial}-{os.getpid()}"


def emulated_port_of(path: str) -> str | None:
    """The emulated port (its link) whose pty ``path`` is, or None for any other port."""
    real = os.path.realpath(path)
    return next((p for p in emulated_ports() if os.path.realpath(p) == real), None)


def emulated_ports(folder: Path | None = None) -> list[str]:
    """The ports of the emulators running now, in natural order (none on Windows)."""
    folder = emulated_ports_dir() if folder is None else folder
    if sys.platform == "win32" or not _private(folder):
        return []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    ports = []
    for entry in entries:
        pid = entry.name.rsplit("-", 1)[-1]
        running = entry.name.startswith("dgt-") and pid.isdigit() and _running(int(pid))
        if running and entry.exists():  # an unplugged emulated board is gone, as a real one
            ports.append(str(entry))
    return sorted(ports, key=natural_key)


def _private(folder: Path) -> bool:
    """The folder exists, is this user's, and nobody else may write to it."""
    try:
        info = folder.stat()
    except OSError:
        return False
    mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return stat.S_ISDIR(info.st_mode) and mine and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
