"""A player's round in a TRF file, and the points it is worth (docs/pairing.md, "Points").

A round is three fields of the ``001`` line: the opponent's starting rank (``0000`` for
none), the scheduled colour (``w``, ``b``, ``-``) and the result code:

=========  =========================================================  ==============
code       meaning                                                    points (XXS)
=========  =========================================================  ==============
``1 = 0``  win, draw, loss                                            WW/BW, WD/BD, WL/BL
``W D L``  win, draw, loss in a game that lasted less than one move   as ``1 = 0``
``+ -``    forfeit win, forfeit loss (double forfeit: ``-`` / ``-``)  FW, FL
``H F``    half-point bye, full-point bye                             HPB, FPB
``U``      pairing-allocated bye                                      PAB
``Z``      zero-point bye (known absence); a blank result is a ``Z``  ZPB
=========  =========================================================  ==============

Letter codes are case-insensitive. Older TRF(x) files write the pairing-allocated bye
as ``0000 - +`` and an absence as ``0000 - -``; they are scored as ``U`` and ``Z``.

The scoring defaults to FIDE's (Laws 10.1: 1, ½, 0; byes and forfeits as JaVaFo's
defaults). ``XXS CODE=VALUE ...`` (TRF(x), JaVaFo) and tag ``162`` (TRF-2026) change it;
lines apply in file order, later values win, exactly as the pairing engines read them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from types import MappingProxyType

__all__ = [
    "BYE_CODES",
    "FORFEIT_CODES",
    "GAME_CODES",
    "RESULT_CODES",
    "SCORING_CODES",
    "RoundEntry",
    "Scoring",
    "ScoringError",
    "format_points",
    "parse_points",
]

#: Results of a game that was played: win, draw, loss (rated; then lasting < 1 move).
GAME_CODES = frozenset("1=0WDL")
#: Results of a scheduled game that was not played.
FORFEIT_CODES = frozenset("+-")
#: Results of a round without an opponent (``0000 - X``).
BYE_CODES = frozenset("HFUZ")
#: Every result code (upper case); a blank result is a ``Z`` (or a game still to play).
RESULT_CODES = GAME_CODES | FORFEIT_CODES | BYE_CODES

#: XXS codes and their FIDE values.
_FIDE = {
    "WW": "1",
    "BW": "1",
    "WD": "0.5",
    "BD": "0.5",
    "WL": "0",
    "BL": "0",
    "ZPB": "0",
    "HPB": "0.5",
    "FPB": "1",
    "PAB": "1",
    "FW": "1",
    "FL": "0",
}
SCORING_CODES = frozenset(_FIDE)
#: XXS shortcuts (JaVaFo): W sets every win, D every draw.
_XXS_SHORTCUTS = {"W": ("WW", "BW", "FW", "FPB"), "D": ("WD", "BD", "HPB")}
#: Tag 162 codes (TRF-2026) and the XXS codes each sets; P is handled apart.
_TAG_162 = {
    "W": ("WW", "BW", "FW", "FPB"),
    "D": ("WD", "BD", "HPB"),
    "L": ("WL", "BL"),
    "A": ("ZPB", "FL"),
    "P": ("PAB",),
    "X": (),  # unknown result (adjourned): never written by dgtcast
}
_POINTS_FORMAT = "{:4.1f}"


class ScoringError(ValueError):
    """A scoring value or code that cannot be read; ``column`` is 1-based in its line."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.column = column


def parse_points(text: str) -> Decimal:
    """Points as written in a TRF (``3.5``, ``.5``, ``10``).

    Raises:
        ValueError: not a number of points.
    """
    stripped = text.strip()
    try:
        value = Decimal(stripped)
    except InvalidOperation:
        raise ValueError(f'"{text}" is not a number of points') from None
    if not stripped or not value.is_finite() or value < 0 or "e" in stripped.lower():
        raise ValueError(f'"{text}" is not a number of points')
    return value


