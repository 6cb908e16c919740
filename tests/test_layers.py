"""Imports point down the layers (docs/architecture.md): drivers import neither the daemon
nor the broadcast layer, and the broadcast layer does not import the daemon."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: package → the packages it must never import.
FORBIDDEN = {"drivers": ("daemon", "broadcast"), "broadcast": ("daemon",)}


def imported_packages(path: Path) -> set[str]:
    """The top-level packages ``path`` imports (at module level or inside functions)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_points_upwards(package: str) -> None:
    upward = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for name in sorted(imported_packages(path) & set(FORBIDDEN[package]))
    ]
    assert not upward, "\n".join(upward)


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from daemon.game import tracker\n", encoding="utf-8")
    assert imported_packages(module) == {"daemon"}
