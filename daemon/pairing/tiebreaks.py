"""The tie-breaks a section's regulations name, by their FIDE codes (C.07), and their values.

A TRF names them in record ``202`` (the tie-breaks after the points) or ``212`` (the whole
ranking order, ``PTS`` included; TRF-2025 and later), codes separated by spaces or commas.
A modifier follows the code after ``/`` (the TRF's way, also ``#``) or ``-`` (the
regulations' way): ``BH/C1`` and ``BH-C1`` are both Buchholz Cut-1. dgtcast computes:

=========  ===============================================================  ============
code       what                                                             modifiers
=========  ===============================================================  ============
``BH``     Buchholz: the sum of the opponents' scores (article 16 for       C1 C2 M1 M2
           unplayed rounds: see :mod:`daemon.pairing.standings`)
``SB``     Sonneborn-Berger: each opponent's score times the points
           scored against them
``PS``     progressive scores: the sum of the player's score after each
           round
``WIN``    rounds that gave as many points as a win, played or not
``WON``    games won over the board
``BPG``    games played over the board with Black
``BWG``    games won over the board with Black
``ARO``    the average rating of the opponents played over the board,
           rounded half up (unrated opponents left out)
=========  ===============================================================  ============

``Cn`` cuts the n least significant contributions (a voluntarily unplayed round's first),
``Mn`` those and the n most significant (Median). Other codes (``DE``, ``TPR``, ...) are
not computed: :func:`read_tiebreaks` says so in one line each and leaves them out. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

__all__ = [
    "DEFAULT_TIEBREAKS",
    "SUPPORTED",
    "Contribution",
    "TieBreak",
    "average_rating",
    "cut",
    "parse_tiebreak",
    "read_tiebreaks",
    "record_codes",
]

#: Each computed code and the modifiers it takes.
SUPPORTED: dict[str, tuple[str, ...]] = {
    "BH": ("C1", "C2", "M1", "M2"),
    "SB": (),
    "PS": (),
    "WIN": (),
    "WON": (),
    "BPG": (),
    "BWG": (),
    "ARO": (),
}
_CODE = re.compile(r"([A-Z]{2,4})(?:[-/#]([CM][1-9]))?")
_ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class TieBreak:
    """One tie-break: a code of :data:`SUPPORTED` and its modifier (``""`` for none)."""

    name: str
    modifier: str = ""

    @property
    def code(self) -> str:
        """The code as the regulations write it: ``BH-C1``."""
        return f"{self.name}-{self.modifier}" if self.modifier else self.name

    @property
    def low_cut(self) -> int:
        """How many of the least significant contributions the modifier cuts."""
        return int(self.modifier[1]) if self.modifier else 0

    @property
    def high_cut(self) -> int:
        """How many of the most significant contributions the modifier cuts (Median)."""
        return int(self.modifier[1]) if self.modifier.startswith("M") else 0


#: When neither the TRF nor the configuration names any: Buchholz Cut-1, Buchholz, SB.
DEFAULT_TIEBREAKS = (TieBreak("BH", "C1"), TieBreak("BH"), TieBreak("SB"))


def parse_tiebreak(text: str) -> TieBreak:
    """One code (``BH-C1``, ``BH/C1``, ``bh#c1``, ``SB``).

    Raises:
        ValueError: a code dgtcast does not compute, in one line naming it.
    """
    match = _CODE.fullmatch(text.strip().upper())
    name = match.group(1) if match else ""
    if match is None or name not in SUPPORTED:
        known = " ".join(SUPPORTED)
        raise ValueError(f'tie-break "{text}" is not one dgtcast computes ({known})')
    modifier = match.group(2) or ""
    if modifier and modifier not in SUPPORTED[name]:
        allowed = ", ".join(SUPPORTED[name]) or "none"
        raise ValueError(f'tie-break "{text}": {name} takes no modifier {modifier} ({allowed})')
    return TieBreak(name, modifier)


def read_tiebreaks(codes: Iterable[str]) -> tuple[tuple[TieBreak, ...], list[str]]:
    """The tie-breaks of a list of codes, and one line per code left out.

    ``PTS`` (record 212 names the points too) is left out quietly: the points always
    rank first.
    """
    known: list[TieBreak] = []
    problems: list[str] = []
    for code in codes:
        if code.strip().upper() in ("PTS", ""):
            continue
        try:
            known.append(parse_tiebreak(code))
        except ValueError as exc:
            problems.append(str(exc))
    return tuple(known), problems


def record_codes(line: str) -> list[str]:
    """The codes of a ``202`` or ``212`` line: after the tag, split at spaces and commas."""
    return line[3:].replace(",", " ").split()


@dataclass(frozen=True, slots=True)
class Contribution:
    """One round's part of a Buchholz: the opponent's score (or the player's own) and
    whether the round was voluntarily unplayed."""

    value: Decimal
    voluntary: bool


def cut(contributions: Sequence[Contribution], low: int, high: int) -> Decimal:
    """The sum without the ``low`` least significant contributions (voluntarily unplayed
    rounds first, the lowest of them first, then the lowest others) and the ``high``
    highest of the rest."""
    order = sorted(contributions, key=lambda c: (not c.voluntary, c.value))
    kept = sorted(c.value for c in order[low:])
    if high:
        kept = kept[:-high]
    return sum(kept, _ZERO)


def average_rating(ratings: Sequence[int]) -> Decimal:
    """ARO: the average, rounded half up to a whole number; 0 without any."""
    if not ratings:
        return _ZERO
    return (Decimal(sum(ratings)) / len(ratings)).quantize(Decimal(1), rounding=ROUND_HALF_UP)