def format_points(points: Decimal) -> str:
    """The points column (81-84): ``11.5`` format, right-aligned.

    Raises:
        ValueError: points that do not fit four columns.
    """
    text = _POINTS_FORMAT.format(points)
    if len(text) > 4 or Decimal(text) != points:
        raise ValueError(f"{points} points do not fit the points column (format 11.5)")
    return text


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundEntry:
    """One round of a player: opponent, scheduled colour and result code.

    Attributes:
        opponent: the opponent's starting rank; 0 for none (a bye, an absence).
        colour: ``"w"``, ``"b"`` or ``"-"`` (no game).
        code: the result code as written (case kept); ``" "`` for a blank result,
            which is a ``Z`` without an opponent and a game still to play with one.
    """

    opponent: int
    colour: str
    code: str

    def __post_init__(self) -> None:
        if not 0 <= self.opponent <= 9999:
            raise ValueError(f"opponent must be a starting rank 1-9999 or 0, got {self.opponent}")
        if self.colour not in ("w", "b", "-"):
            raise ValueError(f"colour must be w, b or -, got {self.colour!r}")
        if len(self.code) != 1 or (self.code != " " and self.code.upper() not in RESULT_CODES):
            raise ValueError(f"unknown result code {self.code!r}")

    @property
    def result(self) -> str:
        """The result code in upper case (``" "`` when blank)."""
        return self.code.upper()

    @property
    def is_pending(self) -> bool:
        """A scheduled game without a result yet (opponent given, result blank)."""
        return self.opponent != 0 and self.code == " "

    def render(self) -> str:
        """The eight columns as written: ``"  12 w 1"``, ``"0000 - U"``."""
        opponent = "0000" if self.opponent == 0 else f"{self.opponent:>4}"
        return f"{opponent} {self.colour} {self.code}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Scoring:
    """Points per result (XXS codes WW BW WD BD WL BL ZPB HPB FPB PAB FW FL).

    Build it with :meth:`fide` and :meth:`receive_xxs` / :meth:`receive_tag_162`.
    """

    values: Mapping[str, Decimal] = field(
        default_factory=lambda: MappingProxyType({k: Decimal(v) for k, v in _FIDE.items()})
    )

    @classmethod
    def fide(cls) -> Scoring:
        """FIDE Laws 10.1: win 1, draw ½, loss 0; byes and forfeits as JaVaFo's defaults."""
        return cls()

    @property
    def is_fide(self) -> bool:
        """True when every value is FIDE's."""
        return all(self.values[k] == Decimal(v) for k, v in _FIDE.items())

    def describe(self) -> str:
        """``FIDE 1/½/0``, or the values that differ, for messages."""
        if self.is_fide:
            return "FIDE 1/½/0"
        changed = [f"{k}={v}" for k, v in self.values.items() if v != Decimal(_FIDE[k])]
        return "XXS " + " ".join(changed)

    def points_for(self, entry: RoundEntry | None) -> Decimal:
        """What one round is worth; a blank round and a game still to play are worth 0."""
        if entry is None or entry.is_pending:
            return Decimal(0)
        return self.values[_xxs_code(entry)]

    def total(self, entries: Iterable[RoundEntry | None]) -> Decimal:
        """The points of several rounds."""
        return sum((self.points_for(entry) for entry in entries), Decimal(0))

    def receive_xxs(self, line: str) -> Scoring:
        """Apply an ``XXS`` line: ``CODE=VALUE`` tokens after the tag, left to right.

        Raises:
            ScoringError: an unknown code or a bad value, with its column.
        """
        values = dict(self.values)
        for column, token in _tokens(line[3:], 4):
            code, _, value = token.partition("=")
            targets = _XXS_SHORTCUTS.get(code, (code,) if code in SCORING_CODES else None)
            if targets is None or not value:
                known = " ".join([*_FIDE, *_XXS_SHORTCUTS])
                raise ScoringError(
                    f'XXS: "{token}" is not CODE=VALUE with a code of {known}', column
                )
            points = _value(value, column + len(code) + 1, f"XXS {code}: ")
            values.update(dict.fromkeys(targets, points))
        return Scoring(values=MappingProxyType(values))

    def receive_tag_162(self, line: str) -> Scoring:
        """Apply a TRF-2026 ``162`` line: a code at column 6, 15, 24, ... and its points.

        Raises:
            ScoringError: an unknown code or a bad value, with its column.
        """
        values = dict(self.values)
        pab_given = False
        for start in range(5, len(line.rstrip()), 9):
            code = line[start]
            if code not in _TAG_162:
                raise ScoringError(f'162: "{code}" is not one of W D L A P X', start + 1)
            points = _value(line[start + 1 : start + 5], start + 2, f"162 {code}: ")
            values.update(dict.fromkeys(_TAG_162[code], points))
            if code == "P":
                pab_given = True
            elif code == "W" and not pab_given:
                values["PAB"] = points  # P defaults to W (TRF-2026)
        return Scoring(values=MappingProxyType(values))


def _xxs_code(entry: RoundEntry) -> str:
    result = entry.result
    if result in GAME_CODES:
        kind = "W" if result in "1W" else "D" if result in "=D" else "L"
        return ("W" if entry.colour == "w" else "B") + kind
    if result in FORFEIT_CODES:
        if entry.opponent == 0:  # older TRF(x): 0000 - + is the PAB, 0000 - - an absence
            return "PAB" if result == "+" else "ZPB"
        return "FW" if result == "+" else "FL"
    return {"H": "HPB", "F": "FPB", "U": "PAB"}.get(result, "ZPB")


def _tokens(text: str, offset: int) -> list[tuple[int, str]]:
    """Whitespace-separated tokens with their 1-based columns."""
    tokens = []
    column = offset
    for part in text.replace("\t", " ").split(" "):
        if part:
            tokens.append((column, part))
        column += len(part) + 1
    return tokens


def _value(text: str, column: int, what: str) -> Decimal:
    try:
        return parse_points(text)
    except ValueError as exc:
        raise ScoringError(what + str(exc), column) from None
