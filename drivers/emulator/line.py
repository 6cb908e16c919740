"""The board's end of the cable: bytes queued for the pty, written as the line takes them.

:class:`BoardLine` holds what the firmware sent until the pty takes it: at once, or paced
like a real 9600 baud line (10 bits a byte, §1) when ``baud`` is given. A reader that does
not read loses the oldest bytes beyond :data:`MAX_PENDING_BYTES`, as on a real line; a
full pty makes the writer wait until it takes bytes again (or the cable is pulled).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

from base.waiting import wait_at_most
from drivers.emulator.pty import VirtualSerialPort

__all__ = ["MAX_PENDING_BYTES", "BoardLine"]

#: Bytes kept for a reader that does not read; older ones are lost, as on a real line.
MAX_PENDING_BYTES = 1 << 20
_PACE_CHUNK = 8  # bytes written at once when pacing (≈ 8 ms at 9600 baud)


class BoardLine:
    """Bytes from the board to the pty; run :meth:`run` as a task.

    Args:
        port: the pty the cable is plugged into (raises when there is none).
        plugged: whether the cable is in.
        now: the board's time (seconds).
        baud: None = bytes go out as fast as possible; 9600 = paced like a real line.
    """

    def __init__(
        self,
        port: Callable[[], VirtualSerialPort],
        plugged: Callable[[], bool],
        now: Callable[[], float],
        baud: int | None = None,
    ) -> None:
        self._port = port
        self._plugged = plugged
        self._now = now
        self.baud = baud
        self.pending = bytearray()
        self._data_ready = asyncio.Event()
        #: Bytes lost because nobody read them (beyond :data:`MAX_PENDING_BYTES`).
        self.bytes_dropped = 0
        #: Bytes written to the line so far.
        self.bytes_sent = 0

    def queue(self, data: bytes) -> None:
        """Send ``data`` after what is pending (nothing while the cable is out)."""
        if not data or not self._plugged():
            return
        self.pending += data
        overflow = len(self.pending) - MAX_PENDING_BYTES
        if overflow > 0:
            del self.pending[:overflow]
            self.bytes_dropped += overflow
        self._data_ready.set()

    def clear(self) -> None:
        """The cable is pulled: what was pending is lost."""
        self.pending.clear()

    async def run(self) -> None:
        """Move pending bytes to the pty, paced when ``baud`` is set; until cancelled."""
        while True:
            await self._data_ready.wait()
            self._data_ready.clear()
            line_free_at = self._now()  # pacing: when the last byte has left the line
            while self.pending and self._plugged():
                chunk = self.pending if self.baud is None else self.pending[:_PACE_CHUNK]
                written = self._write(bytes(chunk))
                del self.pending[:written]
                if written < len(chunk):
                    await self._writable()
                if self.baud is not None:
                    line_free_at = max(line_free_at, self._now() - 0.05)
                    line_free_at += written * 10 / self.baud
                    await asyncio.sleep(max(0.0, line_free_at - self._now()))

    def _write(self, data: bytes) -> int:
        try:
            written = os.write(self._port().master_fd, data)
        except BlockingIOError:
            written = 0
        self.bytes_sent += written
        return written

    async def _writable(self) -> None:
        """Wait until the pty takes bytes again (or the cable is pulled)."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        fd = self._port().master_fd

        def writable() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_writer(fd, writable)
        try:
            await wait_at_most(ready, 0.5)
        finally:
            if self._plugged() and self._port().master_fd == fd:
                loop.remove_writer(fd)
