"""Where a board is plugged in: a port path or a glob, resolved again at every connect.

A DGT USB board appears as a CDC-ACM device (``/dev/ttyACM*``), some adapters as
``/dev/ttyUSB*``, Bluetooth boards as ``/dev/rfcomm*`` (dgt-protocol.md §1). After an
unplug the kernel may give the board another number, so a udev symlink such as
``/dev/dgt-board-3`` is resolved anew at each connect, never once at start-up
(dgt-protocol.md §12.3, picochess issue #150).

A glob names every port a board may sit on. The supervisor tries the candidates in order
and keeps the one whose board answers the version handshake; the port that answered last
time is tried first.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["DEFAULT_PATTERNS", "PortSpec", "natural_key"]

#: Where a DGT board shows up on Linux when no port is configured (dgt-protocol.md §1).
DEFAULT_PATTERNS = ("/dev/ttyACM*", "/dev/ttyUSB*", "/dev/rfcomm*")

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

        Reads the file system, so call it at each connect: a re-enumerated board behind a
        udev symlink is found at its new place.

        Args:
            preferred: a real path to try first if it is still there (the port whose
                board answered last time).
        """
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
