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
from tests.daemon.support import BoardSpec, running_daemon, wait_for, write_config

SERIALS = {1: "31001", 2: "31002"}


def _by_serial(folder: Path, journal: str) -> Path:
    folder.mkdir()
    path = folder / "round.toml"
    boards = "".join(
        f'[[boards]]\nnumber = {n}\nserial = "{s}"\nwhite = "W{n}, A"\nblack = "B{n}, A"\n\n'
        for n, s in SERIALS.items()
    )
    path.write_text(
        '[event]\nname = "Two Daemons"\nround = 1\ntime_control = "180+2"\n\n'
        f'[storage]\npath = "{journal}"\n\n{boards}'
    )
    return path


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
    config = write_config(
        tmp_path, [BoardSpec(1, None)], extra='\n[livechess]\nhost = "127.0.0.1"\nport = 1982\n'
    )
    async with running_daemon(config) as daemon:
        assert daemon.livechess is None
    assert (
        "= [livechess] names 127.0.0.1:1982 but is off (enabled = false): the LiveChess API"
        " is not served; add enabled = true to serve it"
    ) in caplog.messages
    folder_only = write_config(
        tmp_path, [BoardSpec(1, None)], extra='\n[livechess]\nfolder = "lc"\n'
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


def _section_files(folder: Path, name: str, rounds: int) -> str:
    """A section of four players with its TRF (``XXR rounds``) and round 1's pairings."""
    players = [f"{name.title()}{rank}, Player" for rank in range(1, 5)]
    lines = [f"012 {name} Congress", f"XXR {rounds}"]
    lines += [
        f"001 {rank:>4} m    {player:<33} {2000 - rank:>4} AUS {3300000 + rank:>11}"
        f" 2000/01/01 {'0.0':>4} {rank:>4}"
        for rank, player in enumerate(players, 1)
    ]
    (folder / f"{name}.trf").write_text("\n".join(lines) + "\n")
    (folder / f"{name}-r1.txt").write_text("2\n1 2\n3 4\n")
    (folder / f"{name}-r2.txt").write_text("2\n4 1\n2 3\n")
    return f'[sections.pairing]\ntrf = "{name}.trf"\npairings = "{name}-r{{round}}.txt"\n'


async def _play_round_by_hand(daemon: Daemon) -> None:
    for number in sorted(daemon.core.games):
        assert (await daemon.service.execute(SetResult(board=number, result="1-0"))).ok
        assert (await daemon.service.execute(ConfirmResult(board=number))).ok


async def test_after_the_last_round_the_event_is_over(tmp_path: Path) -> None:
    open_part = _section_files(tmp_path, "open", 2)
    u12_part = _section_files(tmp_path, "u12", 1)
    config = tmp_path / "congress.toml"
    config.write_text(
        '[event]\nname = "Last Round"\nround = 1\ntime_control = "180+2"\n\n'
        '[storage]\npath = "congress.db"\n\n'
        f'[[sections]]\nname = "OPEN"\n{open_part}[[sections.boards]]\nnumber = 1\n\n'
        f'[[sections]]\nname = "U12"\n{u12_part}first_board = 41\n'
        "[[sections.boards]]\nnumber = 41\n"
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
