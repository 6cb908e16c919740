"""A virtual serial cable: a pseudo-terminal pair behind a stable symlink path.

The emulator holds the master end; a driver opens the slave end through ``path``, a
symlink to ``/dev/pts/N``, exactly as it would open ``/dev/ttyACM0``. The slave is put in
raw mode (no echo, no line editing, no CR/LF translation) so that bytes pass unchanged in
both directions, like a real 9600 8N1 line (docs/protocol.md §1).

Unplugging closes both ends and removes the symlink: a driver reading the slave sees
EIO / hang-up, as with a USB cable pulled. Plugging in again creates a new pair and points
the same path at it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

if sys.platform != "win32":
    import fcntl
    import termios
    import tty

__all__ = ["UNSUPPORTED", "VirtualSerialPort"]

#: Why virtual boards cannot run on this platform, or None where they can: they need a
#: POSIX pseudo-terminal (Linux, macOS). Commands that create them print this and exit 2.
UNSUPPORTED: str | None = (
    "virtual DGT boards need a POSIX pseudo-terminal (Linux or macOS);"
    " on Windows run the demo and the emulator under WSL"
    if sys.platform == "win32"
    else None
)


class VirtualSerialPort:
    """A pty pair whose slave end is reachable at ``path``.

    Args:
        path: where the symlink to the slave end lives (its folder must exist).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._master: int | None = None
        self._slave: int | None = None

    @property
    def is_open(self) -> bool:
        """Whether the cable is plugged in (the pair exists and ``path`` points at it)."""
        return self._master is not None

    @property
    def master_fd(self) -> int:
        """The emulator's end (non-blocking).

        Raises:
            RuntimeError: the port is closed.
        """
        if self._master is None:
            raise RuntimeError("the virtual serial port is closed")
        return self._master

    @property
    def slave_name(self) -> str:
        """The ``/dev/pts/N`` name ``path`` points at."""
        if self._slave is None:
            raise RuntimeError("the virtual serial port is closed")
        return _tty_name(self._slave)

    def unread(self) -> int:
        """Bytes written to the line that no reader of the slave end has taken yet."""
        if self._slave is None:
            return 0
        return _unread(self._slave)

    def open(self) -> None:
        """Create the pty pair, make the slave raw and point ``path`` at it."""
        if self._master is not None:
            raise RuntimeError("the virtual serial port is already open")
        master, slave = _raw_pty_pair()
        self._master, self._slave = master, slave
        self._link(_tty_name(slave))

    def close(self) -> None:
        """Remove ``path`` and close both ends (a reader of the slave sees a hang-up)."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        for fd in (self._master, self._slave):
            if fd is not None:
                os.close(fd)
        self._master = self._slave = None

    def _link(self, target: str) -> None:
        """Point ``path`` at ``target`` atomically (a reader never sees it missing)."""
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        temporary.symlink_to(target)
        os.replace(temporary, self.path)


if sys.platform != "win32":

    def _raw_pty_pair() -> tuple[int, int]:
        """A pty pair: raw slave without echo, non-blocking master."""
        master, slave = os.openpty()
        tty.setraw(slave, termios.TCSANOW)
        attributes = termios.tcgetattr(slave)
        attributes[3] &= ~(termios.ECHO | termios.ECHONL)
        termios.tcsetattr(slave, termios.TCSANOW, attributes)
        os.set_blocking(master, False)
        return master, slave

    def _tty_name(fd: int) -> str:
        return os.ttyname(fd)

    def _unread(fd: int) -> int:
        waiting = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
        return int.from_bytes(waiting, sys.byteorder)

else:

    def _raw_pty_pair() -> tuple[int, int]:
        raise OSError(UNSUPPORTED)

    def _tty_name(fd: int) -> str:
        raise OSError(UNSUPPORTED)

    def _unread(fd: int) -> int:
        raise OSError(UNSUPPORTED)
