"""Fixtures shared by every test: where ../shared lives, and the recordings in it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def shared_path() -> Path:
    """The ``shared/`` folder beside the checkout, or ``$DGTCAST_SHARED``."""
    return Path(os.environ.get("DGTCAST_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared``; absent, the test fails on CI and is skipped (with why) elsewhere."""
    path = shared_path()
    if not (path / "data").is_dir():
        message = f"shared data not found at {path} (set DGTCAST_SHARED)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def recordings_dir(shared_dir: Path) -> Path:
    """Raw byte recordings of real DGT boards (one base64 message per line)."""
    return shared_dir / "data" / "dgt-recordings"


@pytest.fixture(scope="session")
def games_dir(shared_dir: Path) -> Path:
    """Real games in PGN."""
    return shared_dir / "data" / "games"
