"""A board number typed by an arbiter is ASCII digits, 1 to 9999: ``dgtcast result set`` and
``confirm`` and the console's keys (issue 34, item 4). ``int`` takes ``٣`` (an
Arabic-Indic three), ``３`` (a full-width one), ``+3``, `` 3`` and ``3_0``: each named a
board it was not written as."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.cli import main
from daemon.console.keys import KeyPrompt, press

CONFIG = """[event]
name = "Test Open"
round = 2
time_control = "180+2"

[server]
host = "127.0.0.1"
port = 8080
arbiter_token = "arbiter-secret"

[storage]
path = "journal.db"

[[boards]]
number = 1
white = "White, One"
black = "Black, One"

[[boards]]
number = 3
white = "White, Three"
black = "Black, Three"
"""


@pytest.mark.parametrize("board", ["\u0663", "\uff13", "+3", " 3", "3_0", "0", "10000"])
def test_a_board_number_is_ascii_digits_only(
    board: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "round.toml"  # a daemon's configuration with boards 1 and 3
    config.write_text(CONFIG)
    for argv in (["set", board, "1-0"], ["confirm", board]):
        with pytest.raises(SystemExit) as stopped:  # argparse: exit code 2, one line
            main(["result", *argv, "--config", str(config), "--timeout", "1"])
        assert stopped.value.code == 2
        assert "a board number is 1 to 9999 in digits 0-9" in capsys.readouterr().err


@pytest.mark.parametrize("board", ["\u0663", "\uff13"])
def test_the_console_keys_take_ascii_digits_only(board: str) -> None:
    prompt = KeyPrompt()
    for key in f"s{board} 1-0":
        prompt, request = press(prompt, key)
        assert request is None
    prompt, request = press(prompt, "\r")
    assert request is None
    assert "is no board number" in prompt.reply
