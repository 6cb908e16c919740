"""Boards by serial number: ``dgtcast boards``, ``serial =`` in ``[[boards]]``, start-up warnings.

Emulated boards on ptys report distinct serial numbers; the driver, the command and the
daemon find them by serial whatever the order of their ports.
"""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path

import pytest

from daemon.cli import main
from daemon.commands.boards import list_boards, render
from daemon.config.model import BoardConfig, ConfigError, load_config
from daemon.shell.board_check import explain_board
from drivers.dgt.aio.ports import PortSpec, serial_ports
from drivers.dgt.aio.probe import (
    FIX_OTHER_SERIAL,
    FIX_PERMISSION,
    BoardFound,
    PortProblem,
    explain_open_error,
    probe_port,
)
from drivers.dgt.device_core import DeviceTimeouts
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from tests.daemon.config_file import BoardSpec, write_config
from tests.daemon.support import running_daemon, wait_for

FAST = DeviceTimeouts(reply=0.5, long_serial=0.3)


def _config(folder: Path, boards: list[BoardSpec]) -> Path:
    return write_config(
        folder,
        boards,
        name="Serial Open",
        site=None,
        round_number=1,
        time_control="90+30",
        default_time=None,
        file="event.toml",
    )


def _board(number: int, *, port: str | None = None, serial: str | None = None) -> BoardSpec:
    return BoardSpec(number, port, f"W{number}", f"B{number}", serial=serial)


def test_serial_key_is_checked(tmp_path: Path) -> None:
    bad = [_board(1, port="/dev/x*", serial="1234"), _board(2, serial="abcde")]
    with pytest.raises(ConfigError) as caught:
        load_config(_config(tmp_path, bad), env={})
    assert [line.split(": ", 1)[1] for line in caught.value.problems] == [
        'boards[1].serial: must be the board\'s serial number, 5 digits in quotes like "12345",'
        ' got "1234"',
        'boards[2].serial: must be the board\'s serial number, 5 digits in quotes like "12345",'
        ' got "abcde"',
    ]
    twice = [_board(1, serial="10001"), _board(2, port="/dev/ttyACM*", serial="10001")]
    with pytest.raises(ConfigError) as caught:
        load_config(_config(tmp_path, twice), env={})
    assert caught.value.problems[0].endswith(
        'boards[2].serial: duplicate serial "10001" (also board 1)'
    )
    shared_glob = [_board(1, port="/dev/dgt-*", serial="10001")]
    shared_glob += [_board(2, port="/dev/dgt-*", serial="10002")]
    config = load_config(_config(tmp_path, shared_glob), env={})
    assert [b.has_eboard for b in config.boards] == [True, True]


def test_open_errors_get_their_fix() -> None:
    denied = PermissionError(errno.EACCES, "Permission denied")
    problem = explain_open_error("/dev/ttyACM0", denied)
    assert problem.fix == FIX_PERMISSION
    assert "dialout" in problem.fix
    missing = explain_open_error("/dev/ttyACM9", FileNotFoundError(errno.ENOENT, "No such file"))
    assert missing.reason == "/dev/ttyACM9 does not exist"


async def test_probe_reports_serial_firmware_clock_and_battery(tmp_path: Path) -> None:
    async with (
        EmulatedBoard(path=tmp_path / "dgt-a", identity=BoardIdentity.from_serial("20001")),
        EmulatedBoard(
            path=tmp_path / "dgt-b", identity=BoardIdentity.from_serial("20002").bluetooth(93)
        ),
    ):
        ports = serial_ports([str(tmp_path / "dgt-*")])
        assert ports[:2] == [str(tmp_path / "dgt-a"), str(tmp_path / "dgt-b")]
        found = await probe_port(str(tmp_path / "dgt-b"), timeouts=FAST)
        assert isinstance(found, BoardFound)
        assert (found.serial, found.long_serial, found.version) == ("20002", "0000020002", "1.02")
        assert found.clock is not None
        assert not found.clock.no_clock
        assert found.battery is not None
        assert found.battery.percent == 93
        usb = await probe_port(str(tmp_path / "dgt-a"), timeouts=FAST)
        assert isinstance(usb, BoardFound)
        assert usb.battery is None  # a USB board does not answer 0x4C
    gone = await probe_port(str(tmp_path / "dgt-a"), timeouts=FAST)
    assert isinstance(gone, PortProblem)
    assert gone.reason.endswith("does not exist")


