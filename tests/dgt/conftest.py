"""Fixtures of the driver tests: an emulated board on a pty.

(No test here may log at ERROR either: peer faults are not errors; the rule is
``tests/conftest.py``'s.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from drivers.emulator.device import EmulatedBoard


@pytest.fixture
async def board() -> AsyncIterator[EmulatedBoard]:
    """A board with a clock on a pty, unpaced."""
    async with EmulatedBoard() as emulated:
        yield emulated
