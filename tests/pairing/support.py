"""Helpers for the pairing tests: the example files, and TRF lines built column by column."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.shared_data import ROOT

__all__ = [
    "EXAMPLE_PAIRINGS",
    "EXAMPLE_TRF",
    "block",
    "column",
    "copy_example",
    "pairings_text",
    "player_line",
    "starting_line",
    "trf_text",
    "write_pairings",
]

EXAMPLE_TRF = ROOT / "config" / "tournament-example.trf"
EXAMPLE_PAIRINGS = ROOT / "config" / "round4-pairings.txt"


def copy_example(folder: Path) -> tuple[Path, Path]:
    """The example TRF and round-4 pairings, copied into ``folder``."""
    trf = folder / "tournament.trf"
    pairings = folder / "round4.txt"
    shutil.copyfile(EXAMPLE_TRF, trf)
    shutil.copyfile(EXAMPLE_PAIRINGS, pairings)
    return trf, pairings


def player_line(
    rank: int,
    name: str,
    points: str,
    rounds: tuple[str, ...] = (),
    *,
    rating: int | None = None,
    title: str = "",
    sex: str = "m",
    federation: str = "AUS",
    fide_id: int | None = None,
    birth: str = "",
    place: int | None = None,
) -> str:
    """A ``001`` line; each round is its eight columns, e.g. ``"   3 w 1"``."""
    line = (
        f"001 {rank:>4} {sex}{title:>3} {name:<33} {rating or '':>4} {federation:<3}"
        f" {fide_id or '':>11} {birth:<10} {points:>4} {place or '':>4}"
    )
    assert len(line) == 89
    return line + "".join(f"  {r}" for r in rounds)


def starting_line(rank: int, name: str, fide_base: int) -> str:
    """A player's ``001`` line before round 1: rated ``2000 - rank``, FIDE ID
    ``fide_base + rank``, born 2000/01/01, no points, placed at the starting rank."""
    rating, fide_id = 2000 - rank, fide_base + rank
    return player_line(
        rank, name, "0.0", rating=rating, fide_id=fide_id, birth="2000/01/01", place=rank
    )


def trf_text(*lines: str, ending: str = "\r\n") -> str:
    """A file: the lines, each ended by ``ending``."""
    return "".join(line + ending for line in lines)


def pairings_text(pairs: Sequence[tuple[int, int]]) -> str:
    """The pairing program's output for a round: how many pairs, then each pair's white
    and black by starting rank (0: a bye)."""
    return f"{len(pairs)}\n" + "".join(f"{white} {black}\n" for white, black in pairs)


def write_pairings(
    folder: Path, stem: str, rounds: Mapping[int, Sequence[tuple[int, int]]]
) -> None:
    """``folder/STEM-rN.txt`` for each round N, as ``pairings = "STEM-r{round}.txt"`` reads."""
    for number, pairs in rounds.items():
        (folder / f"{stem}-r{number}.txt").write_text(pairings_text(pairs))


def block(line: str, round_number: int) -> str:
    """A round's eight columns of a ``001`` line: opponent, colour, result."""
    start = 91 + 10 * (round_number - 1)
    return line[start : start + 8].ljust(8)


def column(line: str, first: int, last: int) -> str:
    """Columns ``first`` to ``last`` (1-based, inclusive) of a line."""
    return line[first - 1 : last]
