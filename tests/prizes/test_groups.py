"""Rating groups formed by the rule of docs/prizes.md, worked out by hand."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.prizes.distribution import distribute
from daemon.prizes.groups import birth_date, group_sizes, rating_groups
from daemon.prizes.lists import Entrant, Prize, PrizeGroup


def test_sizes_start_from_the_minimum_and_grow_from_the_lowest_group() -> None:
    # 20 rated players: 20 // 9 = 2 each (18 placed); the 2 left go to groups 1 and 2.
    assert group_sizes(20) == [3, 3, 2, 2, 2, 2, 2, 2, 2]
    assert group_sizes(9) == [1] * 9
    assert group_sizes(5) == [1, 1, 1, 1, 1, 0, 0, 0, 0]
    assert group_sizes(10, count=3) == [4, 3, 3]


def test_equal_ratings_at_a_boundary_all_go_into_the_lower_group() -> None:
    # 20 players rated 1000, 1010, … (rank r rated 990 + 10 r), except ranks 3 and 4
    # both 1020. Sizes 3, 3, 2, …: group 1 is ranks 1-3 (1000-1020), but rank 4 (1020)
    # ties rank 3 across the boundary, so it goes into group 1 too (4 players); group 2
    # keeps its nominal end: ranks 5-6 (2 players, no further adjustment); group 3 on as
    # before: ranks 7-8.
    ratings: dict[int, int | None] = {r: 990 + 10 * r for r in range(1, 21)}
    ratings[4] = 1020
    groups = rating_groups(ratings)
    assert [r for r, g in sorted(groups.items()) if g == 1] == [1, 2, 3, 4]
    assert [r for r, g in sorted(groups.items()) if g == 2] == [5, 6]
    assert [r for r, g in sorted(groups.items()) if g == 3] == [7, 8]
    assert [r for r, g in sorted(groups.items()) if g == 9] == [19, 20]


def test_a_run_of_equal_ratings_can_empty_the_group_above() -> None:
    # 9 players, one per group; ranks 1-3 all rated 1500: group 1 takes all three,
    # groups 2 and 3 are empty, group 4 holds rank 4.
    ratings: dict[int, int | None] = {1: 1500, 2: 1500, 3: 1500}
    ratings |= {r: 1500 + r for r in range(4, 10)}
    groups = rating_groups(ratings)
    assert groups == {1: 1, 2: 1, 3: 1, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9}


def test_unrated_players_are_in_no_group_and_do_not_count() -> None:
    ratings: dict[int, int | None] = {r: 1000 + r for r in range(1, 10)} | {10: None}
    groups = rating_groups(ratings)
    assert 10 not in groups
    assert sorted(groups.values()) == list(range(1, 10))


@given(st.dictionaries(st.integers(1, 300), st.one_of(st.none(), st.integers(1000, 1100))))
def test_every_rated_player_is_placed_in_rating_order(ratings: dict[int, int | None]) -> None:
    groups = rating_groups(ratings)
    rated = {rank: r for rank, r in ratings.items() if r is not None}
    assert set(groups) == set(rated)
    for a in rated:
        for b in rated:
            if rated[a] < rated[b]:
                assert groups[a] <= groups[b]
            if rated[a] == rated[b]:
                assert groups[a] == groups[b]


def test_a_rating_group_prize_goes_within_the_group() -> None:
    # Two groups of 2 (count=2): ranks 1, 2 (1200, 1300) form group 1; 3, 4 group 2 (the
    # top group, not eligible). Player 4 wins; group 1's prize goes to player 2.
    ratings: dict[int, int | None] = {1: 1200, 2: 1300, 3: 1800, 4: 1900, 5: None}
    groups = rating_groups(ratings, count=2)
    players = [
        Entrant(
            rank=r, name=str(r), score=Decimal(s), rating=ratings[r], rating_group=groups.get(r)
        )
        for r, s in ((1, "1"), (2, "2"), (3, "3"), (4, "4"), (5, "5"))
    ]
    prize = PrizeGroup(name="Group 1", places=(Prize(amount=Decimal(100)),), rating_group=1)
    assert {a.rank: a.amount for a in distribute([prize], players).cash} == {2: 100}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2010/05/17", date(2010, 5, 17)),
        ("2010-05-17", date(2010, 5, 17)),
        ("2010/00/00", date(2010, 1, 1)),
        ("2010", date(2010, 1, 1)),
        ("", None),
        ("2010/13/01", None),
        ("unknown", None),
    ],
)
def test_birth_dates_as_trfs_write_them(text: str, expected: date | None) -> None:
    assert birth_date(text) == expected
