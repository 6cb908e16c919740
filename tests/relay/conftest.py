"""Fixtures of the relay tests: a real mosquitto broker of their own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mosquitto import Mosquitto, find_mosquitto


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A running broker on a free loopback port, with persistence, stopped after the test."""
    if find_mosquitto() is None:
        pytest.fail("mosquitto is not installed (make system)")
    broker = Mosquitto(tmp_path / "mosquitto")
    with broker:
        yield broker
