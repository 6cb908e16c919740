"""Messages that say what is true (issue #21, item 7).

* A second daemon on the boards another daemon holds does not blame one port for every
  board: each board by serial names the ports in use that may hold it; so does
  ``dgtcast boards`` run while the daemon holds them.
* A pulled cable is logged in plain words, not pyserial's "readiness to read" text.
* A ``[livechess]`` table with an address but without ``enabled = true`` says at start
  that the API is off.
* ``dgtcast emulate --clock`` takes the configuration's unit (seconds, or ``90m + 30s``).

Real daemons, emulated boards on ptys in this run's folder of emulated ports.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from broadcast.feed.commands import ConfirmResult, NextRound, SetResult
from daemon.cli import main
from daemon.shell.app import Daemon
from drivers.dgt.aio.ports import natural_key, new_emulated_port
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from tests.daemon.config_file import SectionSpec, TomlTable, TomlValue
from tests.daemon.support import BoardSpec, running_daemon, wait_for, write_config
from tests.pairing.support import starting_line, trf_text, write_pairings

SERIALS = {1: "31001", 2: "31002"}


def _by_serial(folder: Path, journal: str) -> Path:
    folder.mkdir()
    boards = [BoardSpec(n, None, f"W{n}, A", f"B{n}, A", serial=s) for n, s in SERIALS.items()]
    return write_config(
        folder,
        boards,
        name="Two Daemons",
        site=None,
        round_number=1,
        default_time=None,
        token=None,
        journal=journal,
    )


def _boards_listed(config: Path) -> str:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(out):
        assert main(["boards", "--config", str(config)]) == 0
    return out.getvalue()


@asynccontextmanager
async def _boards() -> AsyncIterator[dict[int, EmulatedBoard]]:
    async with AsyncExitStack() as stack:
        yield {
            n: await stack.enter_async_context(
                EmulatedBoard(
                    path=new_emulated_port(s),
                    clock=ClockSettings.from_text("3+2"),
                    identity=BoardIdentity.from_serial(s),
                )
            )
            for n, s in SERIALS.items()
        }


async def test_a_second_daemon_names_every_port_in_use_that_may_hold_a_board(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = _by_serial(tmp_path / "a", "a.db"), _by_serial(tmp_path / "b", "b.db")
    async with _boards() as boards, running_daemon(first) as daemon:
        for number in SERIALS:
            await wait_for(daemon.sessions[number].online.is_set, 20, f"board {number} online")
        ports = sorted((str(b.path.resolve()) for b in boards.values()), key=natural_key)
        caplog.clear()
        async with running_daemon(second, board_patience=2.0) as other:
            await wait_for(
                lambda: "board 2 has no e-board link" in caplog.text, 20, "the second warned"
            )
            assert not other.sessions[1].online.is_set()
        warnings = {
            r.getMessage().split(":", 1)[0]: r.getMessage()
            for r in caplog.records
            if "has no e-board link" in r.getMessage()
        }
        for number, serial in SERIALS.items():
            line = warnings[f"board {number} has no e-board link"]
            assert f"no board with serial {serial} answers on any serial port" in line
            assert f"{ports[0]}, {ports[1]} are in use by another program and may hold it" in line

        listed = await asyncio.to_thread(_boards_listed, first)  # `dgtcast boards` meanwhile
        for number, serial in SERIALS.items():
            line = next(x for x in listed.splitlines() if x.startswith(f"board {number}:"))
            assert f"no board with serial {serial} answers on any port" in line
            assert line.endswith(" are in use by another program and may hold it"), line
            assert all(str(board.path) in line for board in boards.values()), line

        caplog.clear()
        caplog.set_level(logging.INFO, logger="drivers.dgt.aio.supervisor")
        boards[2].unplug()
        await wait_for(lambda: "= offline:" in caplog.text, 20, "board 2's link closed")
        offline = [r.getMessage() for r in caplog.records if "= offline:" in r.getMessage()]
        assert offline[0].endswith("the cable was pulled or the board is gone"), offline
        assert "readiness" not in caplog.text


async def test_a_livechess_address_without_enabled_says_it_is_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    livechess: TomlTable = {"host": "127.0.0.1", "port": 1982}
    config = write_config(tmp_path, [BoardSpec(1, None)], tables={"livechess": livechess})
    async with running_daemon(config) as daemon:
        assert daemon.livechess is None
    assert (
        "= [livechess] names 127.0.0.1:1982 but is off (enabled = false): the LiveChess API"
        " is not served; add enabled = true to serve it"
    ) in caplog.messages
    folder_only = write_config(
        tmp_path, [BoardSpec(1, None)], tables={"livechess": {"folder": "lc"}}
    )
    caplog.clear()
    async with running_daemon(folder_only):
        pass
    assert not [m for m in caplog.messages if "[livechess]" in m]  # a folder only: nothing off


def test_emulate_takes_clock_times_in_the_configurations_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pgn = tmp_path / "game.pgn"
    pgn.write_text("1. e4 e5 *\n")
    assert main(["emulate", "--pgn", str(pgn), "--clock", "36000+30"]) == 2
    err = capsys.readouterr().err
    assert 'invalid time control "36000+30": a DGT clock shows at most 9:59:59' in err
    assert "seconds as in the configuration" in err
    argv = ["emulate", "--pgn", str(pgn), "--wait", "0", "--speed", "50", "--exit"]
    assert main([*argv, "--clock", "5400+30", "--baud", "0"]) == 0
    assert "dgtcast emulate: --clock" not in capsys.readouterr().err  # the config's 90 min
    assert main([*argv, "--clock", "90m + 30s", "--baud", "0"]) == 0
    assert main([*argv, "--clock", "90+30", "--baud", "0"]) == 0
    assert "--clock 90+30 is 1m30s + 30s (seconds" in capsys.readouterr().err


def _section_files(folder: Path, name: str, rounds: int) -> dict[str, TomlValue]:
    """A section of four players with its TRF (``XXR rounds``) and the pairings of rounds
    1 and 2; its ``[sections.pairing]`` keys."""
    players = [f"{name.title()}{rank}, Player" for rank in range(1, 5)]
    lines = [starting_line(rank, player, 3300000) for rank, player in enumerate(players, 1)]
    header = (f"012 {name} Congress", f"XXR {rounds}")
    (folder / f"{name}.trf").write_text(trf_text(*header, *lines, ending="\n"))
    write_pairings(folder, name, {1: [(1, 2), (3, 4)], 2: [(4, 1), (2, 3)]})
    return {"trf": f"{name}.trf", "pairings": f"{name}-r{{round}}.txt"}


async def _play_round_by_hand(daemon: Daemon) -> None:
    for number in sorted(daemon.core.games):
        assert (await daemon.service.execute(SetResult(board=number, result="1-0"))).ok
        assert (await daemon.service.execute(ConfirmResult(board=number))).ok


async def test_after_the_last_round_the_event_is_over(tmp_path: Path) -> None:
    open_part = _section_files(tmp_path, "open", 2)
    u12_part = _section_files(tmp_path, "u12", 1)
    u12_part["first_board"] = 41
    sections = [
        SectionSpec("OPEN", [BoardSpec(1, None)], pairing=open_part),
        SectionSpec("U12", [BoardSpec(41, None)], pairing=u12_part),
    ]
    config = write_config(
        tmp_path,
        [],
        name="Last Round",
        site=None,
        round_number=1,
        default_time=None,
        token=None,
        journal="congress.db",
        sections=sections,
        file="congress.toml",
    )
    async with running_daemon(config) as daemon:
        await _play_round_by_hand(daemon)
        refused = await daemon.service.execute(NextRound())
        assert refused.reason == (
            "U12 has played its last round (1 round); move the other sections on with"
            " --section NAME"
        )
        alone = await daemon.service.execute(NextRound(section="U12"))
        assert alone.reason == "U12 has played its last round (1 round)"
        assert (await daemon.service.execute(NextRound(section="OPEN"))).ok
        await _play_round_by_hand(daemon)
        over = await daemon.service.execute(NextRound(section="OPEN"))
        assert over.reason == (
            "the event is over: every section has played its last round"
            " (OPEN: 2 rounds; U12: 1 round)"
        )
