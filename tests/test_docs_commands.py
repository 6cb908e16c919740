"""Every command in README.md and docs/ runs as written.

The fenced shell blocks of the docs are read line by line. A ``dgtcast`` command must
parse with the real argument parser and name files that exist; those that need no
hardware are run for real from a copy of ``config/``: the long-running ones (``run``,
``demo``, ``relay``, ``emulate``) until they serve or print their device, then stopped
with Ctrl-C (exit 0, no traceback); the others to the end. ``make`` targets must exist,
``bench/`` scripts must start. Synopses with placeholders (``FILE``, ``[--out PATH]``)
are checked for their sub-command only; commands of other programs (``sudo``,
``mosquitto_sub``, ``pipx``) are the reader's system, not ours.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from daemon import cli
from tests.serving import DGTCAST, dgtcast

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_SHELLS = {"sh", "bash", "shell", "console", ""}
_COMMAND = re.compile(r"((\.venv/bin/)?dgtcast|make|bench/\S+|(\.venv/bin/)?python3?) ")
_PLACEHOLDER = re.compile(r"\[|\]|…|<[^>]*>|\b[A-Z]{2,}\b")
#: Long-running commands and what they print once they are up.
_SERVING = {"run": "viewer:", "demo": "viewer:", "relay": "viewer:", "emulate": "device:"}
#: Commands that need something these tests do not have; checked, not run.
_NEEDS = {
    ("clocks", "set"): "e-boards with clocks in mode 23",
    ("results", "export"): "a journal of a played round",
    ("round", "next"): "a running daemon and the next round's pairings",
    ("result", "set"): "a running daemon",
    ("result", "confirm"): "a running daemon",
    ("--set-clocks", ""): "e-boards with clocks in mode 23",
}
_FOREIGN = ("sudo", "pipx", "journalctl", "mosquitto_sub", "mosquitto_pub", "curl", "npm")


@dataclass(frozen=True)
class DocCommand:
    """One command line of the docs and where it stands."""

    where: str
    argv: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.where}: {shlex.join(self.argv)}"


def _commands() -> list[DocCommand]:
    found: list[DocCommand] = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for fence in _FENCE.finditer(text):
            if fence.group(1) not in _SHELLS:
                continue
            first = text[: fence.start()].count("\n") + 1
            for offset, line in enumerate(fence.group(2).splitlines(), start=1):
                raw = line.strip().removeprefix("$ ")
                if _COMMAND.match(raw + " "):
                    where = f"{path.relative_to(ROOT)}:{first + offset}"
                    found.append(DocCommand(where, tuple(shlex.split(raw, comments=True))))
    return found


COMMANDS = _commands()


def test_the_docs_have_commands() -> None:
    assert len(COMMANDS) >= 10
    assert not [c for c in COMMANDS if c.argv[0] in _FOREIGN]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A folder like a checkout: ``config/`` copied, ``.venv/bin/dgtcast`` linked."""
    shutil.copytree(ROOT / "config", tmp_path / "config")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "dgtcast").symlink_to(DGTCAST)
    return tmp_path


@pytest.mark.parametrize("command", COMMANDS, ids=str)
def test_the_command_runs_as_written(command: DocCommand, workdir: Path) -> None:
    program = command.argv[0]
    if program == "make":
        _check_make_target(command)
    elif program.startswith("bench/") or "python" in program:
        _check_bench(command)
    else:
        _check_dgtcast(command, workdir)


def _check_make_target(command: DocCommand) -> None:
    for target in [word for word in command.argv[1:] if "=" not in word]:
        done = subprocess.run(
            ["make", "-n", "-C", str(ROOT), target], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, f"{command}: no make target {target!r}"


def _check_bench(command: DocCommand) -> None:
    script = next(word for word in command.argv if word.startswith("bench/"))
    assert (ROOT / script).is_file(), f"{command}: {script} does not exist"
    done = subprocess.run(
        [sys.executable, str(ROOT / script), "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"{command}: {done.stderr}"
    for flag in [word.split("=")[0] for word in command.argv if word.startswith("--")]:
        assert flag in done.stdout, f"{command}: {script} has no {flag}"


def _check_dgtcast(command: DocCommand, workdir: Path) -> None:
    argv = list(command.argv[1:])
    if _PLACEHOLDER.search(" ".join(argv)):  # a synopsis: the sub-command must exist
        assert argv[0] in cli._COMMANDS, f"{command}: no sub-command {argv[0]!r}"
        return
    try:
        cli.build_parser(argv).parse_args(argv)
    except SystemExit:
        pytest.fail(f"{command}: dgtcast does not take these arguments")
    key = ("--set-clocks", "") if "--set-clocks" in argv else (argv[0], (argv[1:] or [""])[0])
    need = _NEEDS.get(key)
    if need is not None:  # a file of the reader's own (a walkthrough's) is fine here
        pytest.skip(f"{command} needs {need}")
    for word in argv:
        if re.search(r"\.(toml|pgn|trf|txt)$", word):
            assert (ROOT / word).is_file() or Path(word).is_absolute(), f"{command}: {word}?"
    if argv[0] in _SERVING:
        _serve_then_stop(command, argv, workdir)
    else:
        done = subprocess.run(
            dgtcast(*argv), cwd=workdir, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{command}:\n{done.stdout}{done.stderr}"
        assert "Traceback" not in done.stderr


def _serve_then_stop(command: DocCommand, argv: list[str], workdir: Path) -> None:
    """Run a serving command until it serves, then Ctrl-C. It listens on a free port and
    keeps its temporary files (the demo's boards) in ``workdir``: two runs of the tests
    side by side, or two workers, must not take each other's port or ptys."""
    elsewhere = ["--http-port", "0"] if argv[0] in ("run", "demo", "relay") else []
    output = workdir / "output.txt"
    with output.open("w") as sink:
        process = subprocess.Popen(
            dgtcast(*argv, *elsewhere), cwd=workdir, stdout=sink, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(workdir)},
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while _SERVING[argv[0]] not in output.read_text():
                assert process.poll() is None, f"{command} ended:\n{output.read_text()}"
                assert time.monotonic() < deadline, f"{command} never served"
                time.sleep(0.2)
        finally:
            process.send_signal(signal.SIGINT)
            code = process.wait(timeout=60)
    text = output.read_text()
    assert code == 0, f"{command} exited {code}:\n{text}"
    assert "Traceback" not in text, f"{command}:\n{text}"