async def test_boards_command_names_the_configured_board(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    glob = str(tmp_path / "dgt-*")
    boards = [_board(1, port=glob, serial="30002"), _board(2, port=str(tmp_path / "dgt-a"))]
    boards += [_board(3, port=glob, serial="30009"), _board(4, port=str(tmp_path / "none"))]
    config_path = _config(tmp_path, boards)
    async with (
        EmulatedBoard(
            path=tmp_path / "dgt-a", identity=BoardIdentity.from_serial("30001").bluetooth(100)
        ),
        EmulatedBoard(path=tmp_path / "dgt-b", identity=BoardIdentity.from_serial("30002")),
    ):
        listing = await list_boards(load_config(config_path, env={}), [glob], timeouts=FAST)
    lines = render(listing).splitlines()
    assert lines[0].split() == ["PORT", "SERIAL", "FIRMWARE", "CLOCK", "BATTERY", "BOARD"]
    rows = {line.split()[1]: line for line in lines[1:3]}
    assert rows["30001"].endswith("board 2")
    assert rows["30002"].endswith("board 1")
    assert rows["30001"].split()[2] == "1.02"
    assert "100%" in rows["30001"]
    assert lines[3] == (
        f"board 3: no board with serial 30009 answers on {glob} (serials found: 30001, 30002)"
    )
    assert lines[4].startswith(f"board 4: {tmp_path / 'none'} does not exist: check the USB")
    assert main(["boards", "--config", str(tmp_path / "nowhere.toml")]) == 2
    assert "cannot read the file" in capsys.readouterr().err


def test_explain_board_names_the_serials_seen() -> None:
    board = BoardConfig(number=5, port="/dev/dgt-*", serial="40005")
    other = PortProblem(
        port="/dev/dgt-a",
        reason="/dev/dgt-a holds the board with serial 40001",
        fix=FIX_OTHER_SERIAL,
    )
    text = explain_board(board, [other])
    assert text.startswith(
        "no board with serial 40005 answers on /dev/dgt-* (serials found: 40001)"
    )
    denied = explain_open_error("/dev/dgt-b", PermissionError(errno.EACCES, "Permission denied"))
    assert explain_board(board, [other, denied]).endswith(FIX_PERMISSION)
    assert PortSpec.auto().is_glob


async def test_daemon_finds_boards_by_serial_and_warns_about_the_missing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    glob = str(tmp_path / "dgt-*")
    boards = [_board(1, port=glob, serial="50002"), _board(2, port=glob, serial="50001")]
    boards += [_board(3, port=glob, serial="50003"), _board(4, port=str(tmp_path / "absent"))]
    config = _config(tmp_path, boards)
    caplog.set_level(logging.WARNING, logger="daemon.shell.board_check")
    async with (
        EmulatedBoard(path=tmp_path / "dgt-a", identity=BoardIdentity.from_serial("50001")),
        EmulatedBoard(path=tmp_path / "dgt-b", identity=BoardIdentity.from_serial("50002")),
        running_daemon(config, board_patience=1.0) as daemon,
    ):
        for number in (1, 2):
            await wait_for(daemon.sessions[number].online.is_set, 20, f"board {number} up")
        for number, name in ((1, "dgt-b"), (2, "dgt-a")):
            device = daemon.sessions[number].supervisor.device
            assert device is not None
            assert device.path == os.path.realpath(tmp_path / name)  # noqa: ASYNC240

        def warned(number: int) -> bool:
            return any(f"board {number} has no e-board link" in r.message for r in caplog.records)

        await wait_for(lambda: warned(3) and warned(4), 20, "boards 3 and 4 reported")
    messages = [r.message for r in caplog.records if r.levelno == logging.WARNING]
    three = next(m for m in messages if m.startswith("board 3"))
    assert "no board with serial 50003 answers" in three
    assert "(serials found: 50001, 50002)" in three
    four = next(m for m in messages if m.startswith("board 4"))
    assert f"{tmp_path / 'absent'} does not exist; fix: check the USB cable" in four
    assert not any(m.startswith(("board 1 ", "board 2 ")) for m in messages)
