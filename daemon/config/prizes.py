"""``[prizes]`` / ``[sections.prizes]``: a section's prize groups and how they are settled.

docs/prizes.md, "How the prizes are settled", describes the rules; here are the keys::

    [prizes]
    countback = ["PS", "BH", "SB"]     # trophies and titles: FIDE tie-break codes
    one_cash_prize = true              # §6's default
    groups_after = 2                   # rating groups formed after round 2 ...
    rating_groups = 9                  # ... this many of them (the rule divides by 9)
    ratings = "ratings.csv"            # the ratings that count; default: the TRF's
    rating_systems = ["ACF", "FIDE", "ACF Rapid"]

    [[prizes.groups]]                  # in the regulation's order: major list first
    name = "Open"
    places = [500, 350, 300, 225]

    [[prizes.groups]]
    name = "U1800-1600"
    rating = "1600-1799"               # or "U1600", "1800+"; unrated: not eligible
    places = [200, 130]

    [[prizes.groups]]
    name = "Girls Under 18"
    born_from = 2008-01-01
    girls = true
    places = [{ amount = 100, trophy = "trophy" }, "trophy"]

The tables check one key each (pydantic, one line per problem through
:mod:`daemon.config.errors`); :func:`prize_rules` checks across keys and builds the
:class:`~daemon.prizes.rules.PrizeRules`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, PlainValidator

from daemon.config.errors import shown
from daemon.pairing.tiebreaks import parse_tiebreak
from daemon.prizes.groups import DEFAULT_GROUPS
from daemon.prizes.lists import Prize, PrizeGroup
from daemon.prizes.rules import PrizeRules

__all__ = ["PrizeGroupTable", "PrizesTable", "parse_band", "prize_rules"]

_BAND = re.compile(r"(?:(\d{1,4})-(\d{1,4})|U(\d{1,4})(?:-(\d{1,4}))?|(\d{1,4})\+)")
_TROPHY_HELP = 'an amount (500, 120.50), a trophy ("trophy") or { amount = 120, trophy = "medal" }'


def parse_band(text: str) -> tuple[int | None, int | None]:
    """A rating band as prize lists write it, bounds inclusive.

    ``"1600-1799"``; ``"U1600"`` (under 1600: at most 1599); ``"U1800-1600"`` (under
    1800, at least 1600); ``"1800+"`` (at least 1800).

    Raises:
        ValueError: not a band.
    """
    match = _BAND.fullmatch(text.strip().upper())
    if match is None:
        raise ValueError(
            f'must be a rating band like "1600-1799", "U1600" or "1800+", got "{text}"'
        )
    low, high, under, floor, least = match.groups()
    if low is not None:
        return int(low), int(high)
    if under is not None:
        return (int(floor) if floor else None), int(under) - 1
    return int(least), None


def _amount(value: object) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"must be {_TROPHY_HELP}, got {shown(value)}")
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"must be an amount like 120.50, got {shown(value)}") from None
    if not amount.is_finite() or amount < 0 or amount != amount.quantize(Decimal("0.01")):
        raise ValueError(f"must be an amount of at least 0, in cents at most, got {shown(value)}")
    return amount


def _prize(value: object) -> Prize:
    if isinstance(value, str) and not value.replace(".", "").isdigit():
        if not value.strip():
            raise ValueError("a trophy must have a name")
        return Prize(trophy=value)
    if isinstance(value, dict):
        unknown = set(value) - {"amount", "trophy"}
        if unknown:
            raise ValueError(f"unknown key {sorted(unknown)[0]!r}: a place has amount and trophy")
        trophy = value.get("trophy", "")
        if not isinstance(trophy, str):
            raise ValueError(f"trophy must be text in quotes, got {shown(trophy)}")
        amount = _amount(value.get("amount", 0))
    else:
        amount, trophy = _amount(value), ""
    if not amount and not trophy:
        raise ValueError("a place needs an amount above 0 or a trophy")
    return Prize(amount=amount, trophy=trophy)


def _places(value: object) -> tuple[Prize, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"must be an array of places (1st first), each {_TROPHY_HELP}")
    problems = []
    places = []
    for number, item in enumerate(value, start=1):
        try:
            places.append(_prize(item))
        except ValueError as exc:
            problems.append(f"place {number}: {exc}")
    if problems:
        raise ValueError("; ".join(problems))
    return tuple(places)


def _band(value: object) -> tuple[int | None, int | None]:
    if not isinstance(value, str):
        raise ValueError(f'must be a rating band in quotes like "1600-1799", got {shown(value)}')
    low, high = parse_band(value)
    if low is not None and high is not None and low > high:
        raise ValueError(f'rating band "{value}" holds no rating')
    return low, high


def _date(value: object) -> dt.date:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError(f"must be a date like 2008-01-01, got {shown(value)}")


def _code(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f'must be a tie-break code like "PS", got {shown(value)}')
    parse_tiebreak(value)  # ValueError: one line naming the code
    return value.strip().upper()


def _path(value: object) -> Path:
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be a file path in quotes, got {shown(value)}")
    return Path(value)


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class PrizeGroupTable(_Table):
    """One ``[[prizes.groups]]`` table."""

    name: Annotated[str, Field(min_length=1, max_length=100)]
    places: Annotated[tuple[Prize, ...], PlainValidator(_places)]
    rating: Annotated[tuple[int | None, int | None], PlainValidator(_band)] | None = None
    rating_group: Annotated[int, Field(ge=1, le=99)] | None = None
    born_from: Annotated[dt.date, PlainValidator(_date)] | None = None
    girls: bool = False


class PrizesTable(_Table):
    """``[prizes]`` or ``[sections.prizes]`` as written."""

    groups: list[PrizeGroupTable] = Field(min_length=1)
    countback: list[Annotated[str, PlainValidator(_code)]] = Field(
        default_factory=lambda: ["PS", "BH", "SB"]
    )
    one_cash_prize: bool = True
    groups_after: Annotated[int, Field(ge=1, le=999)] | None = None
    rating_groups: Annotated[int, Field(ge=2, le=99)] = DEFAULT_GROUPS
    ratings: Annotated[Path, PlainValidator(_path)] | None = None
    rating_systems: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)


def _group(
    table: PrizeGroupTable, where: str, rules: PrizesTable, problems: list[str]
) -> PrizeGroup:
    low, high = table.rating or (None, None)
    if table.rating is not None and table.rating_group is not None:
        problems.append(f"{where}: give rating or rating_group, not both")
    if table.rating_group is not None:
        if rules.groups_after is None:
            problems.append(
                f"{where}.rating_group: needs groups_after (the round the groups are formed after)"
            )
        elif table.rating_group >= rules.rating_groups:
            problems.append(
                f"{where}.rating_group: group {table.rating_group} is not eligible: groups run from"
                f" 1 (the lowest) to {rules.rating_groups} (the highest, not eligible for"
                " rating-group prizes)"
            )
    return PrizeGroup(
        name=table.name,
        places=table.places,
        rating_min=low,
        rating_max=high,
        rating_group=table.rating_group,
        born_from=table.born_from,
        girls=table.girls,
    )


def prize_rules(
    table: PrizesTable, where: str, resolve: Callable[[Path], Path], problems: list[str]
) -> PrizeRules:
    """The section's :class:`PrizeRules`; cross-key problems appended to ``problems``.

    Args:
        table: as validated.
        where: the table's key path (``prizes``, ``sections[2].prizes``).
        resolve: a relative path made absolute (from the configuration's folder).
        problems: where each problem goes, as ``key.path: why``.
    """
    seen: dict[str, int] = {}
    groups = []
    for number, group in enumerate(table.groups, start=1):
        here = f"{where}.groups[{number}]"
        if group.name in seen:
            problems.append(f'{here}.name: "{group.name}" is also groups[{seen[group.name]}]')
        seen.setdefault(group.name, number)
        groups.append(_group(group, here, table, problems))
    ratings = None if table.ratings is None else resolve(table.ratings)
    if ratings is not None and not ratings.is_file():
        problems.append(f'{where}.ratings: no such file "{ratings}"')
    if ratings is not None and not table.rating_systems:
        problems.append(
            f"{where}.rating_systems: required with ratings (the CSV's columns, highest first)"
        )
    if table.groups_after is not None and not any(g.rating_group for g in table.groups):
        problems.append(f"{where}.groups_after: no group names a rating_group")
    return PrizeRules(
        groups=tuple(groups),
        countback=tuple(table.countback),
        one_cash_prize=table.one_cash_prize,
        rating_groups=table.rating_groups,
        groups_after=table.groups_after,
        ratings=ratings,
        rating_systems=tuple(table.rating_systems),
    )
