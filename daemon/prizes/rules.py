"""A section's prize regulations: its prize groups and how they are settled.

What ``[prizes]`` (or ``[sections.prizes]``) says once the configuration has checked it
(docs/prizes.md); :mod:`daemon.prizes.event` applies it to a TRF. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from daemon.prizes.distribution import DEFAULT_COUNTBACK
from daemon.prizes.groups import DEFAULT_GROUPS
from daemon.prizes.lists import PrizeGroup

__all__ = ["PrizeRules"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PrizeRules:
    """The prize regulations of one section.

    Attributes:
        groups: the prize groups in the regulation's order (major list first, then the
            groups in descending order): the order of §6's conditional lists.
        countback: tie-break codes (FIDE C.07, :mod:`daemon.pairing.tiebreaks`) that
            order tied players for trophies.
        one_cash_prize: §6's default; False when players may win several cash prizes.
        rating_groups: how many rating groups are formed (the rule divides by 9).
        groups_after: the round after which rating groups are formed; None when no
            group is a formed rating group.
        ratings: a CSV of the ratings that count (:mod:`daemon.prizes.ratings`), None:
            the TRF's rating.
        rating_systems: the CSV's columns, the highest-listed system first.
    """

    groups: tuple[PrizeGroup, ...]
    countback: tuple[str, ...] = DEFAULT_COUNTBACK
    one_cash_prize: bool = True
    rating_groups: int = DEFAULT_GROUPS
    groups_after: int | None = None
    ratings: Path | None = None
    rating_systems: tuple[str, ...] = ()
