"""Writing lichess ids into a configuration file's ``[[lichess]]`` tables, text kept.

``dgtcast lichess setup`` keeps the broadcast and round ids it created where the daemon
reads them: the ``broadcast`` and ``rounds`` keys of each ``[lichess]`` / ``[[lichess]]``
table. Only those two lines change (or are added below the table's header); every other
line, comment and blank is written back as it was. The result is parsed again and must
hold exactly the ids, or nothing is written (``rounds`` given as a sub-table
``[lichess.rounds]`` cannot be rewritten: write it on one line). Pure.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping

__all__ = ["lichess_tables", "with_lichess_ids"]

_HEADER = re.compile(r"^\s*\[\[?\s*lichess\s*\]\]?\s*(?:#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")


def lichess_tables(lines: list[str]) -> list[tuple[int, int]]:
    """Each lichess table's lines: (header index, end index), in file order."""
    tables = []
    for index, line in enumerate(lines):
        if _HEADER.match(line):
            end = index + 1
            while end < len(lines) and not _ANY_HEADER.match(lines[end]):
                end += 1
            tables.append((index, end))
    return tables


def _set(lines: list[str], start: int, end: int, key: str, value: str) -> int:
    """Replace ``key = …`` in lines[start+1:end], or insert it after the header; the
    table's new end."""
    pattern = re.compile(rf"^(\s*){key}\s*=")
    for index in range(start + 1, end):
        match = pattern.match(lines[index])
        if match:
            lines[index] = f"{match.group(1)}{key} = {value}"
            return end
    lines.insert(start + 1, f"{key} = {value}")
    return end + 1


def _rounds_value(rounds: Mapping[int, str]) -> str:
    return "{ " + ", ".join(f'{n} = "{rid}"' for n, rid in sorted(rounds.items())) + " }"


def with_lichess_ids(
    text: str, ids: Mapping[int, tuple[str, Mapping[int, str]]], *, source: str
) -> str:
    """The file's text with lichess ids written in.

    Args:
        text: the configuration file's text.
        ids: table position (0-based, file order) → (broadcast id, event round → lichess
            round id).
        source: the file's name, for messages.

    Raises:
        ValueError: a table is not where the text has it, or the ids did not come out.
    """
    ending = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines()
    tables = lichess_tables(lines)
    for position in sorted(ids, reverse=True):  # from the end: earlier indexes stay put
        if position >= len(tables):
            raise ValueError(f"{source}: no lichess table number {position + 1}")
        start, end = tables[position]
        broadcast, rounds = ids[position]
        end = _set(lines, start, end, "broadcast", f'"{broadcast}"')
        if rounds:  # a broadcast whose rounds could not be created yet: its id alone
            _set(lines, start, end, "rounds", _rounds_value(rounds))
    result = ending.join(lines) + (ending if text.endswith(("\n", "\r")) else "")
    _check(result, ids, source)
    return result


def _check(text: str, ids: Mapping[int, tuple[str, Mapping[int, str]]], source: str) -> None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(
            f"{source}: the lichess ids cannot be written into this file ({exc}); write each"
            ' table\'s rounds on one line: rounds = { 1 = "…" }'
        ) from None
    found = data.get("lichess")
    tables = [found] if isinstance(found, dict) else list(found or [])
    for position, (broadcast, rounds) in ids.items():
        table = tables[position] if position < len(tables) else {}
        wanted = {str(n): rid for n, rid in rounds.items()}
        if table.get("broadcast") != broadcast or (rounds and table.get("rounds") != wanted):
            raise ValueError(
                f"{source}: lichess table {position + 1}: the ids did not come out as written;"
                ' write its rounds on one line: rounds = { 1 = "…" }'
            )
