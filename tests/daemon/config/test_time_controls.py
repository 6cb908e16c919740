"""Time controls in the configuration: both notations, periods, time odds, draw odds."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.config.model import ConfigError, load_config
from daemon.game.durations import ClockRules, Period, TimeControl
from tests.shared_data import ROOT

NOW = dt.datetime(2026, 6, 24, 9, 0, tzinfo=dt.UTC)

BASE = """\
[event]
name = "Norway Blitz"
round = 1
{keys}

[[boards]]
number = 1
port = "/dev/ttyACM0"
"""


def _load(tmp_path: Path, keys: str) -> ClockRules:
    path = tmp_path / "round.toml"
    path.write_text(BASE.format(keys=keys))
    (section,) = load_config(path, env={}, now=NOW).sections
    return section.event.clock_rules


def _problems(tmp_path: Path, keys: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, keys)
    return list(caught.value.problems)


@pytest.mark.parametrize(
    ("text", "pgn"),
    [
        ("5400+30", "5400+30"),
        ("90m + 30s", "5400+30"),
        ("1h30m+30s", "5400+30"),
        ("40/5400+30:1800+30", "40/5400+30:1800+30"),
        ("40 moves in 90m + 30s, then 30m + 30s", "40/5400+30:1800+30"),
        ("40 Moves in 90m + 30s, 30m + 30s", "40/5400+30:1800+30"),
        ("40/7200:3600", "40/7200:3600"),
        ("40 moves in 2h, then 1h", "40/7200:3600"),
        ("40/7200:20/3600:900+30", "40/7200:20/3600:900+30"),
        ("40 moves in 2h, then 20 moves in 1h, then 15m + 30s", "40/7200:20/3600:900+30"),
        (
            "40 moves in 100m + 30s, then 20 moves in 50m + 30s, then 15m + 30s",
            "40/6000+30:20/3000+30:900+30",
        ),
        ("5m, +2s from move 61", "60/300:0+2"),
        ("60/300:0+2", "60/300:0+2"),
    ],
)
def test_both_notations_give_the_pgn_time_control(text: str, pgn: str) -> None:
    control = TimeControl.from_text(text)
    assert str(control) == pgn
    assert TimeControl.from_text(control.spoken()) == control, control.spoken()


def test_what_each_press_adds_across_periods() -> None:
    three = TimeControl.from_text("40/7200:20/3600:900+30")
    assert [three.added_after(n) for n in (1, 40, 41, 60, 61, 100)] == [0, 3600, 0, 900, 30, 30]
    late = TimeControl.from_text("5m, +2s from move 61")
    assert [late.added_after(n) for n in (1, 60, 61, 62)] == [0, 0, 2, 2]
    assert late.start_seconds == 300


@settings(max_examples=100)
@given(
    st.lists(
        st.tuples(st.integers(1, 60), st.integers(1, 3 * 3600), st.integers(0, 60)),
        min_size=1,
        max_size=3,
    )
)
def test_the_readable_form_round_trips(periods: list[tuple[int, int, int]]) -> None:
    parts = [Period(moves=m, seconds=s, increment=i) for m, s, i in periods]
    parts[-1] = Period(moves=None, seconds=parts[-1].seconds, increment=parts[-1].increment)
    control = TimeControl(periods=tuple(parts))
    assert TimeControl.from_text(control.spoken()) == control


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ('"90 min + 30 s"', 'write it like "5400+30", "40/5400+30:1800+30" or'),
        ('"40 moves in 90m, then"', '"then" is not a period'),
        ('"30m, 40 moves in 90m"', "only the last period may be for the rest of the game"),
        ('"5m, +2s from move 1"', "an increment from move 1 is written as the period's own"),
        ('"10h"', "a DGT clock shows at most 9:59:59"),
        ('"0+2"', "the first period needs at least one second"),
        ("5400.5", 'must be a time control in quotes like "5400+30", got 5400.5'),
    ],
)
def test_bad_time_controls_get_one_line(tmp_path: Path, value: str, why: str) -> None:
    (problem,) = _problems(tmp_path, f"time_control = {value}")
    assert problem.startswith("round.toml: event.time_control: ") or "time_control" in problem
    assert why in problem
    assert "\n" not in problem


def test_armageddon_keys(tmp_path: Path) -> None:
    rules = _load(
        tmp_path,
        'time_control = "5m, +2s from move 61"\n'
        'black_time_control = "4m, +2s from move 61"\n'
        'draw_odds = "black"',
    )
    assert (str(rules.white), str(rules.black), rules.draw_odds) == (
        "60/300:0+2",
        "60/240:0+2",
        "black",
    )
    assert rules.tags() == {
        "TimeControl": "60/300:0+2",
        "WhiteTimeControl": "60/300:0+2",
        "BlackTimeControl": "60/240:0+2",
        "DrawOdds": "Black",
    }


def test_one_control_for_both_by_default(tmp_path: Path) -> None:
    rules = _load(tmp_path, 'time_control = "40 moves in 90m + 30s, then 30m + 30s"')
    assert rules.white == rules.black
    assert rules.tags() == {"TimeControl": "40/5400+30:1800+30"}


def test_bad_draw_odds(tmp_path: Path) -> None:
    (problem,) = _problems(tmp_path, 'time_control = "300"\ndraw_odds = "blue"')
    assert "round.toml: event.draw_odds: " in problem


def test_variant_key(tmp_path: Path) -> None:
    path = tmp_path / "round.toml"
    path.write_text(BASE.format(keys='time_control = "300"\nvariant = "chess960"'))
    (section,) = load_config(path, env={}, now=NOW).sections
    assert section.event.variant == "chess960"
    (problem,) = _problems(tmp_path, 'time_control = "300"\nvariant = "crazyhouse"')
    assert "round.toml: event.variant: " in problem


def test_the_playoffs_example_loads() -> None:
    config = load_config(ROOT / "config" / "playoffs.toml", env={}, now=NOW)
    final, freestyle, armageddon = (s.event for s in config.sections)
    assert str(final.time_control) == "40/5400+30:1800+30"
    assert (freestyle.variant, str(freestyle.time_control)) == ("chess960", "1500+10")
    rules = armageddon.clock_rules
    assert (str(rules.white), str(rules.black), rules.draw_odds) == (
        "60/300:0+2",
        "60/240:0+2",
        "black",
    )
