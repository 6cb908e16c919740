"""``[prizes]`` and ``[sections.prizes]``: validated, one line per problem naming the key."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from daemon.config.model import Config, ConfigError, load_config
from daemon.config.prizes import parse_band
from daemon.prizes.lists import Prize

NOW = dt.datetime(2026, 6, 24, 9, 0, tzinfo=dt.UTC)

EVENT = """\
[event]
name = "Riverside Open"
round = 1
time_control = "5400+30"

[[boards]]
number = 1

[pairing]
trf = "open.trf"
pairings = "pairs.txt"
"""

PRIZES = """
[prizes]
groups_after = 2
ratings = "ratings.csv"
rating_systems = ["ACF", "FIDE"]

[[prizes.groups]]
name = "Open"
places = [500, 350.50, { amount = 120, trophy = "trophy" }, "medal"]

[[prizes.groups]]
name = "U1800-1600"
rating = "U1800-1600"
places = [200, 130]

[[prizes.groups]]
name = "Group 8"
rating_group = 8
places = [60]

[[prizes.groups]]
name = "Girls Under 18"
born_from = 2008-01-01
girls = true
places = ["trophy"]
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "open.trf").touch()
    (tmp_path / "pairs.txt").touch()
    (tmp_path / "ratings.csv").write_text("name,ACF,FIDE\n", encoding="utf-8")


def _load(text: str) -> Config:
    Path("config.toml").write_text(text, encoding="utf-8")
    return load_config(Path("config.toml"), env={}, now=NOW)


def _problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        _load(text)
    return list(caught.value.problems)


def test_a_prize_table_loads_into_the_sections_rules(tmp_path: Path) -> None:
    rules = _load(EVENT + PRIZES).prizes[""]
    assert [g.name for g in rules.groups] == ["Open", "U1800-1600", "Group 8", "Girls Under 18"]
    open_, band, group8, girls = rules.groups
    assert open_.places == (
        Prize(amount=Decimal(500)),
        Prize(amount=Decimal("350.5")),
        Prize(amount=Decimal(120), trophy="trophy"),
        Prize(trophy="medal"),
    )
    assert (band.rating_min, band.rating_max) == (1600, 1799)
    assert group8.rating_group == 8
    assert girls.girls
    assert girls.born_from == dt.date(2008, 1, 1)
    assert rules.countback == ("PS", "BH", "SB")
    assert rules.one_cash_prize
    assert rules.ratings == tmp_path / "ratings.csv"
    assert rules.rating_systems == ("ACF", "FIDE")
    assert (rules.groups_after, rules.rating_groups) == (2, 9)


def test_each_section_has_its_own_prizes() -> None:
    text = """\
[event]
name = "Juniors"
round = 1
time_control = "4500+30"

[[sections]]
name = "U18"
[[sections.boards]]
number = 1
[sections.pairing]
trf = "open.trf"
pairings = "pairs.txt"
[[sections.prizes.groups]]
name = "Under 18"
places = [{ amount = 250, trophy = "trophy" }]

[[sections]]
name = "U12"
[[sections.boards]]
number = 2
"""
    config = _load(text)
    assert list(config.prizes) == ["U18"]
    assert config.prizes["U18"].groups[0].places[0].trophy == "trophy"


@pytest.mark.parametrize(
    ("band", "bounds"),
    [
        ("1600-1799", (1600, 1799)),
        ("U1600", (None, 1599)),
        ("u1800-1600", (1600, 1799)),
        ("1800+", (1800, None)),
    ],
)
def test_rating_bands_as_prize_lists_write_them(
    band: str, bounds: tuple[int | None, int | None]
) -> None:
    assert parse_band(band) == bounds


_GROUP = '\n[prizes]\n[[prizes.groups]]\nname = "Open"\n'


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        (
            _GROUP + 'places = [500, "", 1.005]\n',
            "prizes.groups[1].places: place 2: a trophy must have a name; place 3: must be an"
            " amount of at least 0, in cents at most, got 1.005",
        ),
        (
            _GROUP + "places = []\n",
            "prizes.groups[1].places: must be an array of places (1st first), each an amount"
            ' (500, 120.50), a trophy ("trophy") or { amount = 120, trophy = "medal" }',
        ),
        (
            _GROUP + "places = [{ amount = 0 }]\n",
            "prizes.groups[1].places: place 1: a place needs an amount above 0 or a trophy",
        ),
        (
            _GROUP + 'places = [100]\nrating = "under 1600"\n',
            'prizes.groups[1].rating: must be a rating band like "1600-1799", "U1600" or'
            ' "1800+", got "under 1600"',
        ),
        (
            _GROUP + 'places = [100]\nrating = "1800-1600"\n',
            'prizes.groups[1].rating: rating band "1800-1600" holds no rating',
        ),
        (
            _GROUP + "places = [100]\nrating_group = 2\n",
            "prizes.groups[1].rating_group: needs groups_after (the round the groups are formed"
            " after)",
        ),
        (
            '\n[prizes]\ngroups_after = 2\n[[prizes.groups]]\nname = "G"\nplaces = [1]\n'
            "rating_group = 9\n",
            "prizes.groups[1].rating_group: group 9 is not eligible: groups run from 1 (the"
            " lowest) to 9 (the highest, not eligible for rating-group prizes)",
        ),
        (
            _GROUP + 'places = [100]\n[[prizes.groups]]\nname = "Open"\nplaces = [50]\n',
            'prizes.groups[2].name: "Open" is also groups[1]',
        ),
        (
            _GROUP + 'places = [100]\nborn_from = "2008"\n',
            'prizes.groups[1].born_from: must be a date like 2008-01-01, got "2008"',
        ),
        (
            '\n[prizes]\ncountback = ["PS", "DE"]\n[[prizes.groups]]\nname = "O"\nplaces = [1]\n',
            'prizes.countback[2]: tie-break "DE" is not one dgtcast computes'
            " (BH SB PS WIN WON BPG BWG ARO)",
        ),
        (
            _GROUP + "places = [100]\nplace = 3\n",
            'prizes.groups[1].place: unknown key (did you mean "places"?)',
        ),
    ],
)
def test_a_bad_prize_table_gets_one_line_naming_the_key(table: str, problem: str) -> None:
    assert _problems(EVENT + table) == [f"config.toml: {problem}"]


def test_cross_key_problems_are_all_reported(tmp_path: Path) -> None:
    table = '\n[prizes]\nratings = "missing.csv"\n[[prizes.groups]]\nname = "O"\nplaces = [1]\n'
    assert _problems(EVENT + table) == [
        f'config.toml: prizes.ratings: no such file "{tmp_path / "missing.csv"}"',
        "config.toml: prizes.rating_systems: required with ratings (the CSV's columns,"
        " highest first)",
    ]


def test_prizes_need_the_sections_trf() -> None:
    text = (
        EVENT.replace('[pairing]\ntrf = "open.trf"\npairings = "pairs.txt"\n', "")
        + _GROUP
        + "places = [1]\n"
    )
    assert _problems(text) == [
        "config.toml: prizes: needs the section's [pairing] (prizes come from its TRF)"
    ]
