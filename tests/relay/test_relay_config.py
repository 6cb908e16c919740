"""A relay's configuration: what loads, what it becomes, and the one-line errors."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from daemon.commands.relay import add_arguments, relay_settings, run
from daemon.config.model import ConfigError
from daemon.config.relay import load_relay_config

GOOD = """\
[server]
host = "0.0.0.0"
port = 8090
arbiter_token = "a-long-random-secret"
public_delay = "15m"

[mqtt]
host = "broker.venue"
port = 8883
prefix = "open2026"
username = "relay"
tls = true
ca_file = "venue-ca.pem"

[relay]
id = "relay-1"
command_timeout = "6s"

[pgn_folder]
path = "pgn"
"""


def load_text(folder: Path, text: str) -> Path:
    path = folder / "relay.toml"
    path.write_text(text)
    return path


def test_a_relay_file_becomes_relay_settings(tmp_path: Path) -> None:
    path = load_text(tmp_path, GOOD)
    config = load_relay_config(path, env={"DGTCAST_MQTT_PASSWORD": "pw"})
    assert (config.mqtt.password, config.mqtt.ca_file) == ("pw", tmp_path / "venue-ca.pem")
    settings = relay_settings(config, port=0)
    mqtt = settings.mqtt
    assert (mqtt.host, mqtt.port, mqtt.prefix, mqtt.daemon_id) == (
        "broker.venue",
        8883,
        "open2026",
        "relay-1",
    )
    assert (mqtt.username, mqtt.password, mqtt.tls) == ("relay", "pw", True)
    assert mqtt.ca_file == str(tmp_path / "venue-ca.pem")
    assert (settings.host, settings.port, settings.delay) == ("0.0.0.0", 0, 900.0)
    assert (settings.arbiter_token, settings.command_timeout) == ("a-long-random-secret", 6.0)
    assert settings.pgn_folder is not None
    assert settings.pgn_folder.path == tmp_path / "pgn"
    assert settings.lichess == ()


def test_a_relay_without_an_id_gets_one_of_its_own(tmp_path: Path) -> None:
    config = load_relay_config(load_text(tmp_path, '[mqtt]\nhost = "127.0.0.1"\n'), env={})
    settings = relay_settings(config)
    assert (settings.port, settings.command_timeout, settings.arbiter_token) == (8080, 8.0, None)
    assert settings.mqtt.daemon_id.endswith(f"-{os.getpid()}")


BAD: list[tuple[str, str, list[str]]] = [
    (
        "no-mqtt",
        "[server]\nport = 8090\n",
        ["mqtt: a relay needs [mqtt] (enabled): it serves what the broker holds"],
    ),
    (
        "mqtt-disabled",
        "[mqtt]\nenabled = false\n",
        ["mqtt: a relay needs [mqtt] (enabled): it serves what the broker holds"],
    ),
    (
        "daemon-id",
        '[mqtt]\ndaemon_id = "hall-a"\n',
        ["mqtt.daemon_id: a relay is no daemon; name it with relay.id"],
    ),
    ("event-table", '[mqtt]\n[event]\nname = "x"\n', ["event: unknown key"]),
    ("typo", '[mqtt]\n[relay]\nidd = "r"\n', ['relay.idd: unknown key (did you mean "id"?)']),
    (
        "bad-id",
        '[mqtt]\n[relay]\nid = "relay #1"\n',
        ['relay.id: must be a name without /, +, # or spaces, got "relay #1"'],
    ),
    (
        "slow",
        '[mqtt]\n[relay]\ncommand_timeout = "2m"\n',
        ["relay.command_timeout: must be between 1s and 1m"],
    ),
    (
        "public-without-token",
        '[server]\nhost = "0.0.0.0"\n[mqtt]\n',
        ['server.arbiter_token: required when serving on "0.0.0.0" (or set DGTCAST_ARBITER_TOKEN)'],
    ),
    (
        "lichess-without-url",
        '[mqtt]\n[lichess]\nenabled = true\ntoken = "t"\n',
        ["lichess.push_url: required when lichess.enabled = true"],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_relay_files_get_one_line_per_problem(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    path = load_text(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_relay_config(path, env={})
    assert list(caught.value.problems) == [f"{path}: {line}" for line in expected]


def test_the_relay_command_exits_2_on_a_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    path = load_text(tmp_path, "[server]\n")
    assert run(parser.parse_args(["--config", str(path), "--log-level", "WARNING"])) == 2
    assert capsys.readouterr().err == (
        f"{path}: mqtt: a relay needs [mqtt] (enabled): it serves what the broker holds\n"
    )
    missing = tmp_path / "nowhere.toml"
    assert run(parser.parse_args(["--config", str(missing)])) == 2
    assert "cannot read the file" in capsys.readouterr().err
