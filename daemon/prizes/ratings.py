"""The rating that counts for prizes, from a CSV of ratings (docs/prizes.md).

A player's rating is the one in the highest-listed system that has one (ACF Classical,
then FIDE Classical, then ACF Rapid-play, or the order the configuration names). ACF
ratings carry a reliability mark: a ``?`` rating is skipped in a first pass over the
systems and used in a second one; a ``??`` rating counts as no rating.

The file: a header line naming the columns, then one player per line. ``name`` is
required (``Lastname, Firstname`` as in the TRF), ``fide_id`` optional, then one column
per system, named as the configuration names them::

    fide_id,name,ACF,FIDE,ACF Rapid
    3209876,"Tran, Kevin",1650?,1702,
    ,"Kim, Joon",1200??,,1105

A player is found by FIDE id when both the TRF and the file have one, else by name
(case and spacing ignored). A player the file does not list keeps the TRF's rating.
Problems are data: :class:`RatingsFileError` holds one line each, ``file:line: what``.
:func:`read_ratings` is pure; :func:`load_ratings` reads the file first.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from daemon.pairing.trf_reader import Player

__all__ = ["Ratings", "RatingsFileError", "counting_rating", "load_ratings", "read_ratings"]

_VALUE = re.compile(r"(\d{1,4})(\?{0,2})")


class RatingsFileError(Exception):
    """A ratings CSV that cannot be used; ``problems`` has one line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


def counting_rating(values: Sequence[str]) -> int | None:
    """The rating that counts among one player's values, highest-listed system first.

    >>> counting_rating(["1650?", "1702", ""])
    1702
    >>> counting_rating(["1650?", "", "1500??"])
    1650
    """
    marked: list[tuple[int, str]] = []
    for value in values:
        match = _VALUE.fullmatch(value.strip())
        if match is not None:
            marked.append((int(match.group(1)), match.group(2)))
    for wanted in ("", "?"):
        for rating, mark in marked:
            if mark == wanted and rating > 0:
                return rating
    return None


def _key(name: str) -> str:
    return " ".join(name.replace(",", ", ").split()).casefold()


@dataclass(frozen=True, slots=True)
class Ratings:
    """The ratings a CSV gives: by FIDE id and by name (None: listed, but unrated)."""

    by_fide_id: Mapping[int, int | None]
    by_name: Mapping[str, int | None]

    def rating_of(self, player: Player) -> int | None:
        """The rating that counts for a TRF player: the file's, else the TRF's."""
        if player.fide_id is not None and player.fide_id in self.by_fide_id:
            return self.by_fide_id[player.fide_id]
        key = _key(player.name)
        return self.by_name.get(key, player.rating)


@dataclass(slots=True)
class _Reader:
    source: str
    header: list[str]
    systems: Sequence[str]
    problems: list[str]
    by_id: dict[int, int | None]
    by_name: dict[str, int | None]
    seen: dict[str, int]

    def receive_row(self, number: int, row: list[str]) -> None:
        cells = dict(zip(self.header, (cell.strip() for cell in row), strict=False))
        values = [cells.get(system, "") for system in self.systems]
        for system, value in zip(self.systems, values, strict=True):
            if value and _VALUE.fullmatch(value) is None:
                self.problem(number, f"{system} {value!r} is not a rating like 1650?")
        rating = counting_rating(values)
        name = cells.get("name", "")
        if not name:
            self.problem(number, "no name")
            return
        key = _key(name)
        if key in self.seen:
            self.problem(number, f"{name!r} is listed twice (also line {self.seen[key]})")
        self.seen[key] = number
        self.by_name[key] = rating
        fide_id = cells.get("fide_id", "")
        if fide_id.isdigit() and int(fide_id):
            self.by_id[int(fide_id)] = rating
        elif fide_id:
            self.problem(number, f"fide_id {fide_id!r} is not a number")

    def problem(self, number: int, message: str) -> None:
        self.problems.append(f"{self.source}:{number}: {message}")


def read_ratings(text: str, *, source: str, systems: Sequence[str]) -> Ratings:
    """The ratings of a CSV's text.

    Raises:
        RatingsFileError: a missing column, a value that is no rating, a player twice.
    """
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise RatingsFileError([f"{source}:1: empty: a header line is needed"])
    header = [cell.strip() for cell in rows[0]]
    problems = [
        f"{source}:1: no column {name!r} (the header names {', '.join(header)})"
        for name in ("name", *systems)
        if name not in header
    ]
    if problems:
        raise RatingsFileError(problems)
    reader = _Reader(source, header, systems, [], {}, {}, {})
    for number, row in enumerate(rows[1:], start=2):
        if any(cell.strip() for cell in row):
            reader.receive_row(number, row)
    if reader.problems:
        raise RatingsFileError(reader.problems)
    return Ratings(by_fide_id=reader.by_id, by_name=reader.by_name)


def load_ratings(path: Path | None, systems: Sequence[str]) -> Ratings | None:
    """The ratings of a CSV file (UTF-8, a byte order mark allowed); None without a path.

    Raises:
        RatingsFileError: the file cannot be read or used (one line per problem).
    """
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise RatingsFileError([f"{path}: cannot read the file: {exc}"]) from None
    return read_ratings(text, source=str(path), systems=systems)
