"""The command line: sub-commands and the check for packages that overwrite dgtcast's."""

from __future__ import annotations

import importlib.metadata
import subprocess

import pytest

from daemon import cli
from tests.daemon.support import DGTCAST


def test_python_daemon_beside_dgtcast_is_named_with_the_fix() -> None:
    owners = {
        "daemon": ["dgtcast", "python-daemon"],
        "drivers": ["dgtcast"],
        "chess": ["chess"],
    }
    assert cli.clashing_distributions(owners) == {"daemon": ["python-daemon"]}
    assert cli.clashing_distributions({"daemon": ["dgtcast"]}) == {}


def test_the_warning_goes_to_stderr_before_the_command_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        importlib.metadata,
        "packages_distributions",
        lambda: {"daemon": ["dgtcast", "python-daemon"], "broadcast": ["dgtcast"]},
    )
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    captured = capsys.readouterr()
    assert captured.err == (
        "dgtcast: warning: python-daemon also installs a package named 'daemon' in this"
        " Python environment; the two overwrite each other. Install dgtcast on its own"
        " with pipx (docs/deployment.md, 'Installing').\n"
    )
    assert "usage: dgtcast" in captured.out


def test_this_environment_has_no_clash_and_every_command_has_help() -> None:
    assert cli.clashing_distributions(importlib.metadata.packages_distributions()) == {}
    for command in cli._COMMANDS:
        done = subprocess.run(
            [str(DGTCAST), command, "--help"], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        assert f"usage: dgtcast {command}" in done.stdout
