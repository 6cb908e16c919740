"""Prize groups, their places, who is eligible, and each group's conditional list.

docs/prizes.md, "Configuration": each prize group has places, each with an amount and/or a
trophy. A group may be restricted by rating (a band, or a rating group formed after a
round: :mod:`daemon.prizes.groups`), by birth date (an age group) and to girls. Unrated
players are not eligible for a rating-restricted group.

The *conditional list* of a group (§6, step 1) is what each player would receive there,
ignoring the one-prize rule: the eligible players by score, players on equal scores
sharing the total of the places they cover. A tie that starts inside the places is on
the list, also when it runs past the last place (four players tied for 3rd of three
places share the 3rd prize four ways). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from fractions import Fraction

__all__ = ["Entrant", "Prize", "PrizeGroup", "Tie", "conditional_list", "eligible", "ordered"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Prize:
    """One place of a prize list: an amount, a trophy, or both.

    Attributes:
        amount: the cash, 0 for none.
        trophy: what is handed over besides (``"trophy"``, ``"medal"``), ``""`` for none.
    """

    amount: Decimal = Decimal(0)
    trophy: str = ""

    def __post_init__(self) -> None:
        if self.amount < 0:
            raise ValueError(f"a prize of {self.amount} is negative")
        if not self.amount and not self.trophy:
            raise ValueError("a prize needs an amount or a trophy")


@dataclass(frozen=True, slots=True, kw_only=True)
class PrizeGroup:
    """A prize group: its places and who is eligible.

    Attributes:
        name: as the prize list names it (``"U1600"``, ``"Girls Under 18"``).
        places: 1st, 2nd, ... in order.
        rating_min / rating_max: a rating band, both inclusive (``"U1600"`` is
            ``rating_max = 1599``); None: no bound.
        rating_group: a rating group formed after a round (1 = the lowest-rated);
            None: not such a group.
        born_from: an age group: born on or after this date; None: any age.
        girls: a girls' group (TRF sex ``w``).
    """

    name: str
    places: tuple[Prize, ...]
    rating_min: int | None = None
    rating_max: int | None = None
    rating_group: int | None = None
    born_from: date | None = None
    girls: bool = False

    def __post_init__(self) -> None:
        if not self.places:
            raise ValueError(f"prize group {self.name!r} has no places")
        low, high = self.rating_min, self.rating_max
        if low is not None and high is not None and low > high:
            raise ValueError(f"prize group {self.name!r}: rating band {low}-{high} is empty")
        if self.rating_group is not None and self.rating_group < 1:
            raise ValueError(f"prize group {self.name!r}: rating group {self.rating_group}")

    @property
    def is_rating_restricted(self) -> bool:
        """Whether the group is closed to unrated players (§6)."""
        bounded = self.rating_min is not None or self.rating_max is not None
        return bounded or self.rating_group is not None

    @property
    def has_cash(self) -> bool:
        """Whether any place carries money."""
        return any(prize.amount for prize in self.places)


@dataclass(frozen=True, slots=True, kw_only=True)
class Entrant:
    """A player as the prizes see them.

    Attributes:
        rank: the starting rank (the player's id here).
        name: as the TRF writes it.
        score: points.
        countback: the countback's values, best first compared (PS, BH, SB by default).
        rating: the rating that counts for prizes (:mod:`daemon.prizes.ratings`); None:
            unrated.
        rating_group: the rating group formed after a round (1 = lowest), None: in none
            (unrated, or the group was not formed).
        born: the birth date, None when the TRF has none.
        girl: the TRF's sex column says ``w``.
    """

    rank: int
    name: str
    score: Decimal
    countback: tuple[Decimal, ...] = ()
    rating: int | None = None
    rating_group: int | None = None
    born: date | None = None
    girl: bool = False


def eligible(group: PrizeGroup, entrant: Entrant) -> bool:
    """Whether ``entrant`` may win a prize of ``group`` (§6: unrated players are not
    eligible for rating-restricted prizes)."""
    if group.girls and not entrant.girl:
        return False
    if group.born_from is not None and (entrant.born is None or entrant.born < group.born_from):
        return False
    if not group.is_rating_restricted:
        return True
    if entrant.rating is None:
        return False
    if group.rating_group is not None and entrant.rating_group != group.rating_group:
        return False
    if group.rating_min is not None and entrant.rating < group.rating_min:
        return False
    return group.rating_max is None or entrant.rating <= group.rating_max


def ordered(entrants: Iterable[Entrant]) -> list[Entrant]:
    """By score, then countback, then starting rank (the order every list is shown in)."""
    return sorted(entrants, key=lambda e: (-e.score, tuple(-v for v in e.countback), e.rank))


@dataclass(frozen=True, slots=True, kw_only=True)
class Tie:
    """Players of one score on a conditional list, and what each would receive.

    Attributes:
        players: their starting ranks, in list order (countback, then starting rank).
        first / last: the places they cover, 1-based (``last`` may pass the last place).
        share: each player's share of the cash of the places covered.
        score: their score.
    """

    players: tuple[int, ...]
    first: int
    last: int
    share: Fraction
    score: Decimal

    @property
    def places(self) -> str:
        """``"2"`` or ``"2-4"``: the places as a prize list writes a shared one."""
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"


def conditional_list(group: PrizeGroup, entrants: Sequence[Entrant]) -> list[Tie]:
    """The group's conditional list (§6 step 1): every tie that starts inside the places.

    Args:
        group: the prize group.
        entrants: the players still on the list, eligible, in :func:`ordered` order.
    """
    ties: list[Tie] = []
    position = 0
    while position < len(entrants) and position < len(group.places):
        score = entrants[position].score
        end = position
        while end < len(entrants) and entrants[end].score == score:
            end += 1
        covered = group.places[position:end]
        total = sum((Fraction(prize.amount) for prize in covered), Fraction(0))
        players = tuple(entrant.rank for entrant in entrants[position:end])
        ties.append(
            Tie(
                players=players,
                first=position + 1,
                last=end,
                share=total / len(players),
                score=score,
            )
        )
        position = end
    return ties
