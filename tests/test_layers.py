"""Imports point down the layers (docs/architecture.md).

Every package of the source is a *room*; a module may import its own room and the rooms
listed for it below, nothing else of the project. The table is the map of
docs/architecture.md; each package's ``__init__`` docstring says the same in words.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ("base", "drivers", "broadcast", "daemon")

_DRIVERS = {"drivers", "drivers.dgt", "drivers.dgt.aio", "drivers.emulator"}
_BROADCAST = {"broadcast.feed", "broadcast.web", "broadcast.outputs"}
_BROADCAST |= {"broadcast.livechess", "broadcast.relay", "broadcast.analysis"}
_CORE = {"daemon.game", "daemon.config", "daemon.pairing", "daemon.journal"}
_CORE |= {"daemon.arbiter", "daemon.round", "daemon.prizes", "daemon.mode23"}

#: room → the other rooms its modules may import. A module belongs to the longest room
#: that prefixes its name.
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "drivers": {"base"},
    "drivers.dgt": {"base", "drivers"},
    "drivers.dgt.aio": {"base", "drivers", "drivers.dgt"},
    "drivers.emulator": {"base", "drivers", "drivers.dgt"},
    "broadcast": {"base"},
    "broadcast.feed": {"base"},
    "broadcast.web": {"base", "broadcast.feed"},
    "broadcast.outputs": {"base", "broadcast.feed"},
    "broadcast.analysis": {"base", "broadcast.feed"},
    "broadcast.livechess": {"base", "broadcast.feed", "broadcast.web", "broadcast.outputs"},
    "broadcast.relay": {"base", "broadcast.feed", "broadcast.web", "broadcast.outputs"},
    "daemon": set(),  # the command line imports its commands by name, when one runs
    "daemon.game": {"base", "drivers"},
    "daemon.config": {"base", "daemon.game", "daemon.pairing", "daemon.prizes"}
    | {"broadcast.feed", "broadcast.outputs"},
    "daemon.pairing": {"base"},
    "daemon.prizes": {"base", "daemon.pairing"},
    "daemon.journal": {"base", "drivers", "daemon.config"},
    "daemon.arbiter": {"base", "daemon.game", "daemon.config", "broadcast.feed"},
    "daemon.mode23": {"base", "drivers", "drivers.dgt", "daemon.game"},
    "daemon.round": {"base", "drivers", "drivers.dgt", "broadcast.feed"}
    | (_CORE - {"daemon.round"}),
    "daemon.session": {"base", "drivers", "drivers.dgt", "broadcast.feed"} | _CORE,
    "daemon.links": {"base"} | _DRIVERS | _BROADCAST | _CORE,
    "daemon.shell": {"base", "daemon.links", "daemon.session"} | _DRIVERS | _BROADCAST | _CORE,
    "daemon.console": {"base", "daemon.links", "daemon.shell", "daemon.session"}
    | _DRIVERS
    | _BROADCAST
    | _CORE,
    "daemon.commands": {"base", "daemon.links", "daemon.shell", "daemon.console", "daemon.session"}
    | _DRIVERS
    | _BROADCAST
    | _CORE,
}

#: No room holds more modules than this (``__init__`` not counted).
MAX_MODULES = 15
#: No module is longer than this (docs/architecture.md): split along its seams instead.
MAX_LINES = 500


def room_of(module: str) -> str | None:
    """The room ``module`` lives in, or None for a module outside the source."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in ALLOWED:
            return ".".join(parts[:end])
    return None


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str) -> set[str]:
    """The absolute module names ``source`` imports (at module level or inside functions)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def forbidden_imports(module: str, source: str) -> list[str]:
    """What ``module`` (its text ``source``) imports from rooms it may not import."""
    own = room_of(module)
    assert own is not None, f"{module} is in no room: add its package to ALLOWED"
    found = []
    for name in sorted(imported_modules(source)):
        room = room_of(name)
        # ``from daemon.round import snapshot`` names the room's own package first.
        if room is None or room == own or own.startswith(name + "."):
            continue
        if room not in ALLOWED[own]:
            found.append(f"{module} ({own}) imports {name} ({room})")
    return found


def source_files() -> list[Path]:
    return sorted(p for package in SOURCE for p in (ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", SOURCE)
def test_no_import_points_upwards(package: str) -> None:
    wrong = [
        line
        for path in source_files()
        if path.is_relative_to(ROOT / package)
        for line in forbidden_imports(module_name(path), path.read_text(encoding="utf-8"))
    ]
    assert not wrong, "\n".join(wrong)


def test_every_room_is_small_and_says_what_it_holds() -> None:
    for room in ALLOWED:
        folder = ROOT.joinpath(*room.split("."))
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        assert len(modules) <= MAX_MODULES, f"{room} holds {len(modules)} modules"
        init = folder / "__init__.py"
        assert init.is_file(), f"{room} has no __init__.py"
        assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), (
            f"{room}: no docstring"
        )


def test_no_module_is_over_500_lines() -> None:
    long = [
        f"{path.relative_to(ROOT)}: {lines} lines"
        for package in SOURCE
        for path in sorted((ROOT / package).rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert not long, "\n".join(long)


def test_every_package_is_a_room() -> None:
    packages = {module_name(init) for p in SOURCE for init in (ROOT / p).rglob("__init__.py")}
    assert packages <= set(ALLOWED), f"not in ALLOWED: {sorted(packages - set(ALLOWED))}"


def test_the_check_sees_imports_inside_functions() -> None:
    source = "def f():\n    from daemon.game import tracker\n"
    assert imported_modules(source) == {"daemon.game", "daemon.game.tracker"}


@pytest.mark.parametrize(
    ("module", "source", "wrong"),
    [
        ("daemon.game.probe", "from broadcast.feed.alerts import Alert\n", True),
        ("daemon.game.probe", "from base.colors import Color\n", False),
        ("drivers.dgt.probe", "import daemon.game.tracker\n", True),
        ("drivers.dgt.probe", "from drivers.dgt.aio.link import DgtLink\n", True),
        ("broadcast.feed.probe", "from broadcast.web.server import BroadcastServer\n", True),
        ("daemon.round.core2", "from daemon.shell.service import RoundService\n", True),
        ("daemon.round.core2", "from daemon.round import snapshot\n", False),
        ("daemon.shell.app2", "from daemon.round.core import RoundCore\n", False),
        ("daemon.config.probe", "from daemon.journal.store import Journal\n", True),
    ],
)
def test_the_check_tells_down_from_up(module: str, source: str, wrong: bool) -> None:
    assert bool(forbidden_imports(module, source)) is wrong
