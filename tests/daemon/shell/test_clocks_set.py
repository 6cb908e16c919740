"""Mode 23: setting every e-board clock to the time control, and reporting refusals."""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path

import pytest
from rich.console import Console

from daemon.console.keys import KeyPrompt
from daemon.console.link import console_frame
from daemon.console.view import render
from drivers.dgt.commands import ClockSetAndRun
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import HumanPlayer
from tests.daemon.conftest import Serve
from tests.daemon.support import (
    BoardSpec,
    play_after_each_increment,
    read_game,
    running_daemon,
    wait_for,
    write_config,
)
from tests.serving import dgtcast

MODE_23 = ClockSettings(base_seconds=300, increment_seconds=5, mode=23)
MODE_12 = ClockSettings(base_seconds=300, increment_seconds=5, mode=12)


def _shown(board: EmulatedBoard) -> tuple[int, int]:
    reading = board.clock.reading(board.now())
    return reading.left.seconds, reading.right.seconds


async def test_clocks_set_sets_mode_23_clocks_and_reports_the_others(tmp_path: Path) -> None:
    async with (
        EmulatedBoard(clock=MODE_23, seed=1) as good,
        EmulatedBoard(clock=MODE_12, seed=2) as refusing,
    ):
        specs = [
            BoardSpec(1, str(good.path), white="Smith, John", black="Doe, Jane"),
            BoardSpec(2, str(refusing.path)),
            BoardSpec(3, None),
        ]
        config = write_config(tmp_path, specs, time_control="5400+30")
        process = await asyncio.create_subprocess_exec(
            *dgtcast("clocks", "set", "--config", str(config)),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await asyncio.wait_for(process.communicate(), 30)
        text = output.decode()
        assert process.returncode == 1, text
        assert "board 1: set" in text
        assert "board 2: NOT SET: refused" in text
        assert _shown(good) == (5430, 5430)  # 90 min + one increment, both sides
        assert good.clock.running is None, "set paused: the arbiter starts the round"
        assert good.clock.display_text is not None
        assert good.clock.display_text.strip() == "1 SmiDoe"
        assert _shown(refusing) == (305, 305), "a clock not in mode 23 keeps its own time"


async def test_run_with_set_clocks_sets_them_when_the_boards_come_online(tmp_path: Path) -> None:
    async with EmulatedBoard(clock=MODE_23, seed=3) as board:
        config = write_config(tmp_path, [BoardSpec(1, str(board.path))], time_control="600+5")
        async with running_daemon(config, set_clocks=True):
            await wait_for(lambda: _shown(board) == (605, 605), 15, "clock set at round start")


async def _clocks_set(config: Path, *flags: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        *dgtcast("clocks", "set", "--config", str(config), *flags),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, output.decode()


async def test_clocks_set_reaches_the_running_daemon(serve: Serve) -> None:
    config = serve.config
    async with (
        EmulatedBoard(clock=MODE_23, seed=31) as one,
        EmulatedBoard(clock=MODE_23, seed=32) as two,
        serve(one, two, time_control="600+5", dgt_mode=23) as daemon,
    ):
        port = str(daemon.server.port)
        code, text = await _clocks_set(config, "--board", "2", "--http-port", port)
        assert code == 0, text
        assert text.strip() == "board 2: set", "the daemon set it: the ports are its own"
        assert _shown(two) == (605, 605)
        assert _shown(one) == (305, 305), "only the board asked for"
        code, text = await _clocks_set(config, "--http-port", port)
        assert (code, sorted(text.split("\n")[:2])) == (0, ["board 1: set", "board 2: set"])
        assert _shown(one) == (605, 605)
        code, text = await _clocks_set(config, "--board", "9", "--http-port", port)
        assert code == 1
        assert "board 9" in text
        one.unplug()  # between rounds: its cable out, or its emulator started again
        await wait_for(lambda: not daemon.sessions[1].online.is_set(), 10, "board 1 off")
        code, text = await _clocks_set(config, "--http-port", port)
        assert code == 1
        assert sorted(text.strip().split("\n")) == [
            "board 1: NOT SET: its e-board is not online; once it answers:"
            " dgtcast clocks set --board 1",
            "board 2: set",
        ]
        records = [r.payload for r in daemon.journal.records(kinds={"arbiter"})]
    assert [r.get("board") for r in records if r["command"] == "set_clocks"][:2] == [2, None]


async def test_clocks_set_without_a_daemon_uses_the_ports(tmp_path: Path) -> None:
    async with EmulatedBoard(clock=MODE_23, seed=33) as board:
        config = write_config(tmp_path, [BoardSpec(1, str(board.path))], time_control="600+5")
        code, text = await _clocks_set(config, "--http-port", "1")  # nobody listens on port 1
        assert code == 0, text
        assert "no daemon answers" in text
        assert "board 1: set" in text
        assert _shown(board) == (605, 605)


async def test_a_restart_during_the_round_with_set_clocks_keeps_the_clocks(
    tmp_path: Path, games_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """tournament.md: after a crash, "start the same command again", ``--set-clocks``
    included: a game under way keeps its clock (it was reset to the time control, paused)."""
    caplog.set_level(logging.INFO, logger="daemon.shell.clock_set")
    game = read_game(games_dir / "molinari-bordais-1979.pgn")
    moves = list(game.mainline_moves())[:4]
    async with EmulatedBoard(clock=MODE_23, seed=34) as board:
        config = write_config(
            tmp_path, [BoardSpec(1, str(board.path))], time_control="600+5", dgt_mode=23
        )
        async with running_daemon(config, set_clocks=True) as daemon:
            await wait_for(lambda: board.clock.display_text is not None, 15, "clock set")
            board.start_clock()
            player = HumanPlayer(seed=5, speed=25, think=(8.0, 12.0))
            await play_after_each_increment(
                board, player.play(moves, start_clock=False), daemon=daemon
            )
            record = daemon.core.games[1].record
            await wait_for(lambda: len(record.moves) == 4, 15, "4 plies")
        sent = len(board.firmware.commands)

        def reset() -> list[ClockSetAndRun]:
            again = board.firmware.commands[sent:]
            return [c for c in again if isinstance(c, ClockSetAndRun) and c.run == "paused"]

        async with running_daemon(config, set_clocks=True):
            await wait_for(
                lambda: "its game is under way" in caplog.text or bool(reset()), 15, "decided"
            )
    assert not reset(), "the clock of a game under way was set to the time control"
    assert board.clock.running == "left", "White's time still runs"
    assert "board 1: its game is under way, its clock is not set" in caplog.text


async def test_the_console_shows_the_clocks_set_before_the_round(serve: Serve) -> None:
    """Issue 33, item 7: the arbiter checks every clock before round 1 (no clock ran)."""
    async with (
        EmulatedBoard(clock=MODE_23, seed=71) as board,
        serve(board, time_control="600+5", dgt_mode=23) as daemon,
    ):
        code, text = await _clocks_set(serve.config, "--http-port", str(daemon.server.port))
        assert code == 0, text

        def clocks() -> tuple[float | None, float | None]:
            state = daemon.hub.state(1)
            return (None, None) if state is None else (state.white_clock, state.black_clock)

        await wait_for(lambda: clocks() == (605, 605), 10, "the set clocks shown")
        assert board.clock.running is None
        frame = console_frame(daemon, KeyPrompt())
        console = Console(file=io.StringIO(), width=140, color_system=None, record=True)
        console.print(render(frame, 0.0))
        (row,) = [line for line in console.export_text().splitlines() if "│" in line]
        assert "0:10:05  0:10:05" in row
