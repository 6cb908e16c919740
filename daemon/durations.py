"""The two time syntaxes of the configuration: durations and PGN time controls.

* A duration is hours, minutes and seconds written together: ``45s``, ``30m``, ``1h30m``,
  ``0s`` (the default time of FIDE Laws 6.7 may be zero).
* A time control uses the PGN ``TimeControl`` tag syntax (PGN standard §9.6.1) for the
  controls a tournament clock runs: ``5400+30`` (sudden death with an increment),
  ``5400`` (no increment), ``40/5400+30:1800+30`` (periods, each ``moves/seconds``, the
  last one for the rest of the game). The unknown (``?``), untimed (``-``) and sandclock
  (``*180``) forms describe no clock dgtcast can check, so they are refused.

Both parsers raise :class:`ValueError` with a message that names the text and the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Period", "TimeControl", "format_duration", "parse_duration"]

_DURATION = re.compile(r"(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?")
_PERIOD = re.compile(r"(?:(?P<moves>\d+)/)?(?P<seconds>\d+)(?:\+(?P<increment>\d+))?")


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
        seconds: time each player gets for the period.
        increment: seconds added after each move of the period (Fischer, "from move 1").
    """

    moves: int | None
    seconds: int
    increment: int = 0

    def __post_init__(self) -> None:
        if self.moves is not None and self.moves < 1:
            raise ValueError("a period needs at least one move")
        if self.seconds < 1:
            raise ValueError("a period needs at least one second")
        if self.increment < 0:
            raise ValueError("an increment cannot be negative")

    def __str__(self) -> str:
        text = str(self.seconds) if self.moves is None else f"{self.moves}/{self.seconds}"
        return f"{text}+{self.increment}" if self.increment else text


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
                raise ValueError(
                    f'invalid time control "{text}": write seconds+increment like "5400+30",'
                    ' or periods like "40/5400+30:1800+30"'
                )
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

    @property
    def base(self) -> int:
        """Seconds of the first period: what each clock is set to before the game."""
        return self.periods[0].seconds

    @property
    def increment(self) -> int:
        """Increment of the first period, in seconds."""
        return self.periods[0].increment

    @property
    def start_readings(self) -> frozenset[int]:
        """Times a correctly set clock may show before the first move.

        DGT clocks add the first increment before move 1, so a Fischer clock shows
        base + increment (dgt-protocol.md §7.2, "Observed in the real recordings").
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
