"""Port specs: paths and globs resolved at each connect (docs/protocol.md §1, §12.3)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from drivers.dgt.aio import ports
from drivers.dgt.aio.ports import DEFAULT_PATTERNS, PortSpec, patterns_for


@pytest.fixture
def dev(tmp_path: Path) -> Path:
    """A fake /dev with ttyACM2, ttyACM10, ttyUSB0 and a udev-style symlink."""
    for name in ("ttyACM2", "ttyACM10", "ttyUSB0"):
        (tmp_path / name).touch()
    (tmp_path / "dgt-board-3").symlink_to(tmp_path / "ttyACM10")
    return tmp_path


def test_a_symlink_is_resolved_to_the_device_it_points_at_now(dev: Path) -> None:
    spec = PortSpec(patterns=(str(dev / "dgt-board-3"),))
    assert spec.candidates() == [str(dev / "ttyACM10")]
    (dev / "dgt-board-3").unlink()
    (dev / "dgt-board-3").symlink_to(dev / "ttyACM2")  # re-enumerated after a replug
    assert spec.candidates() == [str(dev / "ttyACM2")]
    assert not spec.is_glob


def test_a_missing_port_has_no_candidates(dev: Path) -> None:
    assert PortSpec(patterns=(str(dev / "ttyACM7"),)).candidates() == []


def test_a_glob_lists_ports_in_natural_order_without_duplicates(dev: Path) -> None:
    spec = PortSpec.from_str(f"{dev}/ttyACM*, {dev}/dgt-*, {dev}/ttyUSB*")
    assert spec.is_glob
    assert spec.candidates() == [str(dev / name) for name in ("ttyACM2", "ttyACM10", "ttyUSB0")]


def test_the_port_that_answered_last_time_is_tried_first(dev: Path) -> None:
    spec = PortSpec(patterns=(f"{dev}/tty*",))
    preferred = str(dev / "ttyUSB0")
    assert spec.candidates(preferred=preferred)[0] == preferred
    assert spec.candidates(preferred=str(dev / "gone")) == spec.candidates()


def test_auto_and_empty_mean_the_usual_linux_ports() -> None:
    assert PortSpec.from_str("auto").patterns == DEFAULT_PATTERNS
    assert PortSpec.from_str(" ").patterns == DEFAULT_PATTERNS
    assert str(PortSpec.from_str("/dev/a,/dev/b")) == "/dev/a,/dev/b"


def test_an_empty_pattern_is_refused() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        PortSpec(patterns=("",))


def test_real_pty_symlink_resolves_to_dev_pts(tmp_path: Path) -> None:
    master, slave = os.openpty()
    try:
        (tmp_path / "board").symlink_to(os.ttyname(slave))
        assert PortSpec(patterns=(str(tmp_path / "board"),)).candidates() == [
            os.path.realpath(os.ttyname(slave))
        ]
    finally:
        os.close(master)
        os.close(slave)


def test_each_platform_has_its_own_default_names() -> None:
    assert patterns_for("linux") == ("/dev/ttyACM*", "/dev/ttyUSB*", "/dev/rfcomm*")
    assert "/dev/cu.usbmodem*" in patterns_for("darwin")
    assert patterns_for("win32") == ("COM*",)
    assert patterns_for("freebsd14") == patterns_for("linux")
    assert patterns_for(sys.platform) == DEFAULT_PATTERNS


def test_windows_names_and_globs_match_the_listed_com_ports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On Windows a port is a name the system lists, not a file: COM10 sorts after COM3."""
    monkeypatch.setattr(ports, "_windows_ports", lambda: ["COM1", "COM3", "COM10"])
    monkeypatch.setattr(sys, "platform", "win32")
    assert PortSpec.from_str("com3").candidates() == ["COM3"]
    assert PortSpec.from_str(r"\\.\COM10").candidates() == ["COM10"]
    assert PortSpec.from_str("COM*").candidates(preferred="COM10") == ["COM10", "COM1", "COM3"]
    assert PortSpec.from_str("COM7").candidates() == []
