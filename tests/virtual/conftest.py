"""Fixtures of the virtual-time tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for the module's configuration files."""
    return tmp_path_factory.mktemp("virtual")
