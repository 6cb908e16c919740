"""``[analysis]`` in the configuration: its keys, one-line errors and the off note."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

import pytest

from broadcast.analysis.engine import DEFAULT_TIME
from daemon.config.model import Config, ConfigError, load_config
from daemon.links.analysis import analysis_off, analysis_settings
from daemon.shell.app import Daemon, DaemonOptions
from tests.daemon.config.test_config import GOOD

NOW = dt.datetime(2026, 6, 24, 10, 0, tzinfo=dt.UTC)


def load(tmp_path: Path, table: str) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(GOOD + "\n[analysis]\n" + table, encoding="utf-8")
    return load_config(path, env={}, now=NOW)


def test_off_by_default_and_its_defaults(tmp_path: Path) -> None:
    config = load(tmp_path, "")
    assert config.analysis is not None
    assert not config.analysis.enabled
    assert analysis_settings(config.analysis) is None
    settings = analysis_settings(load(tmp_path, "enabled = true\n").analysis)
    assert settings is not None
    assert (settings.time, settings.depth, settings.threads, settings.hash_mb) == (
        DEFAULT_TIME,
        None,
        1,
        16,
    )
    assert (settings.engine, settings.boards, settings.sections) == (None, None, None)


def test_every_key(tmp_path: Path) -> None:
    table = (
        'enabled = true\nengine = "/usr/local/bin/sf"\nboards = [2]\ndepth = 18\n'
        "threads = 2\nhash = 64\n"
    )
    settings = analysis_settings(load(tmp_path, table).analysis)
    assert settings is not None
    assert (settings.engine, settings.boards, settings.time, settings.depth) == (
        "/usr/local/bin/sf",
        (2,),
        None,  # a depth alone bounds by depth alone
        18,
    )
    assert (settings.threads, settings.hash_mb) == (2, 64)


@pytest.mark.parametrize(
    ("table", "line"),
    [
        ("time = 0\n", "analysis.time: must be more than 0.0, got 0"),
        ('depth = "deep"\n', 'analysis.depth: must be a whole number, got "deep"'),
        ("threads = 0\n", "analysis.threads: must be at least 1, got 0"),
        ("boards = [7]\n", "analysis.boards: board 7 is not configured"),
        ('sections = ["U12"]\n', "analysis.sections: no section named 'U12'"),
        ("enable = true\n", 'analysis.enable: unknown key (did you mean "enabled"?)'),
    ],
)
def test_a_bad_value_is_one_line_naming_the_key(tmp_path: Path, table: str, line: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, table)
    (problem,) = caught.value.problems
    assert problem.endswith(line), problem


async def test_a_table_that_is_off_says_so_at_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = load(tmp_path, "enabled = false\ndepth = 20\n")
    assert analysis_off(config) is not None
    path = tmp_path / "config.toml"
    path.write_text(path.read_text().replace("/dev/ttyACM", str(tmp_path / "no-port-")))
    with caplog.at_level(logging.WARNING):
        daemon = await Daemon.open(path, DaemonOptions(port=0))
        daemon.journal.close()
    said = [r.getMessage() for r in caplog.records]
    assert any("[analysis] is off (enabled = false)" in line for line in said), said
