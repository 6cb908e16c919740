"""Fixtures of the emulator tests: a board on a pty and a client reading it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.emulator.client import PtyClient

BLITZ = ClockSettings(base_seconds=180, increment_seconds=2)


@pytest.fixture
async def board() -> AsyncIterator[EmulatedBoard]:
    """A board with a 3 min + 2 s clock, White on the left, unpaced output."""
    async with EmulatedBoard(clock=BLITZ, seed=3) as emulated:
        yield emulated


@pytest.fixture
def client(board: EmulatedBoard) -> Iterator[PtyClient]:
    """A raw client on the board's device path."""
    opened = PtyClient(board.path)
    yield opened
    opened.close()
