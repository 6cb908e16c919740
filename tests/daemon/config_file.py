"""A test round's configuration file, written as TOML from typed arguments.

``write_config(folder, boards, dgt_mode=23)`` instead of editing the written text: each key
a test needs is an argument (or one entry of ``event``, ``server``, ``tables`` or
``arrays``), and every string is written as a TOML basic string, escaped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

__all__ = ["BoardSpec", "TomlTable", "TomlValue", "toml_value", "write_config"]

TomlValue: TypeAlias = "str | int | float | bool | Sequence[TomlValue] | Mapping[str, TomlValue]"
TomlTable: TypeAlias = Mapping[str, TomlValue]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class BoardSpec:
    """One ``[[boards]]`` table."""

    number: int
    port: str | None
    white: str = ""
    black: str = ""
    clock_white_side: str | None = None


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


def write_config(
    folder: Path,
    boards: Sequence[BoardSpec],
    *,
    name: str = "Test Open",
    round_number: int = 2,
    time_control: str = "180+2",
    default_time: str | None = "30m",
    round_start: str | None = None,
    dgt_mode: int | None = None,
    variant: str | None = None,
    event: Mapping[str, TomlValue] | None = None,
    host: str = "127.0.0.1",
    token: str | None = "arbiter-secret",
    results: str | None = None,
    server: Mapping[str, TomlValue] | None = None,
    journal: str = "journal.db",
    tables: Mapping[str, TomlTable] | None = None,
    arrays: Mapping[str, Sequence[TomlTable]] | None = None,
    extra: str = "",
) -> Path:
    """``folder/round.toml`` for a test round; the journal lives in ``folder``.

    ``None`` leaves a key out (``token=None``: loopback without a token, the daemon makes
    its own; ``default_time=None``: FIDE's zero default). ``event`` and ``server`` add keys
    to their tables; ``tables`` adds whole tables (``{"pairing": {"trf": ...}}``), ``arrays``
    arrays of tables (``{"lichess": [{"rounds": {"2": "id"}, ...}]}``: ``[[lichess]]``);
    ``extra`` is TOML text appended as it is.
    """
    event_keys: dict[str, TomlValue | None] = {
        "name": name,
        "site": "Test Club",
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
        lines += ["[[boards]]", f"number = {board.number}"]
        lines += _keys(
            {
                "port": board.port,
                "white": board.white or f"White, Board {board.number}",
                "black": board.black or f"Black, Board {board.number}",
                "clock_white_side": board.clock_white_side or None,
            }
        )
        lines.append("")
    path = folder / "round.toml"
    path.write_text("\n".join(lines) + extra)
    return path
