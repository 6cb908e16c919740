"""A minimal test driver: raw reads and writes on the pty's slave path, decoded for real."""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Callable
from pathlib import Path

from drivers.dgt.commands import Command, encode
from drivers.dgt.events import Event
from drivers.dgt.protocol import DgtProtocol

__all__ = ["PtyClient"]


class PtyClient:
    """Opens ``path`` like a driver opens /dev/ttyACM0 and decodes what arrives."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        self.protocol = DgtProtocol()
        self.events: list[Event] = []
        self.chunks: list[bytes] = []
        self.hung_up = False

    def send(self, *commands: Command) -> None:
        """Write commands to the board."""
        os.write(self.fd, b"".join(encode(command) for command in commands))

    def write(self, data: bytes) -> None:
        """Write raw bytes to the board."""
        os.write(self.fd, data)

    async def until(
        self, predicate: Callable[[list[Event]], bool], within: float = 5.0
    ) -> list[Event]:
        """Read until ``predicate(events)`` holds (events so far, oldest first)."""
        async with asyncio.timeout(within):
            while not predicate(self.events):
                if self.hung_up:
                    raise ConnectionError("the board hung up")
                await self._readable()
                self._read()
        return self.events

    async def until_hung_up(self, within: float = 5.0) -> None:
        """Read until the line goes dead (EOF or EIO: the cable was pulled)."""
        async with asyncio.timeout(within):
            while not self.hung_up:
                await self._readable()
                self._read()

    def close(self) -> None:
        """Close the port."""
        os.close(self.fd)

    async def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        loop.add_reader(self.fd, ready.set_result, None)
        try:
            await ready
        finally:
            loop.remove_reader(self.fd)

    def _read(self) -> None:
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        except OSError as error:
            if error.errno != errno.EIO:
                raise
            data = b""
        if not data:
            self.hung_up = True
            return
        self.chunks.append(data)
        self.protocol.receive_data(data)
        self.events += self.protocol.events_received()
