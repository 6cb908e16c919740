"""The two time syntaxes of the configuration: durations and PGN time controls.

* A duration is hours, minutes and seconds written together: ``45s``, ``30m``, ``1h30m``,
  ``0s`` (the default time of FIDE Laws 6.7 may be zero).
* A time control is written in the PGN ``TimeControl`` tag syntax (PGN standard §9.6.1):
  ``5400+30`` (sudden death with an increment), ``5400`` (no increment),
  ``40/5400+30:1800+30`` (periods, each ``moves/seconds``, the last one for the rest of
  the game), ``60/300:0+2`` (an increment only from move 61); or in a readable form:
  ``90m + 30s``, ``40 moves in 90m + 30s, then 30m + 30s``, ``40 moves in 2h, then 1h``,
  ``5m, +2s from move 61``. The unknown (``?``), untimed (``-``) and sandclock
  (``*180``) forms describe no clock dgtcast can check, so they are refused.
* :class:`ClockRules` are a game's controls per colour (time odds, Armageddon) and the
  draw odds.

Both parsers raise :class:`ValueError` with a message that names the text and the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ClockRules", "Period", "TimeControl", "format_duration", "parse_duration"]

_DURATION = re.compile(r"(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?")
_PERIOD = re.compile(r"(?:(?P<moves>\d+)/)?(?P<seconds>\d+)(?:\+(?P<increment>\d+))?")
_UNIT = r"(?:\d+[hms])+"
_READABLE_PERIOD = re.compile(
    rf"(?:(?P<moves>\d+)\s*moves?\s+in\s+)?(?P<time>{_UNIT})(?:\s*\+\s*(?P<increment>{_UNIT}))?"
)
_FROM_MOVE = re.compile(rf"\+\s*(?P<increment>{_UNIT})\s+from\s+move\s+(?P<move>\d+)")
_HINT = 'write it like "5400+30", "40/5400+30:1800+30" or "40 moves in 90m + 30s, then 30m + 30s"'


def parse_duration(text: str) -> int:
    """Parse ``45s``, ``30m``, ``1h30m`` or ``0s`` into whole seconds.

    Raises:
        ValueError: the text is not hours, minutes and seconds in that order.
    """
    match = _DURATION.fullmatch(text)
    if not text or match is None:
        raise ValueError(f'invalid duration "{text}": write it like "45s", "30m" or "1h30m"')
    hours, minutes, seconds = (int(match.group(k) or 0) for k in "hms")
    return hours * 3600 + minutes * 60 + seconds


def format_duration(seconds: float) -> str:
    """Write whole seconds back in the duration syntax (``5400`` → ``1h30m``)."""
    whole = round(seconds)
    if whole < 0:
        raise ValueError("a duration cannot be negative")
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{v}{unit}" for v, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if v]
    return "".join(parts) or "0s"


@dataclass(frozen=True, slots=True, kw_only=True)
class Period:
    """One period of a time control.

    Attributes:
        moves: moves each player must make in the period; None for the rest of the game.
        seconds: time each player gets for the period (0 for a later period that only
            brings an increment).
        increment: seconds added after each move of the period (Fischer, "from move 1").
    """

    moves: int | None
    seconds: int
    increment: int = 0

    def __post_init__(self) -> None:
        if self.moves is not None and self.moves < 1:
            raise ValueError("a period needs at least one move")
        if self.seconds < 0:
            raise ValueError("a period cannot have negative time")
        if self.increment < 0:
            raise ValueError("an increment cannot be negative")

    def __str__(self) -> str:
        text = str(self.seconds) if self.moves is None else f"{self.moves}/{self.seconds}"
        return f"{text}+{self.increment}" if self.increment else text

    def spoken(self) -> str:
        """``40 moves in 1h30m + 30s``, ``30m``: the readable form of the period."""
        text = format_duration(self.seconds)
        if self.moves is not None:
            text = f"{self.moves} moves in {text}"
        return f"{text} + {format_duration(self.increment)}" if self.increment else text


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeControl:
    """A tournament time control: one or more periods, as in the PGN ``TimeControl`` tag.

    When the last period has a move count it repeats (PGN standard §9.6.1).
    """

    periods: tuple[Period, ...]

    def __post_init__(self) -> None:
        if not self.periods:
            raise ValueError("a time control needs a period")
        if any(p.moves is None for p in self.periods[:-1]):
            raise ValueError("only the last period may be for the rest of the game")
        if self.periods[0].seconds < 1:
            raise ValueError("the first period needs at least one second")
        if self.periods[0].seconds + self.periods[0].increment > _CLOCK_MAX:
            raise ValueError("a DGT clock shows at most 9:59:59")

    @classmethod
    def from_text(cls, text: str) -> TimeControl:
        """Parse either the PGN syntax or the readable one (see the module docstring).

        Raises:
            ValueError: one line naming the text and how to write it.
        """
        if re.fullmatch(r"[\d/+:]+", text.strip()):
            return cls.from_pgn(text.strip())
        return cls.from_readable(text)

    @classmethod
    def from_readable(cls, text: str) -> TimeControl:
        """Parse ``40 moves in 90m + 30s, then 30m + 30s`` or ``5m, +2s from move 61``.

        Periods are separated by commas (``then`` after the comma is optional); times
        are durations (``90m``, ``1h30m``, ``30s``); a last ``+2s from move 61`` turns the
        period before it into the first 60 moves and adds the increment from move 61.

        Raises:
            ValueError: one line naming the text and how to write it.
        """
        periods: list[Period] = []
        parts = [re.sub(r"^then\s+", "", p.strip().lower()) for p in text.split(",")]
        try:
            for index, part in enumerate(parts):
                late = _FROM_MOVE.fullmatch(part)
                if late is not None and index == len(parts) - 1 and index > 0:
                    periods = _increment_from(periods, late["increment"], int(late["move"]))
                    continue
                match = _READABLE_PERIOD.fullmatch(part)
                if match is None:
                    raise ValueError(_HINT if len(parts) == 1 else f'"{part}" is not a period')
                periods.append(
                    Period(
                        moves=None if match["moves"] is None else int(match["moves"]),
                        seconds=parse_duration(match["time"]),
                        increment=parse_duration(match["increment"] or "0s"),
                    )
                )
            return cls(periods=tuple(periods))
        except ValueError as exc:
            raise ValueError(f'invalid time control "{text}": {exc}') from None

    @classmethod
    def from_pgn(cls, text: str) -> TimeControl:
        """Parse PGN ``TimeControl`` syntax: ``5400+30``, ``5400``, ``40/5400+30:1800+30``.

        Raises:
            ValueError: the text is not a clock time control.
        """
        periods = []
        for part in text.split(":"):
            match = _PERIOD.fullmatch(part)
            if match is None:
                raise ValueError(f'invalid time control "{text}": {_HINT}')
            moves, seconds, increment = match.group("moves", "seconds", "increment")
            try:
                period = Period(
                    moves=None if moves is None else int(moves),
                    seconds=int(seconds),
                    increment=int(increment or 0),
                )
            except ValueError as exc:
                raise ValueError(f'invalid time control "{text}": {exc}') from None
            periods.append(period)
        try:
            return cls(periods=tuple(periods))
        except ValueError as exc:
            raise ValueError(f'invalid time control "{text}": {exc}') from None

    def __str__(self) -> str:
        return ":".join(str(p) for p in self.periods)

    def spoken(self) -> str:
        """The readable form: ``40 moves in 1h30m + 30s, then 30m + 30s``."""
        periods = self.periods
        last = periods[-1]
        if len(periods) >= 2 and last.seconds == 0 and last.moves is None:
            before = ", then ".join(p.spoken() for p in periods[:-1])
            if len(periods) == 2 and periods[0].increment == 0 and periods[0].moves:
                before = format_duration(periods[0].seconds)
            moves = sum(p.moves or 0 for p in periods[:-1])
            return f"{before}, +{format_duration(last.increment)} from move {moves + 1}"
        return ", then ".join(p.spoken() for p in periods)

    @property
    def base(self) -> int:
        """Seconds of the first period: what each clock is set to before the game."""
        return self.periods[0].seconds

    @property
    def increment(self) -> int:
        """Increment of the first period, in seconds."""
        return self.periods[0].increment

    @property
    def start_seconds(self) -> int:
        """What a clock shows before the first move: base plus the first increment (§7.2)."""
        return self.base + self.increment

    @property
    def start_readings(self) -> frozenset[int]:
        """Times a correctly set clock may show before the first move.

        DGT clocks add the first increment before move 1, so a Fischer clock shows
        base + increment (docs/protocol.md §7.2, "Observed in the real recordings").
        """
        return frozenset({self.base, self.base + self.increment})

    def added_after(self, move_number: int) -> int:
        """Seconds a player's clock gains when they complete their ``move_number``-th move.

        That is the period's increment, plus the next period's time when the move
        completes a period's move quota.
        """
        if move_number < 1:
            raise ValueError("move numbers start at 1")
        start = 0
        index = 0
        while True:
            period = self.periods[index]
            if period.moves is None or move_number <= start + period.moves:
                break
            start += period.moves
            index = min(index + 1, len(self.periods) - 1)
        added = period.increment
        if period.moves is not None and move_number == start + period.moves:
            added += self.periods[min(index + 1, len(self.periods) - 1)].seconds
        return added


#: The longest time a DGT clock displays (one hours digit, docs/protocol.md §7.2).
_CLOCK_MAX = 9 * 3600 + 59 * 60 + 59


def _increment_from(periods: list[Period], increment: str, move: int) -> list[Period]:
    """``5m, +2s from move 61``: the single period before becomes the first 60 moves."""
    if len(periods) != 1 or periods[0].moves is not None or periods[0].increment:
        raise ValueError('"+Ns from move M" follows one period without increment, like "5m"')
    if move < 2:
        raise ValueError("an increment from move 1 is written as the period's own, like 5m + 2s")
    first = Period(moves=move - 1, seconds=periods[0].seconds)
    return [first, Period(moves=None, seconds=0, increment=parse_duration(increment))]


_COLORS = ("white", "black")


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockRules:
    """The time controls of one game, per colour, and who has draw odds.

    Attributes:
        white / black: each colour's control; they differ under time odds (Armageddon:
            White 5 min, Black 4 min).
        draw_odds: ``"black"`` (or ``"white"``) when a drawn game counts as that
            colour's win (Armageddon); the game's result itself stays a draw.
    """

    white: TimeControl
    black: TimeControl
    draw_odds: str | None = None

    def __post_init__(self) -> None:
        if self.draw_odds is not None and self.draw_odds not in _COLORS:
            raise ValueError('draw odds are "white" or "black"')

    @classmethod
    def uniform(cls, control: TimeControl) -> ClockRules:
        """The same control for both colours, no draw odds."""
        return cls(white=control, black=control)

    def of(self, color: str) -> TimeControl:
        """The control of ``"white"`` or ``"black"``."""
        if color not in _COLORS:
            raise ValueError(f"no colour {color!r}")
        return self.white if color == "white" else self.black

    @property
    def has_time_odds(self) -> bool:
        """The colours play under different controls."""
        return self.white != self.black

    def tags(self) -> dict[str, str]:
        """PGN tags: ``TimeControl`` (White's under time odds, whose PGN tag is one for both),
        then ``WhiteTimeControl``/``BlackTimeControl`` when they differ, and ``DrawOdds``."""
        tags = {"TimeControl": str(self.white)}
        if self.has_time_odds:
            tags["WhiteTimeControl"] = str(self.white)
            tags["BlackTimeControl"] = str(self.black)
        if self.draw_odds is not None:
            tags["DrawOdds"] = self.draw_odds.capitalize()
        return tags
