"""A test event's configuration file, written as TOML from typed arguments.

``write_config(folder, boards, dgt_mode=23)`` instead of editing the written text: each key
a test needs is an argument (or one entry of ``event``, ``server``, ``tables`` or
``arrays``), sections are :class:`SectionSpec` values, and every string is written as a
TOML basic string, escaped.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

from tests.shared_data import ROOT

__all__ = [
    "BoardSpec",
    "SectionSpec",
    "TomlTable",
    "TomlValue",
    "example_round",
    "toml_value",
    "write_config",
]

TomlValue: TypeAlias = "str | int | float | bool | Sequence[TomlValue] | Mapping[str, TomlValue]"
TomlTable: TypeAlias = Mapping[str, TomlValue]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class BoardSpec:
    """One ``[[boards]]`` (or ``[[sections.boards]]``) table."""

    number: int
    port: str | None
    white: str = ""
    black: str = ""
    clock_white_side: str | None = None
    serial: str | None = None


@dataclass(frozen=True, slots=True)
class SectionSpec:
    """One ``[[sections]]`` table: its keys, its pairing program's files, its boards (no
    names written unless given: a paired section takes them from its TRF) and ``extra``
    TOML text of its own sub-tables (``[[sections.prizes.groups]]``)."""

    name: str
    boards: Sequence[BoardSpec] = ()
    keys: TomlTable = field(default_factory=dict)
    pairing: TomlTable | None = None
    extra: str = ""


def toml_value(value: TomlValue) -> str:
    """``value`` as TOML: a string as a basic string (JSON's escapes, and DEL's), a mapping
    as an inline table."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(_keys(value)) + " }"
    return "[" + ", ".join(toml_value(item) for item in value) + "]"


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_value(key)


def _keys(keys: Mapping[str, TomlValue | None]) -> list[str]:
    return [f"{_key(k)} = {toml_value(v)}" for k, v in keys.items() if v is not None]


def _board(board: BoardSpec, header: str, *, named: bool) -> list[str]:
    white = board.white or (f"White, Board {board.number}" if named else None)
    black = board.black or (f"Black, Board {board.number}" if named else None)
    keys = {"port": board.port, "serial": board.serial, "white": white, "black": black}
    keys["clock_white_side"] = board.clock_white_side or None
    return [header, f"number = {board.number}", *_keys(keys), ""]


def _section(section: SectionSpec) -> list[str]:
    lines = ["[[sections]]", *_keys({"name": section.name, **section.keys})]
    if section.pairing is not None:
        lines += ["[sections.pairing]", *_keys(section.pairing)]
    lines.append("")
    for board in section.boards:
        lines += _board(board, "[[sections.boards]]", named=False)
    return lines + ([section.extra] if section.extra else [])


def write_config(
    folder: Path,
    boards: Sequence[BoardSpec],
    *,
    name: str = "Test Open",
    site: str | None = "Test Club",
    round_number: int = 2,
    time_control: str | None = "180+2",
    default_time: str | None = "30m",
    round_start: str | None = None,
    dgt_mode: int | None = None,
    variant: str | None = None,
    event: TomlTable | None = None,
    host: str = "127.0.0.1",
    token: str | None = "arbiter-secret",
    results: str | None = None,
    server: TomlTable | None = None,
    journal: str = "journal.db",
    tables: Mapping[str, TomlTable] | None = None,
    arrays: Mapping[str, Sequence[TomlTable]] | None = None,
    names: bool = True,
    sections: Sequence[SectionSpec] = (),
    extra: str = "",
    file: str = "round.toml",
) -> Path:
    """``folder/file`` (``round.toml``) for a test event; the journal lives in ``folder``.

    ``None`` leaves a key out (``token=None``: loopback without a token, the daemon makes
    its own; ``default_time=None``: FIDE's zero default). A board without names is named
    ``White, Board N`` and ``Black, Board N`` unless ``names`` is false (the pairing
    program names the players). ``event`` and ``server`` add keys
    to their tables; ``tables`` adds whole tables (``{"pairing": {"trf": ...}}``), ``arrays``
    arrays of tables (``{"lichess": [{"rounds": {"2": "id"}, ...}]}``: ``[[lichess]]``);
    ``extra`` is TOML text appended as it is.
    """
    event_keys: dict[str, TomlValue | None] = {
        "name": name,
        "site": site,
        "round": round_number,
        "time_control": time_control,
        "default_time": default_time,
        "round_start": round_start,
        "dgt_mode": dgt_mode,
        "variant": variant,
        **(event or {}),
    }
    server_keys: dict[str, TomlValue | None] = {
        "host": host,
        "port": 8080,
        "arbiter_token": token,
        "results": results,
        **(server or {}),
    }
    lines = ["[event]", *_keys(event_keys), "", "[server]", *_keys(server_keys), ""]
    lines += ["[storage]", *_keys({"path": journal}), ""]
    for table, keys in (tables or {}).items():
        lines += [f"[{table}]", *_keys(keys), ""]
    for array, items in (arrays or {}).items():
        for keys in items:
            lines += [f"[[{array}]]", *_keys(keys), ""]
    for board in boards:
        lines += _board(board, "[[boards]]", named=names)
    for section in sections:
        lines += _section(section)
    path = folder / file
    path.write_text("\n".join(lines) + extra)
    return path


def example_round(
    folder: Path,
    boards: Sequence[BoardSpec],
    *,
    tables: Mapping[str, TomlTable] | None = None,
    arrays: Mapping[str, Sequence[TomlTable]] | None = None,
) -> Path:
    """``folder/round4.toml``: round 4 of the shipped example event, its TRF and pairings
    (``config/tournament-example.trf``, ``round4-pairings.txt``) copied beside it under
    their own names; the boards named by the pairings."""
    files = {"trf": "tournament-example.trf", "pairings": "round4-pairings.txt"}
    for name in files.values():
        shutil.copy(ROOT / "config" / name, folder / name)
    return write_config(
        folder,
        boards,
        name="Riverside Autumn Open 2026",
        site=None,
        round_number=4,
        default_time=None,
        tables={"pairing": files, **(tables or {})},
        arrays=arrays,
        names=False,
        file="round4.toml",
    )
