"""A rehearsal as docs/tournament.md has it: ``dgtcast emulate --serial N`` boards, found by
``dgtcast boards`` and by the daemon with the event's own configuration (boards by serial,
no port), without any hand-made glob.

The emulators are real ``dgtcast emulate`` processes; each registers its pty in this test
run's folder of emulated ports (tests/conftest.py). Links of emulators that are gone, and
a folder others may write to, are never scanned: a real event sees only its serial ports.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
from contextlib import AsyncExitStack, redirect_stdout
from pathlib import Path

import pytest

from daemon.cli import build_parser, main
from drivers.dgt.aio.ports import (
    emulated_port_of,
    emulated_ports,
    new_emulated_port,
    serial_ports,
)
from tests.daemon.config_file import BoardSpec, SectionSpec, write_config
from tests.daemon.support import emulator_process, running_daemon, wait_for

SERIALS = {1: "12401", 41: "20455"}


def _event(folder: Path) -> Path:
    """Two sections, boards by serial on any port: the configuration of the event itself."""
    sections = [
        SectionSpec("OPEN", [BoardSpec(1, None, "Adams, Ann", "Brown, Ben", serial="12401")]),
        SectionSpec(
            "U12",
            [BoardSpec(41, None, "Evans, Eve", "Fox, Finn", serial="20455")],
            {"time_control": "3600+30"},
        ),
    ]
    return write_config(
        folder,
        [],
        name="Rehearsal",
        site=None,
        round_number=1,
        time_control="5400+30",
        token=None,
        journal="congress.db",
        sections=sections,
        file="congress.toml",
    )


async def test_emulated_boards_are_found_by_serial_without_a_glob(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pgn = tmp_path / "game.pgn"
    pgn.write_text("1. e4 e5 *\n")
    config = _event(tmp_path)
    async with AsyncExitStack() as stack:
        devices = {
            n: await stack.enter_async_context(emulator_process(pgn, s, "--wait", "3600"))
            for n, s in SERIALS.items()
        }
        assert set(emulated_ports()) == {str(path) for path in devices.values()}
        assert {str(path) for path in devices.values()} <= set(serial_ports())

        out = io.StringIO()
        with redirect_stdout(out):
            code = await asyncio.to_thread(main, ["boards", "--config", str(config)])
        assert code == 0
        rows = {line.split()[1]: line for line in out.getvalue().splitlines()[1:]}
        assert rows["12401"].startswith(str(devices[1]))
        assert rows["12401"].endswith("board 1")
        assert rows["20455"].endswith("board 41")

        async with running_daemon(config) as daemon:
            for number in SERIALS:
                session = daemon.sessions[number]
                await wait_for(session.online.is_set, 20, f"board {number} online")
            said = "board 41 is an emulated board (dgtcast emulate, "
            await wait_for(lambda: said in caplog.text, 20, "the rehearsal named")
            for number, serial in SERIALS.items():
                state = daemon.hub.state(number)
                assert state is not None
                assert state.serial == serial
    assert emulated_ports() == []  # stopped emulators take their ports away


def test_only_running_emulators_in_a_private_folder_are_scanned(tmp_path: Path) -> None:
    target = tmp_path / "pts"
    target.write_text("")
    mine = new_emulated_port("12401")
    assert mine.name == f"dgt-12401-{os.getpid()}"
    mine.symlink_to(target)
    dead = mine.with_name("dgt-12388-999999999")  # an emulator killed with -9
    dead.symlink_to(target)
    real = tmp_path / "ttyACM0"  # a port the system names (a pattern here)
    real.write_text("")
    try:
        assert emulated_ports(mine.parent) == [str(mine)]
        ports = serial_ports([str(real)])
        assert ports.index(str(real)) < ports.index(str(mine))  # real ports are tried first
        assert emulated_port_of(str(target)) == str(mine)
        assert emulated_port_of(str(real)) is None
        again = new_emulated_port("12401")  # the next emulator clears the dead one's link
        assert again == mine
        assert not dead.is_symlink()
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o777)
        shared.chmod(0o777)
        (shared / mine.name).symlink_to(target)
        assert emulated_ports(shared) == []  # anyone may write there: not trusted
        assert emulated_ports(tmp_path / "absent") == []
    finally:
        mine.unlink()


def _parse(argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed as ``dgtcast`` parses it (the parser holds the named command's
    arguments only)."""
    return build_parser(argv).parse_args(argv)


def test_port_means_a_serial_port_and_the_http_port_is_http_port(
    capsys: pytest.CaptureFixture[str],
) -> None:
    boards = _parse(["boards", "--port", "/dev/dgt-*"])
    assert boards.port == ["/dev/dgt-*"]  # serial ports, as [[boards]] port
    for argv in (["run", "--config", "x.toml"], ["round", "next", "--config", "x.toml"]):
        assert _parse([*argv, "--http-port", "8081"]).http_port == 8081
        assert capsys.readouterr().err == ""
        assert _parse([*argv, "--port", "8081"]).http_port == 8081  # the old way
        assert "--port 8081 is deprecated here: write --http-port 8081" in capsys.readouterr().err
    for argv in (["demo"], ["relay", "--config", "x.toml"]):
        assert _parse([*argv, "--http-port", "0"]).http_port == 0
    result = _parse(["result", "set", "1", "1-0", "--config", "x", "--http-port", "9"])
    assert result.http_port == 9
