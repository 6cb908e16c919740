"""The command line: sub-commands and the check for packages that overwrite dgtcast's."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from daemon import cli
from tests.mosquitto import free_port


def test_python_daemon_beside_dgtcast_is_named_with_the_fix() -> None:
    owners = {
        "daemon": ["dgtcast", "python-daemon"],
        "drivers": ["dgtcast"],
        "chess": ["chess"],
    }
    assert cli.clashing_distributions(owners) == {"daemon": ["python-daemon"]}
    assert cli.clashing_distributions({"daemon": ["dgtcast"]}) == {}


def _install(site: Path, name: str, *, top_level: str | None = None, record: str = "") -> None:
    """A distribution's metadata in ``site``, as pip leaves it (no files of its own)."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "RECORD").write_text(record + f"{info.name}/METADATA,,\n{info.name}/RECORD,,\n")
    if top_level is not None:
        (info / "top_level.txt").write_text(top_level)


def test_the_owners_come_from_top_level_txt_or_else_the_record(tmp_path: Path) -> None:
    _install(tmp_path, "python-daemon", top_level="daemon\n", record="daemon/runner.py,,\n")
    _install(tmp_path, "drivers-kit", record="drivers/__init__.py,sha256=x,10\n")
    _install(tmp_path, "basemod", record="base.cpython-311-x86_64-linux-gnu.so,,\n")
    _install(tmp_path, "broadcaster", record="broadcast.py,,\nbroadcaster/x.py,,\n")
    _install(tmp_path, "declared", top_level="other\n", record="base/x.py,,\n")
    assert cli.owners_of(cli.TOP_LEVEL, path=[str(tmp_path)]) == {
        "daemon": ["python-daemon"],
        "drivers": ["drivers-kit"],
        "base": ["basemod"],
        "broadcast": ["broadcaster"],
    }


def test_the_warning_goes_to_stderr_before_the_command_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _install(tmp_path, "python-daemon", top_level="daemon\n")
    monkeypatch.syspath_prepend(tmp_path)
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    captured = capsys.readouterr()
    assert captured.err == (
        "dgtcast: warning: python-daemon also installs a package named 'daemon' in this"
        " Python environment; the two overwrite each other. Install dgtcast on its own"
        " with pipx (docs/deployment.md, 'Installing').\n"
    )
    assert "usage: dgtcast" in captured.out


def test_this_environment_has_no_clash() -> None:
    everyone = importlib.metadata.packages_distributions()
    owners = cli.owners_of(cli.TOP_LEVEL)
    assert owners == {name: everyone[name] for name in cli.TOP_LEVEL if name in everyone}
    assert cli.clashing_distributions(owners) == {}


@pytest.mark.parametrize("command", sorted(cli._COMMANDS))
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main([command, "--help"])
    assert exited.value.code == 0
    printed = capsys.readouterr()
    assert printed.err == ""
    assert f"usage: dgtcast {command}" in printed.out


#: Runs ``dgtcast ARGS`` as the console script does, then prints the modules loaded.
_MODULES_AFTER = """
import sys
from pathlib import Path
from daemon.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("\\n" + " ".join(sorted(sys.modules)))
"""


def _imported(*argv: str) -> set[str]:
    """The modules ``dgtcast argv`` has loaded when it exits."""
    done = subprocess.run(
        [sys.executable, "-c", _MODULES_AFTER, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(done.stdout.splitlines()[-1].split())


def _ours(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in cli.TOP_LEVEL}


def test_help_imports_no_command() -> None:
    assert _ours(_imported("--help")) <= {"daemon", "daemon.cli"}


@pytest.mark.parametrize(
    "command", ["round", "result", "sync", "results", "boards", "relay", "emulate"]
)
def test_a_command_imports_its_own_module_and_not_the_daemon(command: str) -> None:
    imported = _ours(_imported(command, "--help"))
    module = cli._COMMANDS[command][0]
    assert module in imported
    others = {m for m, _ in cli._COMMANDS.values()} - {module}
    assert imported.isdisjoint(others)
    assert "daemon.shell.app" not in imported, "the daemon's whole stack"


def test_round_next_needs_neither_drivers_nor_the_web_server() -> None:
    imported = _ours(_imported("round", "--help"))
    assert not {m for m in imported if m.startswith(("drivers", "broadcast.web", "daemon.game.t"))}


def test_round_next_loads_no_http_client() -> None:
    """Reading the configuration checks the outputs' URLs without loading httpx."""
    config = Path(__file__).parents[3] / "config" / "example.toml"
    closed = str(free_port())
    imported = _imported("round", "next", "--config", str(config), "--http-port", closed)
    assert "daemon.config.lichess" in imported, "the configuration was read"
    assert "httpx" not in imported
