"""Fixtures of the virtual-time tests, and the property tests marked slow."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for the module's configuration files."""
    return tmp_path_factory.mktemp("virtual")


@pytest.hookimpl(tryfirst=True)  # before tests/conftest.py puts the slow tests first
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The property tests here (hypothesis: hundreds of fault schedules each, some 14 s of
    one core) are slow tests: started first, each on its own worker."""
    here = Path(__file__).parent
    for item in items:
        test = getattr(item, "obj", None)
        if getattr(test, "is_hypothesis_test", False) and here in item.path.parents:
            item.add_marker(pytest.mark.slow)
