"""The prize distribution against examples worked out by hand from docs/prizes.md.

Each example's arithmetic is in its comment; the code must agree with it to the cent
(amounts are exact fractions; :func:`cents` rounds down).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.prizes.distribution import Distribution, cents, distribute
from daemon.prizes.lists import Entrant, Prize, PrizeGroup, conditional_list, eligible, ordered


def _e(rank: int, score: str, rating: int | None = None, **fields: object) -> Entrant:
    countback = fields.pop("countback", ())
    assert isinstance(countback, tuple)
    return Entrant(
        rank=rank,
        name=f"Player {rank}",
        score=Decimal(score),
        rating=rating,
        countback=tuple(Decimal(v) for v in countback),
        **fields,  # type: ignore[arg-type]
    )


def _cash(*amounts: int) -> tuple[Prize, ...]:
    return tuple(Prize(amount=Decimal(a)) for a in amounts)


def _paid(result: Distribution) -> dict[int, Decimal]:
    return {award.rank: cents(award.amount) for award in result.cash}


MAJOR = PrizeGroup(name="Open", places=_cash(500, 350, 300, 225))


def test_a_three_way_tie_across_two_places_shares_their_total() -> None:
    # 1st $500, 2nd $350, 3rd $300 and players 2, 3, 4 tied on 4 behind player 1 on 4.5:
    # the tie covers places 2-4, of which 2 and 3 carry money: (350 + 300) / 3 = 216.666…
    # each, paid as $216.66 (rounded down; the fund keeps 2 cents).
    group = PrizeGroup(name="Open", places=_cash(500, 350, 300))
    players = [_e(1, "4.5"), _e(2, "4"), _e(3, "4"), _e(4, "4"), _e(5, "3")]
    ties = conditional_list(group, ordered(players))
    assert [(t.players, t.places, t.share) for t in ties] == [
        ((1,), "1", Fraction(500)),
        ((2, 3, 4), "2-4", Fraction(650, 3)),
    ]
    result = distribute([group], players)
    assert _paid(result) == {1: Decimal("500.00"), 2: Decimal("216.66"), 3: Decimal("216.66"),
                             4: Decimal("216.66")}  # fmt: skip
    assert result.total == 1150


def test_a_tie_for_the_last_place_shares_it_among_everyone_tied() -> None:
    # Four players tied for 4th of four places: $225 / 4 = 56.25 each.
    players = [_e(1, "5"), _e(2, "4.5"), _e(3, "4")] + [_e(r, "3") for r in (4, 5, 6, 7)]
    paid = _paid(distribute([MAJOR], players))
    assert paid == {1: 500, 2: 350, 3: 300, 4: Decimal("56.25"), 5: Decimal("56.25"),
                    6: Decimal("56.25"), 7: Decimal("56.25")}  # fmt: skip


U1600 = PrizeGroup(name="U1600", places=_cash(200, 100), rating_max=1599)


def test_a_player_top_of_two_lists_keeps_the_higher_and_the_others_move_up() -> None:
    # Open 1st $500 2nd $350 …; U1600 1st $200, 2nd $100.
    # Player 1 (1500) wins on 5: top of Open ($500) and of U1600 ($200): keeps $500, leaves
    # U1600, where player 2 (1550, on 4) moves up to 1st ($200) and player 4 (1400, on 2)
    # into 2nd ($100). Player 3 (2000, 4.5) is 2nd in the Open.
    players = [_e(1, "5", 1500), _e(2, "4", 1550), _e(3, "4.5", 2000), _e(4, "2", 1400)]
    result = distribute([MAJOR, U1600], players)
    # Then player 2 is 3rd in the Open ($300 > U1600's $200) and keeps it; player 4, 4th
    # in the Open ($225 > $200), too: U1600 ends empty.
    assert [(r.rank, r.kept, r.left) for r in result.removals] == [
        (1, "Open", ("U1600",)),
        (2, "Open", ("U1600",)),
        (4, "Open", ("U1600",)),
    ]
    assert _paid(result) == {1: 500, 3: 350, 2: 300, 4: 225}
    (_open_race, u1600_race) = result.races
    assert [t.players for t in u1600_race.conditional] == [(1,), (2,)]
    assert u1600_race.final == ()  # everyone under 1600 won more in the Open


def test_the_next_player_moves_up_into_the_list_a_winner_left() -> None:
    # Open: 1st $500 only. U1600 1st $200, 2nd $100. Player 1 (1500) wins the Open;
    # U1600 becomes player 2 (1550) $200, player 4 (1400) $100; player 3 (2000) nothing.
    group = PrizeGroup(name="Open", places=_cash(500))
    players = [_e(1, "5", 1500), _e(2, "4", 1550), _e(3, "4.5", 2000), _e(4, "2", 1400)]
    assert _paid(distribute([group, U1600], players)) == {1: 500, 2: 200, 4: 100}


def test_equal_values_keep_the_prize_met_first() -> None:
    # Open 2nd $200 and U1600 1st $200: the Open is met first, so player 2 keeps it, and
    # the U1600 1st goes to player 3.
    group = PrizeGroup(name="Open", places=_cash(400, 200))
    u1600 = PrizeGroup(name="U1600", places=_cash(200), rating_max=1599)
    players = [_e(1, "5", 2100), _e(2, "4", 1500), _e(3, "3", 1400)]
    result = distribute([group, u1600], players)
    assert result.removals[0].kept == "Open"
    assert _paid(result) == {1: 400, 2: 200, 3: 200}


def test_pooling_when_a_removal_pays_the_tied_players_left_more() -> None:
    # Open $500 / $350 / $300 / $225; U1600 1st $300, 2nd $100.
    # Scores: 1 (2000) 5; 2 (1500), 3 (1900), 4 (1800) on 4; 5 (1700) 3.5; 6 (1550) 3.
    # Conditional lists: Open 1: $500, 2-4: (350 + 300 + 225) / 3 = $291.67 each, …
    #                    U1600 1: player 2 $300, 2: player 6 $100.
    # Player 2 is on both: $300 > $291.67, so keeps U1600 and leaves the Open. The Open
    # becomes 1: $500, 2-3: players 3 and 4 (350 + 300) / 2 = $325 each, 4: player 5
    # $225. $325 is more than player 2's $300: the money of the tied players of both
    # groups is pooled, 325 + 325 + 300 = 950, shared by players 2, 3, 4: $316.666… each.
    # Nobody else changes: 1 $500, 5 $225, 6 $100. Total 500 + 950 + 225 + 100 = 1775.
    u1600 = PrizeGroup(name="U1600", places=_cash(300, 100), rating_max=1599)
    players = [_e(1, "5", 2000), _e(2, "4", 1500), _e(3, "4", 1900), _e(4, "4", 1800),
               _e(5, "3.5", 1700), _e(6, "3", 1550)]  # fmt: skip
    result = distribute([MAJOR, u1600], players)
    assert [(r.rank, r.kept, r.value) for r in result.removals] == [(2, "U1600", Fraction(300))]
    assert _paid(result) == {1: 500, 2: Decimal("316.66"), 3: Decimal("316.66"),
                             4: Decimal("316.66"), 5: 225, 6: 100}  # fmt: skip
    pooled = {a.rank: a.pooled_with for a in result.cash}
    assert pooled[2] == (3, 4)
    assert pooled[3] == (2, 4)
    assert pooled[1] == ()
    assert result.total == 1775


def test_no_pooling_when_the_tied_players_left_receive_less() -> None:
    # As above but U1600 1st is $400: player 2 keeps $400; players 3 and 4 get $325 each,
    # less than $400: no pool.
    u1600 = PrizeGroup(name="U1600", places=_cash(400, 100), rating_max=1599)
    players = [_e(1, "5", 2000), _e(2, "4", 1500), _e(3, "4", 1900), _e(4, "4", 1800),
               _e(5, "3.5", 1700), _e(6, "3", 1550)]  # fmt: skip
    result = distribute([MAJOR, u1600], players)
    assert _paid(result) == {1: 500, 2: 400, 3: 325, 4: 325, 5: 225, 6: 100}
    assert all(not award.pooled_with for award in result.cash)


def test_an_unrated_winner_takes_no_rating_prize() -> None:
    # Player 1 is unrated and wins: the Open's 1st, but U1600 is closed to them even
    # without the one-prize rule; U1600 goes to players 3 (1450) and 4 (1200).
    players = [_e(1, "5"), _e(2, "4", 2100), _e(3, "3", 1450), _e(4, "2.5", 1200)]
    assert not eligible(U1600, players[0])
    group = PrizeGroup(name="Open", places=_cash(500, 350))
    result = distribute([group, U1600], players, one_cash_prize=False)
    assert _paid(result) == {1: 500, 2: 350, 3: 200, 4: 100}
    assert [t.players for t in result.races[1].conditional] == [(3,), (4,)]


def test_without_the_one_prize_rule_a_player_wins_on_every_list() -> None:
    players = [_e(1, "5", 1500), _e(2, "4", 1550)]
    result = distribute([MAJOR, U1600], players, one_cash_prize=False)
    assert result.cash_of(1) == 700
    assert result.cash_of(2) == 450
    assert result.removals == ()


def test_age_and_girls_groups_by_birth_date_and_sex() -> None:
    u18 = PrizeGroup(name="Under 18", places=_cash(250, 120), born_from=date(2008, 1, 1))
    girls = PrizeGroup(name="Girls U18", places=_cash(100), born_from=date(2008, 1, 1), girls=True)
    players = [
        _e(1, "5", born=date(2007, 12, 31)),  # too old for both
        _e(2, "4", born=date(2008, 1, 1), girl=True),
        _e(3, "4", born=date(2010, 5, 5)),
        _e(4, "3", born=date(2009, 1, 1), girl=True),
        _e(5, "3"),  # no birth date: in no age group
    ]
    result = distribute([u18, girls], players)
    # U18: 2 and 3 tied on 4 share 250 + 120 = $185 each; Girls: 2 ($100) is on both,
    # keeps $185, and 4 moves up to Girls 1st.
    assert _paid(result) == {2: 185, 3: 185, 4: 100}


def test_trophies_go_by_countback_and_say_what_decided() -> None:
    # U18 1st $250 + trophy, 2nd $120 + trophy, 3rd trophy only. Players 1 and 2 tie on
    # 4 (cash: 185 each); countback PS 10 vs 10, BH 12 vs 11: player 1 gets the 1st
    # trophy by BH. Players 3 and 4 on 3 with equal countback: 3rd by starting rank.
    u18 = PrizeGroup(
        name="Under 18",
        places=(
            Prize(amount=Decimal(250), trophy="trophy"),
            Prize(amount=Decimal(120), trophy="trophy"),
            Prize(trophy="medal"),
        ),
    )
    players = [
        _e(2, "4", countback=(10, 11, 9)),
        _e(1, "4", countback=(10, 12, 9)),
        _e(4, "3", countback=(7, 9, 5)),
        _e(3, "3", countback=(7, 9, 5)),
    ]
    result = distribute([u18], players)
    assert _paid(result) == {1: 185, 2: 185}
    assert [(t.rank, t.place, t.trophy, t.decided_by) for t in result.trophies] == [
        (1, 1, "trophy", "BH"),
        (2, 2, "trophy", "BH"),
        (3, 3, "medal", "starting rank"),
    ]


def test_a_clear_winner_needs_no_countback() -> None:
    group = PrizeGroup(name="Open", places=(Prize(trophy="cup"),))
    result = distribute([group], [_e(1, "3"), _e(2, "2")])
    assert [(t.rank, t.decided_by) for t in result.trophies] == [(1, "")]
    assert result.cash == ()


_SCORES = st.sampled_from([Decimal(n) / 2 for n in range(0, 11)])
_RATINGS = st.one_of(st.none(), st.integers(1000, 2400))


@st.composite
def _events(draw: st.DrawFn) -> tuple[list[PrizeGroup], list[Entrant]]:
    count = draw(st.integers(1, 14))
    players = [_e(r, str(draw(_SCORES)), draw(_RATINGS)) for r in range(1, count + 1)]
    amounts = st.lists(st.integers(1, 500), min_size=1, max_size=5)
    groups = [PrizeGroup(name="Open", places=_cash(*draw(amounts)))]
    for bound in sorted(draw(st.sets(st.sampled_from([1400, 1600, 1800, 2000]))), reverse=True):
        groups.append(PrizeGroup(name=f"U{bound}", places=_cash(*draw(amounts)),
                                 rating_max=bound - 1))  # fmt: skip
    return groups, players


@settings(max_examples=300, deadline=None)
@given(_events())
def test_one_cash_prize_each_and_never_more_than_the_fund(
    event: tuple[list[PrizeGroup], list[Entrant]],
) -> None:
    groups, players = event
    result = distribute(groups, players)
    ranks = [award.rank for award in result.cash]
    assert len(ranks) == len(set(ranks))
    fund = sum(sum(p.amount for p in g.places) for g in groups)
    assert 0 < result.total <= fund
    # Pooling only moves money between players of one score.
    assert result.total == sum(award.share for award in result.cash)
    scores = {p.rank: p.score for p in players}
    for award in result.cash:
        assert all(scores[other] == scores[award.rank] for other in award.pooled_with)
        assert eligible(next(g for g in groups if g.name == award.group),
                        next(p for p in players if p.rank == award.rank))  # fmt: skip
