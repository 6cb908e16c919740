"""One cash prize per player by the conditional lists, and trophies by countback.

The regulations' rule (docs/prizes.md, "One cash prize per player"):

1. Each prize group has a conditional list (:func:`~daemon.prizes.lists.conditional_list`):
   what each player would receive there after sharing among tied players.
2. The lists are taken in turn, in the order given (the major list first, then the rating
   or age groups in descending order); within a list, its prizes in descending order of
   value. The first player met who is on more than one list with money is settled:
3. that player is deemed to have won the prize of highest value among their lists; on
   equal values, the one met first;
4. they are removed from every other list, and the next players move up into the lists
   they left (the lists are made again); then the walk starts over.
5. Pooling: if a removal made players tied with the removed player on a list they left
   (same score) receive more than the removed player, the money of those tied players and
   of the removed player's tie on the list they kept is pooled and shared equally among
   all of them. It is judged on the final lists, so that later removals count; it moves
   money only between players of one score: nobody else's prize changes.
6. When nobody is on more than one list with money, the lists are final.

Places that carry only a trophy are no cash prize: they never count for the one-prize
rule. Trophies go by countback (:func:`trophies`): tied players are ordered by the
configured tie-breaks (the Sum of Progressive Scores, then Buchholz, then
Sonneborn-Berger, FIDE C.07), then by starting rank; a player may receive a trophy in
each group they are eligible for. Amounts are exact fractions here; rounding is the
caller's (:func:`cents`). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from fractions import Fraction

from daemon.prizes.lists import Entrant, PrizeGroup, Tie, conditional_list, eligible, ordered

__all__ = [
    "DEFAULT_COUNTBACK",
    "CashAward",
    "Distribution",
    "GroupRace",
    "Removal",
    "TrophyAward",
    "cents",
    "distribute",
    "trophies",
]

#: The junior event's countback for trophies and titles (§6).
DEFAULT_COUNTBACK = ("PS", "BH", "SB")


def cents(amount: Fraction) -> Decimal:
    """An amount rounded down to the cent: a shared prize never pays more than the fund."""
    exact = Decimal(amount.numerator) / Decimal(amount.denominator)
    return exact.quantize(Decimal("0.01"), rounding=ROUND_DOWN)


@dataclass(frozen=True, slots=True, kw_only=True)
class CashAward:
    """A player's cash prize.

    Attributes:
        rank: the player's starting rank.
        group: the prize group paying it.
        places: the places of the tie it comes from (``"2-4"``).
        share: the player's share on that list.
        amount: what the player receives: the share, or the pool's share when pooled.
        pooled_with: the other players of the pool (starting ranks), empty when none.
    """

    rank: int
    group: str
    places: str
    share: Fraction
    amount: Fraction
    pooled_with: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class TrophyAward:
    """A trophy (or any non-cash prize) and the countback that decided it.

    Attributes:
        rank: the winner's starting rank.
        group: the prize group.
        place: 1-based.
        trophy: what it is.
        decided_by: ``""`` when the winner's score was nobody else's in the group;
            else the tie-break that separated the winner from the next (or previous)
            player of the same score, or ``"starting rank"`` when every tie-break was
            equal.
    """

    rank: int
    group: str
    place: int
    trophy: str
    decided_by: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Removal:
    """A player on several lists, settled (§6 steps 3 and 4).

    Attributes:
        rank: the player.
        kept: the group whose prize the player is deemed to have won.
        value: the player's share there when settled.
        left: the groups the player left where they had money, in list order.
    """

    rank: int
    kept: str
    value: Fraction
    left: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupRace:
    """One prize group: its list ignoring the one-prize rule, and its final list."""

    group: PrizeGroup
    eligible: int
    conditional: tuple[Tie, ...]
    final: tuple[Tie, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Distribution:
    """Who wins what (:func:`distribute`)."""

    races: tuple[GroupRace, ...]
    cash: tuple[CashAward, ...]
    trophies: tuple[TrophyAward, ...]
    removals: tuple[Removal, ...]

    @property
    def total(self) -> Fraction:
        """Every cash prize paid, exactly."""
        return sum((award.amount for award in self.cash), Fraction(0))

    def cash_of(self, rank: int) -> Fraction:
        """What one player receives in cash (0 for none)."""
        return sum((a.amount for a in self.cash if a.rank == rank), Fraction(0))


class _Lists:
    """The conditional lists as the settlement changes them: who has left which list."""

    def __init__(self, groups: Sequence[PrizeGroup], entrants: Sequence[Entrant]) -> None:
        self.groups = tuple(groups)
        self.scores = {entrant.rank: entrant.score for entrant in entrants}
        everyone = ordered(entrants)
        self.eligible = [[e for e in everyone if eligible(g, e)] for g in self.groups]
        self.left: list[set[int]] = [set() for _ in self.groups]

    def lists(self) -> list[list[Tie]]:
        return [
            conditional_list(group, [e for e in entrants if e.rank not in left])
            for group, entrants, left in zip(self.groups, self.eligible, self.left, strict=True)
        ]


def _money(lists: Sequence[Sequence[Tie]]) -> dict[int, list[tuple[int, Fraction]]]:
    """Each player's (list index, share) where they have money, in list order."""
    money: dict[int, list[tuple[int, Fraction]]] = {}
    for index, ties in enumerate(lists):
        for tie in ties:
            if tie.share > 0:
                for rank in tie.players:
                    money.setdefault(rank, []).append((index, tie.share))
    return money


