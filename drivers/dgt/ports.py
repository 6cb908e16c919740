"""Where a board is plugged in: a port path or a glob, resolved again at every connect.

A DGT USB board appears as a CDC-ACM device (``/dev/ttyACM*``), some adapters as
``/dev/ttyUSB*``, Bluetooth boards as ``/dev/rfcomm*`` (dgt-protocol.md §1). After an
unplug the kernel may give the board another number, so a udev symlink such as
``/dev/dgt-board-3`` is resolved anew at each connect, never once at start-up
(dgt-protocol.md §12.3, picochess issue #150).

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
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from serial.tools import list_ports

__all__ = ["DEFAULT_PATTERNS", "PortSpec", "natural_key", "patterns_for"]

_PATTERNS = {
    "linux": ("/dev/ttyACM*", "/dev/ttyUSB*", "/dev/rfcomm*"),
    "darwin": ("/dev/cu.usbmodem*", "/dev/cu.usbserial*", "/dev/cu.DGT_BT_*", "/dev/cu.PCS-REVII*"),
    "win32": ("COM*",),
}


def patterns_for(platform: str) -> tuple[str, ...]:
    """Where a DGT board shows up on ``platform`` (a ``sys.platform`` value); Linux's
    names for any other POSIX system (dgt-protocol.md §1)."""
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
    """

    patterns: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.patterns or not all(self.patterns):
            raise ValueError("a port spec needs at least one non-empty path or glob")

    @classmethod
    def from_str(cls, text: str) -> PortSpec:
        """Parse ``"/dev/ttyACM*,/dev/ttyUSB*"``; an empty text or ``auto`` means the defaults."""
        parts = tuple(part.strip() for part in text.split(",") if part.strip())
        if not parts or parts == ("auto",):
            return cls(patterns=DEFAULT_PATTERNS)
        return cls(patterns=parts)

    @property
    def is_glob(self) -> bool:
        """True when the spec may match several ports (discovery is needed)."""
        return len(self.patterns) > 1 or bool(_GLOB_CHARS.search(self.patterns[0]))

    def candidates(self, preferred: str | None = None) -> list[str]:
        """The real device paths that exist now, symlinks resolved, duplicates removed.

        Reads the file system (on Windows: the system's list of serial ports), so call it
        at each connect: a re-enumerated board behind a udev symlink is found at its new
        place.

        Args:
            preferred: a real path to try first if it is still there (the port whose
                board answered last time).
        """
        if sys.platform == "win32":
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
        return ",".join(self.patterns)


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
