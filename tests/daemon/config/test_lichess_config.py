"""``[lichess]`` and ``[[lichess]]``: lichess rounds per section or board range, checked."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from broadcast.outputs.lichess import LichessTarget
from daemon.config.lichess import lichess_targets
from daemon.config.model import Config, ConfigError, load_config

NOW = dt.datetime(2026, 6, 24, 9, 0, tzinfo=dt.UTC)


def event(boards_open: int = 3, boards_u12: int = 2) -> str:
    text = '[event]\nname = "Club Open"\nround = 2\ntime_control = "5400+30"\n'
    number = 0
    for name, count in (("Open", boards_open), ("U12", boards_u12)):
        if not count:
            continue
        text += f'\n[[sections]]\nname = "{name}"\n'
        for _ in range(count):
            number += 1
            text += f"[[sections.boards]]\nnumber = {number}\n"
    return text


def load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path, env=env or {}, now=NOW)


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    prefix = f"{tmp_path / 'config.toml'}: "
    return [line.removeprefix(prefix) for line in caught.value.problems]


def test_one_lichess_round_per_section(tmp_path: Path) -> None:
    text = event() + (
        '\n[[lichess]]\nsection = "Open"\ntoken = "lip_a"\n'
        'rounds = { 1 = "Open0001", 2 = "Open0002" }\n'
        '\n[[lichess]]\nsection = "U12"\ntoken = "lip_b"\nrounds = { 2 = "Juni0002" }\n'
    )
    targets = lichess_targets(load(tmp_path, text).lichess)
    assert targets == [
        LichessTarget(token="lip_a", rounds={"1": "Open0001", "2": "Open0002"}, section="Open"),
        LichessTarget(token="lip_b", rounds={"2": "Juni0002"}, section="U12"),
    ]


def test_board_ranges_and_the_old_single_table(tmp_path: Path) -> None:
    text = event(150, 0) + (
        '\n[[lichess]]\nboards = "1-100"\nrounds = { 2 = "Part0001" }\n'
        '\n[[lichess]]\nboards = "101 - 150"\nrounds = { 2 = "Part0002" }\n'
    )
    config = load(tmp_path, text, env={"DGTCAST_LICHESS_TOKEN": "lip_env"})
    assert [(t.boards, t.token) for t in lichess_targets(config.lichess)] == [
        ((1, 100), "lip_env"),
        ((101, 150), "lip_env"),
    ]
    single = event() + '\n[lichess]\nenabled = true\npush_url = "https://lichess.org/api/x"\n'
    config = load(tmp_path, single + 'token = "lip_x"\n')
    assert [t.push_url for t in lichess_targets(config.lichess)] == ["https://lichess.org/api/x"]
    disabled = event() + '\n[lichess]\npush_url = "https://lichess.org/api/x"\n'
    assert load(tmp_path, disabled).lichess == ()  # the old form is off unless enabled


@pytest.mark.parametrize(
    ("tables", "expected"),
    [
        (
            '[[lichess]]\ntoken = "t"\nrounds = { 2 = "Open0002" }\n',
            [
                "lichess.boards: 150 boards would go to one lichess round, which keeps 100"
                ' games: split them over several [[lichess]] tables with boards = "1-100"'
                " and so on"
            ],
        ),
        (
            '[[lichess]]\ntoken = "t"\nboards = "1-100"\nrounds = { 2 = "Open0002" }\n'
            '[[lichess]]\ntoken = "t"\nboards = "100-150"\nrounds = { 2 = "Open0003" }\n',
            ["lichess[2].boards: board 100 in round 2 is pushed by lichess[1] too"],
        ),
        (
            '[[lichess]]\ntoken = "t"\nboards = "151-160"\nrounds = { 2 = "Open0002" }\n',
            ["lichess.boards: no configured board in 151-160"],
        ),
        (
            '[[lichess]]\ntoken = "t"\nsection = "Seniors"\nboards = "1-10"\n'
            'rounds = { 2 = "Open0002" }\n',
            ['lichess.section: no section "Seniors" (sections: "Open")'],
        ),
        (
            '[[lichess]]\nboards = "1-10"\nrounds = { 2 = "Open0002" }\n'
            '[[lichess]]\nboards = "11-20"\ntoken = "t"\npush_url = "https://lichess.org/x"\n'
            'rounds = { 2 = "Open0003" }\n',
            [
                "lichess[1].token: required when lichess[1].enabled = true"
                " (or set DGTCAST_LICHESS_TOKEN)",
                "lichess[2].rounds: give rounds or push_url, not both",
            ],
        ),
        (
            '[[lichess]]\ntoken = "t"\nboards = "ten"\nrounds = { 2 = "Open0002" }\n',
            ['lichess[1].boards: must be a board range in quotes like "1-100", got "ten"'],
        ),
        (
            '[[lichess]]\ntoken = "t"\nboards = "1-10"\nrounds = { 2 = "https://lichess.org" }\n',
            [
                "lichess[1].rounds: round 2: must be a lichess round id (the 8 letters and"
                ' digits at the end of the round\'s URL), got "https://lichess.org"'
            ],
        ),
        (
            '[[lichess]]\ntoken = "t"\nboards = "1-10"\nrounds = { first = "Open0002" }\n',
            ['lichess[1].rounds: keys must be round numbers, got "first"'],
        ),
    ],
    ids=[
        "over-100",
        "overlap",
        "no-board",
        "no-section",
        "token-and-both",
        "bad-range",
        "bad-round-id",
        "bad-round-key",
    ],
)
def test_bad_tables_get_one_line_each(tmp_path: Path, tables: str, expected: list[str]) -> None:
    assert problems(tmp_path, event(150, 0) + "\n" + tables) == expected