def _settle_one(state: _Lists) -> Removal | None:
    """Steps 2 to 4 once: settle the first player met on several lists; None when final."""
    lists = state.lists()
    money = _money(lists)
    for ties in lists:
        for tie in sorted(ties, key=lambda t: -t.share):  # stable: list order on equal values
            for rank in tie.players if tie.share > 0 else ():
                held = money[rank]
                if len(held) < 2:
                    continue
                kept, value = max(held, key=lambda h: h[1])  # the first of equal values
                for index in range(len(state.groups)):
                    if index != kept:
                        state.left[index].add(rank)
                left = tuple(state.groups[i].name for i, _ in held if i != kept)
                return Removal(rank=rank, kept=state.groups[kept].name, value=value, left=left)
    return None


class _Pools:
    """Players whose money is pooled (step 5), merged when pools meet."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, rank: int) -> int:
        while self.parent.get(rank, rank) != rank:
            rank = self.parent[rank]
        return rank

    def join(self, ranks: Sequence[int]) -> None:
        roots = sorted({self.find(rank) for rank in ranks})
        for root in roots[1:]:
            self.parent[root] = roots[0]


def _tied(ties: Sequence[Tie], score: object) -> tuple[tuple[int, Fraction], ...]:
    """The players with money of one score on a list, and their shares."""
    return tuple(
        (rank, tie.share)
        for tie in ties
        if tie.score == score and tie.share > 0
        for rank in tie.players
    )


def _pools(state: _Lists, final: Sequence[Sequence[Tie]], removals: Sequence[Removal]) -> _Pools:
    """Step 5 on the final lists: which players share pooled money."""
    index = {group.name: i for i, group in enumerate(state.groups)}
    pools = _Pools()
    for removal in removals:
        score = state.scores[removal.rank]
        kept = _tied(final[index[removal.kept]], score)
        value = dict(kept).get(removal.rank, Fraction(0))
        for name in removal.left:
            others = _tied(final[index[name]], score)
            if any(share > value for _, share in others):
                pools.join([removal.rank, *(r for r, _ in kept), *(r for r, _ in others)])
    return pools


def _cash(state: _Lists, final: Sequence[Sequence[Tie]], pools: _Pools) -> list[CashAward]:
    paid = [
        (rank, group.name, tie.places, tie.share)
        for group, ties in zip(state.groups, final, strict=True)
        for tie in ties
        if tie.share > 0
        for rank in tie.players
    ]
    members: dict[int, list[int]] = {}
    totals: dict[int, Fraction] = {}
    for rank, _, _, share in paid:
        root = pools.find(rank)
        members.setdefault(root, []).append(rank)
        totals[root] = totals.get(root, Fraction(0)) + share
    awards = []
    for rank, name, places, share in paid:
        root = pools.find(rank)
        pool = members[root]
        amount = totals[root] / len(pool) if len(pool) > 1 else share
        others = tuple(sorted(r for r in pool if r != rank)) if len(pool) > 1 else ()
        awards.append(
            CashAward(
                rank=rank, group=name, places=places, share=share, amount=amount, pooled_with=others
            )
        )
    awards.sort(key=lambda a: (-a.amount, a.rank))
    return awards


def _decided_by(row: Sequence[Entrant], position: int, names: Sequence[str]) -> str:
    """The tie-break that placed ``row[position]`` among players of its score."""
    me = row[position]
    for other in (position + 1, position - 1):
        if 0 <= other < len(row) and row[other].score == me.score:
            for name, mine, theirs in zip(names, me.countback, row[other].countback, strict=False):
                if mine != theirs:
                    return name
            return "starting rank"
    return ""


def trophies(
    groups: Sequence[PrizeGroup], entrants: Sequence[Entrant], countback: Sequence[str]
) -> list[TrophyAward]:
    """Every place's trophy, by score then countback then starting rank, in each group."""
    awards = []
    everyone = ordered(entrants)
    for group in groups:
        row = [entrant for entrant in everyone if eligible(group, entrant)]
        for position, prize in enumerate(group.places[: len(row)]):
            if prize.trophy:
                awards.append(
                    TrophyAward(
                        rank=row[position].rank,
                        group=group.name,
                        place=position + 1,
                        trophy=prize.trophy,
                        decided_by=_decided_by(row, position, countback),
                    )
                )
    return awards


def distribute(
    groups: Sequence[PrizeGroup],
    entrants: Sequence[Entrant],
    *,
    countback: Sequence[str] = DEFAULT_COUNTBACK,
    one_cash_prize: bool = True,
) -> Distribution:
    """Who wins what under §6.

    Args:
        groups: the prize groups in the regulation's order (the major list first, then
            the groups in descending order); names unique.
        entrants: every player, with score, countback and what eligibility needs.
        countback: the names of the entrants' countback values, for the trophies'
            ``decided_by``.
        one_cash_prize: §6's default; False when the prize list says players may win
            several cash prizes.
    """
    names = [group.name for group in groups]
    if len(set(names)) != len(names):
        raise ValueError(f"prize group names repeat: {names}")
    state = _Lists(groups, entrants)
    conditional = state.lists()
    removals: list[Removal] = []
    while one_cash_prize and (removal := _settle_one(state)) is not None:
        removals.append(removal)
    final = state.lists()
    races = tuple(
        GroupRace(group=group, eligible=len(pool), conditional=tuple(first), final=tuple(last))
        for group, pool, first, last in zip(groups, state.eligible, conditional, final, strict=True)
    )
    return Distribution(
        races=races,
        cash=tuple(_cash(state, final, _pools(state, final, removals))),
        trophies=tuple(trophies(groups, entrants, countback)),
        removals=tuple(removals),
    )
