"""The configuration: the shipped files load, and every bad file gets its one-line errors."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.config.model import (
    ARBITER_TOKEN_ENV,
    EXIT_BAD_CONFIG,
    Config,
    ConfigError,
    format_config_errors,
    load_config,
)
from daemon.game.durations import Period, TimeControl, format_duration, parse_duration
from daemon.links.pairing import apply_pairings
from daemon.pairing import PairingFileError
from tests.shared_data import ROOT

NOW = dt.datetime(2026, 6, 24, 9, 41, 7, tzinfo=dt.timezone(dt.timedelta(hours=10)))

GOOD = """\
[event]
name = "Victorian Open 2026"
round = 3
time_control = "5400+30"

[[boards]]
number = 1
port = "/dev/ttyACM0"
white = "Smith, John"
black = "Doe, Jane"

[[boards]]
number = 2
port = "/dev/ttyACM1"
white = "Nguyen, Anh"
black = "Kowalski, Piotr"
"""

SECTIONS = """\
[event]
name = "Juniors"
round = 1

[[sections]]
name = "U18"
time_control = "4500+30"
[[sections.boards]]
number = 1
port = "/dev/ttyACM0"

[[sections]]
name = "U12"
time_control = "2400+30"
[[sections.boards]]
number = 2
"""


def load_text(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> Config:
    """Write ``config.toml`` in the working directory and load it by that relative name."""
    (tmp_path / "config.toml").write_text(text, encoding="utf-8")
    return load_config(Path("config.toml"), env=env or {}, now=NOW)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


# -- the shipped files ----------------------------------------------------------------------


def test_example_loads_with_every_key_of_the_issue() -> None:
    config = load_config(ROOT / "config" / "example.toml", env={}, now=NOW)
    (section,) = config.sections
    event = section.event
    assert section.name == ""
    assert event.name == "Victorian Open 2026"
    assert event.site == "Box Hill Chess Club"
    assert event.date == dt.date(2026, 6, 24)
    assert event.round == 3
    assert event.round_start is not None
    assert event.round_start.isoformat() == "2026-06-24T10:00:00+10:00"
    assert (event.time_control.base, event.time_control.increment) == (5400, 30)
    assert event.dgt_mode == 23
    assert event.default_time == 1800
    assert event.default_at is not None
    assert event.default_at.isoformat() == "2026-06-24T10:30:00+10:00"
    assert config.server.arbiter_token == "change-me-to-a-long-secret"
    assert config.storage.path == ROOT / "config" / "dgtcast.db"
    assert [b.number for b in config.boards] == [1, 2, 3]
    first = config.board(1)
    assert (first.port, first.white, first.black) == ("/dev/ttyACM0", "Smith, John", "Doe, Jane")
    assert (first.white_elo, first.white_fide_id, first.white_title) == (2105, 3204560, "FM")
    assert config.board(2).clock_white_side == "right"
    assert not config.board(3).has_eboard


def test_sections_file_loads_two_time_controls() -> None:
    config = load_config(ROOT / "config" / "sections.toml", env={}, now=NOW)
    senior, junior = config.sections
    assert (senior.name, junior.name) == ("U18-U14", "U12-U10")
    assert str(senior.event.time_control) == "4500+30"
    assert str(junior.event.time_control) == "2400+30"
    assert senior.event.name == junior.event.name == "Victorian Junior Championship 2026"
    assert junior.event.round_start is not None
    assert senior.event.round_start is not None
    assert junior.event.round_start - senior.event.round_start == dt.timedelta(minutes=15)
    assert senior.event.default_time == junior.event.default_time == 1800
    assert config.section_of(11) is junior
    assert [b.number for b in senior.boards] == [1, 2, 3]
    assert config.pgn_folder is not None
    assert config.pgn_folder.path == ROOT / "config" / "pgn" / "round-2"


# -- defaults, environment, normalisation -----------------------------------------------------


def test_defaults_fill_the_optional_keys(tmp_path: Path) -> None:
    config = load_text(tmp_path, GOOD)
    event = config.sections[0].event
    assert event.round_start is None, "the round starts when its first clock is started"
    assert event.date == NOW.date()
    assert (event.default_time, event.default_time_warning, event.dgt_mode) == (0, 300, None)
    assert (config.server.host, config.server.port, config.server.public_delay) == (
        "127.0.0.1",
        8080,
        0,
    )
    assert config.server.arbiter_token is None
    assert config.storage.path == tmp_path / "dgtcast.db"
    assert config.storage.synchronous == "normal"
    assert (config.mqtt, config.webhook, config.pairing) == (None,) * 3
    assert config.lichess == ()


def test_one_event_and_sections_normalise_to_the_same_model(tmp_path: Path) -> None:
    config = load_text(tmp_path, SECTIONS)
    assert [s.name for s in config.sections] == ["U18", "U12"]
    assert [s.event.round for s in config.sections] == [1, 1]
    assert [b.number for b in config.boards] == [1, 2]
    assert config.board(2).port is None
    with pytest.raises(KeyError):
        config.board(3)


def test_environment_token_wins_over_the_file(tmp_path: Path) -> None:
    text = GOOD + '[server]\nhost = "0.0.0.0"\narbiter_token = "change-me"\n'
    config = load_text(tmp_path, text, env={ARBITER_TOKEN_ENV: "s3cret-venue-token"})
    assert config.server.arbiter_token == "s3cret-venue-token"


def test_naive_round_start_is_local_time(tmp_path: Path) -> None:
    text = GOOD.replace("round = 3", "round = 3\nround_start = 2026-06-24T10:00:00")
    start = load_text(tmp_path, text).sections[0].event.round_start
    assert start is not None
    assert start.tzinfo is not None
    assert start == dt.datetime(2026, 6, 24, 10, 0).astimezone()


def test_optional_tables_validate_and_resolve(tmp_path: Path) -> None:
    (data := tmp_path / "data").mkdir()
    (data / "open.trf").touch()
    (tmp_path / "pairs.txt").touch()
    trf = data / "open.trf"
    text = GOOD + (
        '[mqtt]\nhost = "broker"\nprefix = "/venue/"\nusername = "u"\n'
        '[lichess]\nenabled = true\npush_url = "https://lichess.org/api/broadcast/round/abcd1234/push"\n'
        f'[pairing]\ntrf = "{trf}"\npairings = "pairs.txt"\n'
        '[webhook]\nurl = "http://localhost:9000/hook"\n'
        '[storage]\nsynchronous = "full"\n'
    )
    config = load_text(
        tmp_path, text, env={"DGTCAST_LICHESS_TOKEN": "lip_x", "DGTCAST_MQTT_PASSWORD": "p"}
    )
    assert config.mqtt is not None
    assert config.mqtt.prefix == "venue"
    assert (config.mqtt.port, config.mqtt.password, config.mqtt.enabled) == (1883, "p", True)
    assert [table.token for table in config.lichess] == ["lip_x"]
    assert config.pairing is not None
    assert config.pairing.trf == trf
    assert config.pairing.pairings == tmp_path / "pairs.txt"
    assert config.storage.synchronous == "full"


# -- the table of bad configurations ----------------------------------------------------------

BAD: list[tuple[str, str, list[str]]] = [
    (
        "toml-syntax",
        GOOD.replace("round = 3", "round = "),
        ["config.toml: line 3, column 9: TOML syntax error: Invalid value"],
    ),
    (
        "duplicate-port",
        GOOD.replace("/dev/ttyACM1", "/dev/ttyACM0"),
        ['config.toml: boards[2].port: duplicate port "/dev/ttyACM0" (also board 1)'],
    ),
    (
        "duplicate-number",
        GOOD.replace("number = 2", "number = 1"),
        ["config.toml: boards[2].number: duplicate board number 1 (also boards[1])"],
    ),
    (
        "duplicate-number-across-sections",
        SECTIONS.replace("number = 2", "number = 1"),
        [
            "config.toml: sections[2].boards[1].number: duplicate board number 1"
            " (also sections[1].boards[1])"
        ],
    ),
    (
        "bad-duration",
        GOOD.replace("round = 3", 'round = 3\ndefault_time = "30 min"'),
        [
            'config.toml: event.default_time: invalid duration "30 min":'
            ' write it like "45s", "30m" or "1h30m"'
        ],
    ),
    (
        "duration-not-a-string",
        GOOD.replace("round = 3", "round = 3\ndefault_time = 30"),
        ['config.toml: event.default_time: must be a duration in quotes like "30m", got 30'],
    ),
    (
        "bad-time-control",
        GOOD.replace('"5400+30"', '"90 min + 30 s"'),
        [
            'config.toml: event.time_control: invalid time control "90 min + 30 s":'
            ' write it like "5400+30", "40/5400+30:1800+30" or "40 moves in 90m + 30s,'
            ' then 30m + 30s"'
        ],
    ),
    (
        "time-control-period-order",
        GOOD.replace('"5400+30"', '"5400+30:40/1800"'),
        [
            'config.toml: event.time_control: invalid time control "5400+30:40/1800":'
            " only the last period may be for the rest of the game"
        ],
    ),
    (
        "round-zero",
        GOOD.replace("round = 3", "round = 0"),
        ["config.toml: event.round: must be at least 1, got 0"],
    ),
    (
        "round-as-text",
        GOOD.replace("round = 3", 'round = "3"'),
        ['config.toml: event.round: must be a whole number, got "3"'],
    ),
    (
        "unknown-key-typo",
        GOOD.replace('white = "Smith, John"', 'white = "Smith, John"\nwhite_eol = 2105'),
        ['config.toml: boards[1].white_eol: unknown key (did you mean "white_elo"?)'],
    ),
    (
        "unknown-table",
        GOOD + "[broadcast]\nport = 1\n",
        ["config.toml: broadcast: unknown key"],
    ),
    (
        "missing-event-name",
        GOOD.replace('name = "Victorian Open 2026"\n', ""),
        ["config.toml: event.name: required"],
    ),
    (
        "sections-without-event-name",
        SECTIONS.replace('name = "Juniors"\n', ""),
        ["config.toml: event.name: required (the name the sections share)"],
    ),
    (
        "no-event-table",
        "[[boards]]" + GOOD.split("[[boards]]", 1)[1],
        ["config.toml: event: required table missing (or use [[sections]])"],
    ),
    (
        "missing-time-control",
        GOOD.replace('time_control = "5400+30"\n', ""),
        ["config.toml: event.time_control: required"],
    ),
    (
        "section-without-time-control",
        SECTIONS.replace('time_control = "2400+30"\n', ""),
        ["config.toml: sections[2].time_control: required, here or in [event]"],
    ),
    (
        "dgt-mode-not-23",
        GOOD.replace("round = 3", "round = 3\ndgt_mode = 12"),
        [
            "config.toml: event.dgt_mode: only 23 (computer-controlled clocks,"
            " docs/protocol.md §8) is supported, got 12"
        ],
    ),
    (
        "public-host-without-token",
        GOOD + '[server]\nhost = "0.0.0.0"\n',
        [
            'config.toml: server.arbiter_token: required when serving on "0.0.0.0"'
            " (or set DGTCAST_ARBITER_TOKEN)"
        ],
    ),
    (
        "public-host-with-placeholder-token",
        GOOD + '[server]\nhost = "192.168.1.20"\narbiter_token = "change-me"\n',
        [
            'config.toml: server.arbiter_token: too easy to guess for "192.168.1.20":'
            " use at least 12 random characters"
        ],
    ),
    (
        "server-port-out-of-range",
        GOOD + "[server]\nport = 80800\n",
        ["config.toml: server.port: must be at most 65535, got 80800"],
    ),
    (
        "public-delay-too-long",
        GOOD + '[server]\npublic_delay = "2h"\n',
        [
            "config.toml: server.public_delay: must be at most 1h"
            ' (lichess allows 0-3600 s), got "2h"'
        ],
    ),
    (
        "round-start-not-a-time",
        GOOD.replace("round = 3", 'round = 3\nround_start = "10am"'),
        [
            "config.toml: event.round_start: must be a date and time like"
            ' 2026-06-24T10:00:00+10:00, got "10am"'
        ],
    ),
    (
        "bad-title",
        GOOD.replace('black = "Doe, Jane"', 'black = "Doe, Jane"\nblack_title = "gm"'),
        [
            'config.toml: boards[1].black_title: must be "GM", "IM", "FM", "CM", "WGM",'
            ' "WIM", "WFM" or "WCM", got "gm"'
        ],
    ),
    (
        "bad-clock-side",
        GOOD.replace('black = "Doe, Jane"', 'black = "Doe, Jane"\nclock_white_side = "up"'),
        ['config.toml: boards[1].clock_white_side: must be "left" or "right", got "up"'],
    ),
    (
        "elo-out-of-range",
        GOOD.replace('black = "Doe, Jane"', 'black = "Doe, Jane"\nblack_elo = 5000'),
        ["config.toml: boards[1].black_elo: must be at most 4000, got 5000"],
    ),
    (
        "player-on-two-boards",
        GOOD.replace("Nguyen, Anh", "Doe, Jane"),
        ['config.toml: boards[2].white: "Doe, Jane" already plays on board 1'],
    ),
    (
        "player-against-themselves",
        GOOD.replace("Kowalski, Piotr", "Nguyen, Anh"),
        ['config.toml: boards[2].black: "Nguyen, Anh" cannot play themselves'],
    ),
    (
        "boards-and-sections",
        SECTIONS + "[[boards]]\nnumber = 9\n",
        [
            "config.toml: boards: top-level [[boards]] cannot be combined with [[sections]];"
            " move them into [[sections.boards]]"
        ],
    ),
    (
        "no-boards",
        GOOD.split("[[boards]]")[0],
        ["config.toml: boards: no boards configured; add [[boards]] tables"],
    ),
    (
        "boards-as-a-table",
        GOOD.split("[[boards]]")[0] + "[boards]\nnumber = 1\n",
        ["config.toml: boards: must be an array of tables, got a table"],
    ),
    (
        "lichess-without-token",
        GOOD + '[lichess]\nenabled = true\npush_url = "https://lichess.org/x"\n',
        [
            "config.toml: lichess.token: required when lichess.enabled = true"
            " (or set DGTCAST_LICHESS_TOKEN)"
        ],
    ),
    (
        "webhook-not-a-url",
        GOOD + '[webhook]\nurl = "localhost:9000"\n',
        ['config.toml: webhook.url: must be an http:// or https:// address, got "localhost:9000"'],
    ),
    (
        "mqtt-password-alone",
        GOOD + '[mqtt]\npassword = "p"\n',
        ["config.toml: mqtt.password: given without mqtt.username"],
    ),
    (
        "mqtt-daemon-id-with-slash",
        GOOD + '[mqtt]\ndaemon_id = "hall/2"\n',
        ['config.toml: mqtt.daemon_id: must be a name without /, +, # or spaces, got "hall/2"'],
    ),
    (
        "mqtt-ca-file-without-tls",
        GOOD + '[mqtt]\nca_file = "venue-ca.pem"\n',
        ["config.toml: mqtt.ca_file: given without mqtt.tls = true"],
    ),
    (
        "several-problems-one-line-each",
        GOOD.replace("round = 3", "round = -1").replace("number = 2", 'number = "two"'),
        [
            "config.toml: event.round: must be at least 1, got -1",
            'config.toml: boards[2].number: must be a whole number, got "two"',
        ],
    ),
    (
        "empty-port",
        GOOD.replace('"/dev/ttyACM1"', '""'),
        ["config.toml: boards[2].port: must not be empty"],
    ),
    (
        "names-are-pgn-tag-values",
        GOOD.replace('"Smith, John"', '"Smith,\\tJohn"')
        .replace('"Doe, Jane"', '"' + "D" * 201 + '"')
        .replace('"Victorian Open 2026"', '"Victorian\\u2028Open"'),
        [
            "config.toml: event.name: must be one line of text;"
            " it holds a line break (U+2028) at position 10",
            "config.toml: boards[1].white: must be one line of text;"
            " it holds a control character (U+0009) at position 7",
            "config.toml: boards[1].black: must be at most 200 characters, got 201",
        ],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_configuration_gives_its_one_line_errors(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_text(tmp_path, text)
    assert list(caught.value.problems) == expected
    assert format_config_errors(caught.value) == "\n".join(expected)
    assert "Traceback" not in str(caught.value)


def test_cross_key_problems_are_all_reported(tmp_path: Path) -> None:
    text = GOOD.replace("number = 2", "number = 1").replace("/dev/ttyACM1", "/dev/ttyACM0")
    with pytest.raises(ConfigError) as caught:
        load_text(tmp_path, text)
    assert caught.value.problems == (
        "config.toml: boards[2].number: duplicate board number 1 (also boards[1])",
        'config.toml: boards[2].port: duplicate port "/dev/ttyACM0" (also board 1)',
    )


def test_missing_and_undecodable_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config("nowhere.toml", env={}, now=NOW)
    assert caught.value.problems == (
        "nowhere.toml: cannot read the file: No such file or directory",
    )
    (tmp_path / "latin1.toml").write_bytes('[event]\nname = "Café"\n'.encode("latin-1"))
    with pytest.raises(ConfigError) as caught:
        load_config("latin1.toml", env={}, now=NOW)
    assert caught.value.problems == ("latin1.toml: not UTF-8 text",)


def test_bad_configuration_exit_code_is_two() -> None:
    assert EXIT_BAD_CONFIG == 2


# -- durations and time controls -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"), [("0s", 0), ("45s", 45), ("30m", 1800), ("1h30m", 5400), ("1h5s", 3605)]
)
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds
    assert format_duration(seconds) == text


@pytest.mark.parametrize("text", ["", "30", "30 m", "1m1h", "-5s", "1.5h", "h"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)


@settings(max_examples=200)
@given(st.integers(min_value=0, max_value=100 * 3600))
def test_duration_round_trip(seconds: int) -> None:
    assert parse_duration(format_duration(seconds)) == seconds


def test_time_control_forms() -> None:
    simple = TimeControl.from_pgn("5400+30")
    assert (simple.base, simple.increment, simple.start_readings) == (
        5400,
        30,
        frozenset({5400, 5430}),
    )
    assert TimeControl.from_pgn("300").start_readings == frozenset({300})
    classical = TimeControl.from_pgn("40/5400+30:1800+30")
    assert classical.periods == (
        Period(moves=40, seconds=5400, increment=30),
        Period(moves=None, seconds=1800, increment=30),
    )
    assert str(classical) == "40/5400+30:1800+30"
    assert [classical.added_after(n) for n in (1, 39, 40, 41, 80)] == [30, 30, 1830, 30, 30]
    repeating = TimeControl.from_pgn("40/7200")
    assert [repeating.added_after(n) for n in (1, 40, 41, 80)] == [0, 7200, 0, 7200]


@pytest.mark.parametrize("text", ["?", "-", "*180", "0", "0/300", "5400+", "40/5400:20/1800:", ""])
def test_time_controls_dgtcast_cannot_check_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="invalid time control"):
        TimeControl.from_pgn(text)


@settings(max_examples=100)
@given(
    st.lists(
        st.tuples(st.integers(1, 60), st.integers(1, 10_000), st.integers(0, 60)),
        min_size=1,
        max_size=3,
    ),
    st.booleans(),
)
def test_time_control_text_round_trip(periods: list[tuple[int, int, int]], repeat: bool) -> None:
    parts = [Period(moves=m, seconds=s, increment=i) for m, s, i in periods]
    if not repeat:
        last = parts[-1]
        parts[-1] = Period(moves=None, seconds=last.seconds, increment=last.increment)
    control = TimeControl(periods=tuple(parts))
    assert TimeControl.from_pgn(str(control)) == control


def test_the_pairing_table_may_name_the_tie_breaks(tmp_path: Path) -> None:
    (tmp_path / "open.trf").touch()
    (tmp_path / "pairs.txt").touch()
    table = '[pairing]\ntrf = "open.trf"\npairings = "pairs.txt"\n'
    config = load_text(tmp_path, GOOD + table + 'tiebreaks = ["BH-C1", "BH/M1", "SB"]\n')
    assert config.pairing is not None
    assert config.pairing.tiebreaks == ["BH-C1", "BH/M1", "SB"]
    with pytest.raises(ConfigError) as caught:
        load_text(tmp_path, GOOD + table + 'tiebreaks = ["Buchholz"]\n')
    assert caught.value.problems == (
        'config.toml: pairing.tiebreaks[1]: must be a tie-break code like "BH-C1", got "Buchholz"',
    )
    # A code of the right shape that dgtcast does not compute: refused when the daemon
    # reads the section's pairing, in one line, before the TRF is read.
    config = load_text(tmp_path, GOOD + table + 'tiebreaks = ["DE", "SB"]\n')
    with pytest.raises(PairingFileError) as refused:
        apply_pairings(config)
    assert list(refused.value.problems) == [
        'config.toml: [pairing] tiebreaks: tie-break "DE" is not one dgtcast computes'
        " (BH SB PS WIN WON BPG BWG ARO)"
    ]
