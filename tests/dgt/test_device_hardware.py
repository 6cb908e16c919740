"""The driver against a real DGT board on ``$DGTCAST_HARDWARE_PORT`` (skipped without one).

Run with a board plugged in::

    DGTCAST_HARDWARE_PORT=/dev/ttyACM0 .venv/bin/pytest -m hardware tests/dgt
"""

from __future__ import annotations

import os

import pytest

from drivers.dgt.aio.device import DgtDevice
from drivers.dgt.aio.link import ClockError
from drivers.dgt.commands import ClockVersion

pytestmark = pytest.mark.hardware

PORT = os.environ.get("DGTCAST_HARDWARE_PORT", "")


@pytest.mark.skipif(not PORT, reason="no real board: set DGTCAST_HARDWARE_PORT")
async def test_a_real_board_answers_the_handshake_and_its_clock_if_any() -> None:
    device = await DgtDevice.open(PORT)
    try:
        identity = await device.handshake()
        assert identity.serial.text
        assert len(identity.board.squares) == 64
        assert identity.board == await device.request_board()
        try:
            ack = await device.send_clock(ClockVersion())
        except ClockError:
            pytest.skip("the board answered; no clock is cabled to it")
        assert ack.version is not None
    finally:
        await device.close()
