"""The ``[livechess]`` table: off by default, LiveChess's port, paths from the file's folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.config.model import ConfigError, load_config
from daemon.links.livechess import livechess_folder, livechess_settings, tournaments
from daemon.round.core import RoundCore
from tests.daemon.config_file import TomlTable
from tests.daemon.support import BoardSpec, write_config


def test_without_the_table_nothing_is_served(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, [BoardSpec(1, None)]))
    assert config.livechess is None
    assert livechess_settings(config) is None
    assert livechess_folder(config) is None


def test_enabled_serves_on_1982_and_the_folder_is_relative_to_the_file(tmp_path: Path) -> None:
    tables: dict[str, TomlTable] = {"livechess": {"enabled": True, "folder": "lc"}}
    config = load_config(write_config(tmp_path, [BoardSpec(1, None, "Doe, Jane")], tables=tables))
    settings = livechess_settings(config)
    assert settings is not None
    assert (settings.host, settings.port) == ("127.0.0.1", 1982)
    assert config.livechess is not None
    assert config.livechess.folder == tmp_path / "lc"
    assert livechess_folder(config) is not None
    (tournament,) = tournaments(config)
    assert (tournament.name, tournament.round, tournament.site) == ("Test Open", 2, "Test Club")
    assert tournament.pairings[0].white.name == "Doe, Jane"


def test_allowed_origins_reach_the_api(tmp_path: Path) -> None:
    livechess: TomlTable = {"enabled": True, "allowed_origins": ["https://Overlay.example.org/"]}
    settings = livechess_settings(
        load_config(write_config(tmp_path, [BoardSpec(1, None)], tables={"livechess": livechess}))
    )
    assert settings is not None
    assert settings.allowed_origins == ("https://overlay.example.org",)


def test_the_folder_alone_does_not_open_the_port(tmp_path: Path) -> None:
    config = load_config(
        write_config(tmp_path, [BoardSpec(1, None)], tables={"livechess": {"folder": "lc"}})
    )
    assert livechess_settings(config) is None
    assert livechess_folder(config) is not None


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ("port = 0", "livechess.port"),
        ('port = "1982"', "livechess.port"),
        ("enable = true", "livechess.enable"),
        ('allowed_origins = ["evil.example"]', "livechess.allowed_origins"),
        ('allowed_origins = ["null"]', "livechess.allowed_origins"),
    ],
)
def test_a_bad_key_is_named_in_one_line(tmp_path: Path, table: str, words: str) -> None:
    path = write_config(tmp_path, [BoardSpec(1, None)], extra=f"\n[livechess]\n{table}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert len(raised.value.problems) == 1
    assert words in raised.value.problems[0]


def test_a_board_named_by_serial_carries_it_before_it_is_heard(tmp_path: Path) -> None:
    extra = '\n[[boards]]\nnumber = 2\nport = "/dev/null/none"\nserial = "23946"\n'
    config = load_config(write_config(tmp_path, [BoardSpec(1, None)], extra=extra))
    state = RoundCore(config).board_state(2, 0.0)
    assert (state.serial, state.port) == ("23946", None)


def test_the_sections_example_names_a_tournament_per_section() -> None:
    config = load_config(Path(__file__).parents[2] / "config" / "sections.toml", env={})
    settings = livechess_settings(config)
    assert settings is not None
    assert settings.port == 1982
    assert [t.section for t in settings.tournaments] == ["U18-U14", "U12-U10"]
    assert len({t.uuid for t in settings.tournaments}) == 2
