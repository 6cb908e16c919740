"""Fixtures shared by every test: where ../shared lives, the recordings in it, and the
rule that an ERROR log nobody expected fails the test."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from drivers.dgt.aio.ports import EMULATED_PORTS_ENV
from tests.mosquitto import Mosquitto, find_mosquitto
from tests.shared_data import shared_path


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


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A running broker of the test's own on a free loopback port, with persistence, stopped
    after the test."""
    if find_mosquitto() is None:
        pytest.fail("mosquitto is not installed (make system)")
    broker = Mosquitto(tmp_path / "mosquitto")
    with broker:
        yield broker


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "error_log(*patterns): the test provokes ERROR logs on purpose, all of them or those"
        " matching a pattern (others fail on one)",
    )
    config.addinivalue_line(
        "markers",
        "slow: the test takes tens of seconds (games played on emulated boards in real"
        " time); slow tests are started first so that no worker is left with one at the end",
    )


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: three workers per core. Most tests spend their time waiting on emulated
    players, brokers and browsers rather than computing."""
    del config
    return 3 * (os.cpu_count() or 1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first, each group in its collection order (``--dist load`` then deals
    them out among the workers before anything else)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def no_unexpected_error_log(
    request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> Iterator[None]:
    """Fail a test that logged at ERROR or above, unless it is marked ``error_log``.

    An ERROR log means something went wrong that the test did not look for (a handler
    that raised, a task that died); a test that provokes one on purpose says so, with
    ``@pytest.mark.error_log`` (any) or ``@pytest.mark.error_log(r"regex", ...)`` (those
    whose ``logger: message`` matches one of the patterns).
    """
    yield
    marker = request.node.get_closest_marker("error_log")
    if marker is not None and not marker.args:
        return
    allowed = [re.compile(pattern) for pattern in (marker.args if marker else ())]
    logged = [
        f"{record.name}: {record.getMessage()}"
        for when in ("setup", "call")
        for record in caplog.get_records(when)
        if record.levelno >= logging.ERROR
    ]
    errors = [text for text in logged if not any(p.search(text) for p in allowed)]
    if errors:
        pytest.fail("unexpected ERROR log:\n" + "\n".join(errors), pytrace=False)


@pytest.fixture(autouse=True)
def root_logger_restored() -> Iterator[None]:
    """Leave the root logger as the test found it.

    A command run in-process (``configure_logging``) points the root logger at the
    test's captured stderr; left there, later tests would log into a closed stream.
    """
    root = logging.getLogger()
    handlers, level = set(root.handlers), root.level
    yield
    for handler in root.handlers[:]:
        if handler not in handlers and not type(handler).__module__.startswith("_pytest"):
            root.removeHandler(handler)
    root.setLevel(level)


@pytest.fixture(autouse=True, scope="session")
def _own_emulated_ports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """This test run's folder of emulated ports (drivers/dgt/aio/ports.py), set for every
    process the tests start: boards found by serial are this run's, never the emulators
    of another run on the same machine."""
    folder = tmp_path_factory.mktemp("emulated-ports")
    folder.chmod(0o700)
    before = os.environ.get(EMULATED_PORTS_ENV)
    os.environ[EMULATED_PORTS_ENV] = str(folder)
    yield folder
    if before is None:
        os.environ.pop(EMULATED_PORTS_ENV, None)
    else:
        os.environ[EMULATED_PORTS_ENV] = before
