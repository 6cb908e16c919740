"""docs/architecture.md maps every module: a line each, under its room's heading."""

from __future__ import annotations

import re

from tests.test_layers import ALLOWED, ROOT, source_files

DOC = ROOT / "docs" / "architecture.md"


def mapped_modules(text: str) -> set[str]:
    """``room/module.py`` for every table row under a ``### `room/` `` heading."""
    found: set[str] = set()
    room = None
    for line in text.splitlines():
        heading = re.fullmatch(r"### `([\w/]+)/`", line.strip())
        if heading:
            room = heading.group(1)
        elif room and (row := re.match(r"\| `(\w+\.py)` \|", line)):
            found.add(f"{room}/{row.group(1)}")
    return found


def test_every_module_has_its_line() -> None:
    modules = {
        path.relative_to(ROOT).as_posix() for path in source_files() if path.name != "__init__.py"
    }
    mapped = mapped_modules(DOC.read_text(encoding="utf-8"))
    assert not modules - mapped, f"not in docs/architecture.md: {sorted(modules - mapped)}"
    assert not mapped - modules, f"gone but still mapped: {sorted(mapped - modules)}"


def test_every_room_is_in_the_layer_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    rooms = {room.replace(".", "/") for room in ALLOWED if room not in {"daemon", "broadcast"}}
    missing = [room for room in sorted(rooms) if f"`{room}/`" not in text]
    assert not missing, f"rooms missing from docs/architecture.md: {missing}"


def test_the_reader_finds_rows_under_headings() -> None:
    text = "### `base/`\n\n| module | what |\n| `colors.py` | sides |\n"
    assert mapped_modules(text) == {"base/colors.py"}
