"""The systemd unit and the udev rules shipped in config/ (docs/deployment.md)."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.daemon.support import refused_start
from tests.serving import DGTCAST

ROOT = Path(__file__).resolve().parents[3]
UNIT = ROOT / "config" / "systemd" / "dgtcast.service"
RULES = ROOT / "config" / "udev" / "99-dgtcast.rules"


def _service() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(UNIT)
    return parser["Service"]


def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    unit = tmp_path / "dgtcast.service"  # the same unit, dgtcast at this venv's path
    unit.write_text(UNIT.read_text().replace("/opt/dgtcast/bin/dgtcast", str(DGTCAST)))
    done = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_the_unit_restarts_on_failure_keeps_the_journal_and_reads_the_ports() -> None:
    service = _service()
    assert service["Restart"] == "on-failure"
    assert service["RestartPreventExitStatus"] == "2"  # bad configuration: no restart loop
    assert service["SupplementaryGroups"] == "dialout"
    assert service["StateDirectory"] == "dgtcast"  # /var/lib/dgtcast, persistent
    assert service["KillSignal"] == "SIGTERM"
    assert service["ExecStart"].startswith("/opt/dgtcast/bin/dgtcast run --config ")


def test_the_exit_code_the_unit_does_not_restart_on_is_a_bad_configuration(
    tmp_path: Path,
) -> None:
    config = tmp_path / "round.toml"
    config.write_text("[event]\nname = 3\n")
    assert "Traceback" not in refused_start(config)


def test_every_udev_rule_names_a_tty_and_its_link() -> None:
    rules = [
        line.lstrip("# ")
        for line in RULES.read_text().splitlines()
        if re.match(r"#? ?SUBSYSTEM==", line)
    ]
    assert len(rules) >= 4
    for rule in rules:
        assert rule.startswith('SUBSYSTEM=="tty", ')
        assert re.search(r'SYMLINK\+="dgt-[^"]+"', rule)
        assert 'GROUP="dialout"' in rule
