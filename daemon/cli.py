"""The ``dgtcast`` command line: one sub-command per task, each in its own module.

Only the module of the command being run is imported (``dgtcast --help`` imports none):
an arbiter's ``dgtcast round next`` does not wait for the daemon's whole stack to load.
A command is one line in :data:`_COMMANDS`; ``tests/daemon/commands/test_cli.py`` checks which
modules each command imports.

Exit codes: 0 success, 1 runtime failure, 2 bad usage or bad configuration.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, cast

__all__ = ["TOP_LEVEL", "clashing_distributions", "main", "owners_of"]


class _Command(Protocol):
    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...
    def run(self, args: argparse.Namespace) -> int: ...


_DESCRIPTION = "DGT e-boards and clocks to live broadcast, arbiters and pairing programs."

#: name -> (module providing add_arguments/run, help). Only the chosen command's module is
#: imported: `dgtcast --help` and `dgtcast round next` must not pay for the daemon's stack.
_COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("daemon.commands.run", "run a round: every e-board, alerts, journal, broadcast"),
    "boards": ("daemon.commands.boards", "list the serial ports that answer as DGT boards"),
    "clocks": ("daemon.commands.clocks", "set every e-board clock to the time control (mode 23)"),
    "round": ("daemon.commands.round", "move the running daemon on to the next round"),
    "result": ("daemon.commands.result", "set or confirm a result on the running daemon"),
    "sync": (
        "daemon.commands.sync",
        "a board out of sync: rebuild its record from its memory, or accept its position",
    ),
    "results": ("daemon.commands.results", "write the round's TRF from the journal"),
    "prizes": ("daemon.commands.prizes", "print the prize list (or its CSV) from the standings"),
    "relay": ("daemon.commands.relay", "serve every daemon's boards from the MQTT broker"),
    "lichess": ("daemon.commands.lichess", "create the lichess broadcast and rounds of the event"),
    "demo": (
        "daemon.commands.demo",
        "run the embedded demo: emulated boards replaying famous games",
    ),
    "emulate": ("daemon.commands.emulate", "create a virtual DGT board + clock on a pty"),
}


def _load(module: str) -> _Command:
    return cast(_Command, importlib.import_module(module))


def build_parser(
    argv: Sequence[str], load: Callable[[str], _Command] = _load
) -> argparse.ArgumentParser:
    """Build the parser for ``argv``: every sub-command by name and help, and the arguments
    of the one ``argv`` names (its module is the only one imported).

    The top level takes no option but ``--help``, so the command, if any, is ``argv[0]``.
    """
    parser = argparse.ArgumentParser(prog="dgtcast", description=_DESCRIPTION)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = argv[0] if argv else None
    for name, (module, help_text) in _COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            command = load(module)
            command.add_arguments(sub)
            sub.set_defaults(_run=command.run)
    return parser


#: dgtcast's top-level packages (pyproject.toml); another distribution installing one of
#: these names into the same environment overwrites dgtcast's files, and pip says nothing.
TOP_LEVEL = ("base", "daemon", "drivers", "broadcast")


def clashing_distributions(owners: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Top-level name → the other distributions that install it too (e.g. python-daemon).

    Args:
        owners: what :func:`owners_of` (or :func:`importlib.metadata.packages_distributions`)
            returns.
    """
    clashes = {
        name: sorted({d for d in owners.get(name, ()) if d.lower() != "dgtcast"})
        for name in TOP_LEVEL
    }
    return {name: others for name, others in clashes.items() if others}


def owners_of(names: Sequence[str], path: list[str] | None = None) -> dict[str, list[str]]:
    """Top-level name → the distributions that install it, for ``names`` only.

    What :func:`importlib.metadata.packages_distributions` returns for these names, at a
    tenth of its cost (every command pays it at start): a distribution's name is read
    only when it installs one of ``names``, and a ``RECORD`` is scanned as text, not
    parsed into paths.

    Args:
        names: top-level package or module names.
        path: where to look for distributions (default ``sys.path``).
    """
    wanted = set(names)
    owners: dict[str, list[str]] = {}
    found = importlib.metadata.distributions(path=sys.path if path is None else path)
    for dist in found:
        tops = set((dist.read_text("top_level.txt") or "").split())
        tops = tops or _record_tops(dist.read_text("RECORD") or "")
        for name in sorted(tops & wanted):
            owners.setdefault(name, []).append(dist.metadata["Name"])
    return owners


def _record_tops(record: str) -> set[str]:
    """The top-level names a ``RECORD`` installs: ``pkg/…`` gives ``pkg``, ``mod.py`` or
    ``mod.cpython-311-x86_64-linux-gnu.so`` gives ``mod``."""
    tops: set[str] = set()
    for line in record.splitlines():
        first, slash, _ = line.partition(",")[0].partition("/")
        tops.add(first if slash else first.split(".", 1)[0])
    return tops


def _warn_about_clashes() -> None:
    for name, others in clashing_distributions(owners_of(TOP_LEVEL)).items():
        print(
            f"dgtcast: warning: {', '.join(others)} also installs a package named {name!r}"
            " in this Python environment; the two overwrite each other. Install dgtcast"
            " on its own with pipx (docs/deployment.md, 'Installing').",
            file=sys.stderr,
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dgtcast`` console script."""
    _warn_about_clashes()
    arguments = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(arguments).parse_args(arguments)
    run = cast(Callable[[argparse.Namespace], int], args._run)
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
