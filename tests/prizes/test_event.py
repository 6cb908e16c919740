"""A section's prize race from a TRF, worked out by hand; the ratings CSV."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from daemon.pairing.trf import Tournament
from daemon.prizes.distribution import cents
from daemon.prizes.event import played_rounds, prize_race
from daemon.prizes.lists import Prize, PrizeGroup
from daemon.prizes.ratings import RatingsFileError, counting_rating, read_ratings
from daemon.prizes.rules import PrizeRules
from tests.pairing.support import player_line, trf_text

# Three rounds, six players:
#   R1: 1-4 1-0, 2-5 0-1, 3-6 ½-½
#   R2: 5-1 ½-½, 3-2 1-0, 6-4 0-1
#   R3: 1-3 ½-½, 4-5 0-1, 2-6 1-0
# Scores: 5: 2.5; 1: 2 (progressive 1, 1.5, 2: PS 4.5); 3: 2 (½, 1½, 2: PS 4); 2: 1;
# 4: 1; 6: ½.
_LINES = (
    player_line(1, "Able, Ann", "2.0", ("   4 w 1", "   5 b =", "   3 w ="),
                rating=1900, sex="w", birth="2009/03/01"),
    player_line(2, "Baker, Ben", "1.0", ("   5 w 0", "   3 b 0", "   6 w 1"),
                rating=1700, birth="2007/06/01"),
    player_line(3, "Cole, Cat", "2.0", ("   6 w =", "   2 w 1", "   1 b ="),
                rating=1550, sex="w", birth="2010/01/01"),
    player_line(4, "Dunn, Dan", "1.0", ("   1 b 0", "   6 b 1", "   5 w 0"),
                rating=1500, birth="2011/01/01"),
    player_line(5, "Eads, Eve", "2.5", ("   2 b 1", "   1 w =", "   4 b 1"),
                sex="w", birth="2012/01/01"),
    player_line(6, "Ford, Fay", "0.5", ("   3 b =", "   4 w 0", "   2 b 0"),
                rating=1450),
)  # fmt: skip
SECTION = Tournament.from_text(trf_text("012 Prize Open", "XXR 3", *_LINES), source="open.trf")

RULES = PrizeRules(
    groups=(
        PrizeGroup(
            name="Open",
            places=(
                Prize(amount=Decimal(300), trophy="trophy"),
                Prize(amount=Decimal(200), trophy="trophy"),
            ),
        ),
        PrizeGroup(name="U1600", places=(Prize(amount=Decimal(100)),), rating_max=1599),
        PrizeGroup(name="U16", places=(Prize(amount=Decimal(80)),), born_from=date(2010, 1, 1)),
        PrizeGroup(name="Girls", places=(Prize(trophy="trophy"),), girls=True),
    )
)


def test_the_race_after_three_rounds_as_worked_out_by_hand() -> None:
    # Open: 5 $300; 1 and 3 tie for 2nd-3rd: $200 / 2 = $100 each.
    # U1600 (rated under 1600: 3, 4, 6; 5 is unrated): 3 $100. U16 (born 2010 or
    # later: 3, 4, 5): 5 $80.
    # Settling: 5 is on Open ($300) and U16 ($80): keeps Open; U16 moves to 3 ($80).
    # 3 is on Open ($100), U1600 ($100), U16 ($80): equal values keep the first, Open.
    # U1600 moves to 4 ($100), U16 to 4 ($80): 4 keeps U1600 ($100); U16 has nobody
    # left. Paid: 5 $300, 1 $100, 3 $100, 4 $100.
    race = prize_race(SECTION, RULES)
    assert race.rounds == 3
    paid = {award.rank: cents(award.amount) for award in race.distribution.cash}
    assert paid == {5: 300, 1: 100, 3: 100, 4: 100}
    assert [(r.rank, r.kept, r.left) for r in race.distribution.removals] == [
        (5, "Open", ("U16",)),
        (3, "Open", ("U1600", "U16")),
        (4, "U1600", ("U16",)),
    ]
    # Trophies: Open 1st to 5 (clear), 2nd to 1 over 3 by PS (4.5 against 4); Girls
    # 1st to 5 (clear).
    assert [(t.group, t.place, t.rank, t.decided_by) for t in race.distribution.trophies] == [
        ("Open", 1, 5, ""),
        ("Open", 2, 1, "PS"),
        ("Girls", 1, 5, ""),
    ]
    assert race.entrants[5].rating is None
    assert race.entrants[1].countback[0] == Decimal("4.5")


def test_after_one_round_the_race_is_that_of_round_one() -> None:
    # After round 1: 1 and 5 on 1 share $500 (250 each); 3 and 6 on ½.
    race = prize_race(SECTION, RULES, rounds=1)
    assert race.distribution.races[0].conditional[0].players == (1, 5)
    assert race.distribution.cash_of(1) == 250


def test_rating_groups_are_formed_from_the_players_of_the_first_rounds() -> None:
    # Two groups of the five rated players (5 // 2 = 2, one more in the lowest group):
    # 6 (1450), 4 (1500), 3 (1550) in group 1; 2 (1700), 1 (1900) in group 2.
    rules = PrizeRules(
        groups=(PrizeGroup(name="G1", places=(Prize(amount=Decimal(50)),), rating_group=1),),
        rating_groups=2,
        groups_after=2,
    )
    race = prize_race(SECTION, rules)
    assert {r: e.rating_group for r, e in race.entrants.items()} == {
        1: 2, 2: 2, 3: 1, 4: 1, 5: None, 6: 1
    }  # fmt: skip
    assert race.groups_final
    assert race.distribution.cash_of(3) == 50


def test_before_round_one_the_groups_are_provisional() -> None:
    blank = Tournament.from_text(
        trf_text("XXR 3", player_line(1, "A, A", "0.0", rating=1500)), source="x.trf"
    )
    rules = PrizeRules(groups=RULES.groups[:1], groups_after=2)
    race = prize_race(blank, rules)
    assert played_rounds(blank) == 0
    assert not race.groups_final
    assert race.distribution.cash_of(1) == 300  # the only player leads


def test_the_rating_that_counts_is_the_highest_listed_reliable_one() -> None:
    assert counting_rating(["1650?", "1702", ""]) == 1702
    assert counting_rating(["1650?", "", "1500"]) == 1500
    assert counting_rating(["1650?", "", ""]) == 1650
    assert counting_rating(["1650??", "", ""]) is None
    assert counting_rating(["", "", ""]) is None


def test_a_ratings_file_changes_who_is_eligible() -> None:
    # Player 2 is 1700 in the TRF but 1580 in ACF, listed first: U1600 now; player 5 is
    # ACF 1400?? (none) and FIDE-less: still unrated. Player 6 is not listed: 1450.
    text = 'fide_id,name,ACF,FIDE\n,"Baker, Ben",1580,1700\n,"eads,  eve",1400??,\n'
    ratings = read_ratings(text, source="r.csv", systems=("ACF", "FIDE"))
    race = prize_race(SECTION, RULES, ratings=ratings)
    assert race.entrants[2].rating == 1580
    assert race.entrants[5].rating is None
    assert race.entrants[6].rating == 1450


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name,ACF\n", "r.csv:1: no column 'FIDE' (the header names name, ACF)"),
        ('name,ACF,FIDE\n"A, B",16x0,\n', "r.csv:2: ACF '16x0' is not a rating like 1650?"),
        ('name,ACF,FIDE\n"A, B",,\n"a,b",,\n', "r.csv:3: 'a,b' is listed twice (also line 2)"),
        ('name,ACF,FIDE,fide_id\n"A, B",,,x1\n', "r.csv:2: fide_id 'x1' is not a number"),
        ("", "r.csv:1: empty: a header line is needed"),
    ],
)
def test_a_bad_ratings_file_gets_one_line_per_problem(text: str, problem: str) -> None:
    with pytest.raises(RatingsFileError) as caught:
        read_ratings(text, source="r.csv", systems=("ACF", "FIDE"))
    assert caught.value.problems == (problem,)
