"""Rating groups formed after a round by the regulation's rule, and TRF birth dates.

docs/prizes.md, "Rating groups formed after round N": the number of rated
players divided by the number of groups (9) and rounded down is the minimum size of each
group; starting with the lowest-rated group and going up, groups are increased by one
player until every rated player is placed. Players with identical ratings split across
two adjacent groups all go into the lower group, with no further adjustment (the upper
group is left smaller). The highest-rated group is not eligible for rating-group prizes:
a :class:`~daemon.prizes.lists.PrizeGroup` names group 1 (the lowest) to ``count - 1``.
Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date

__all__ = ["DEFAULT_GROUPS", "birth_date", "group_sizes", "rating_groups"]

#: How many groups the Victorian open's rule forms ("divided by 9").
DEFAULT_GROUPS = 9

_BIRTH = re.compile(r"(\d{4})(?:[/.-](\d{1,2})(?:[/.-](\d{1,2}))?)?")


def group_sizes(rated: int, count: int = DEFAULT_GROUPS) -> list[int]:
    """Each group's size before ties in rating move anyone, lowest group first.

    >>> group_sizes(20)
    [3, 3, 2, 2, 2, 2, 2, 2, 2]
    """
    if count < 1:
        raise ValueError(f"{count} rating groups")
    minimum, extra = divmod(rated, count)
    return [minimum + (1 if index < extra else 0) for index in range(count)]


def rating_groups(ratings: Mapping[int, int | None], count: int = DEFAULT_GROUPS) -> dict[int, int]:
    """Each rated player's group: 1 is the lowest-rated, ``count`` the highest.

    Args:
        ratings: the rating that counts for each player (starting rank → rating, None:
            unrated; unrated players are in no group).
        count: how many groups.

    Returns:
        starting rank → group, for the rated players only.
    """
    rated = sorted((rating, rank) for rank, rating in ratings.items() if rating is not None)
    groups: dict[int, int] = {}
    start = 0
    nominal_end = 0
    for group, size in enumerate(group_sizes(len(rated), count), start=1):
        nominal_end += size
        end = max(start, nominal_end)
        # Identical ratings split across this group and the next stay in this one.
        while 0 < end < len(rated) and rated[end][0] == rated[end - 1][0]:
            end += 1
        for _, rank in rated[start:end]:
            groups[rank] = group
        start = end
    return groups


def birth_date(text: str) -> date | None:
    """A TRF birth date (columns 70-79, ``YYYY/MM/DD``); None when blank or unreadable.

    A date with only a year (``2010``, ``2010/00/00``) counts as the 1st of January.
    """
    match = _BIRTH.fullmatch(text.strip())
    if match is None:
        return None
    year, month, day = (int(part) if part else 0 for part in match.groups())
    try:
        return date(year, month or 1, day or 1)
    except ValueError:
        return None
