"""A bug in one board's session or in one output never ends the daemon (issue 21, item 0).

Real daemon, emulated boards on ptys, the real PGN folder: an exception is injected into
board 1's session (while it handles a clock reading), into its supervisor, and into the
PGN folder output. Each time the daemon goes on, the failed part is started again from
its state, one ``internal_error`` alert names the board (or the output) and the error,
the traceback is logged once, and every other board goes on recording its game.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import chess.pgn
import pytest

from broadcast.feed.alerts import Alert
from broadcast.feed.commands import SetResult
from broadcast.feed.messages import BoardState
from broadcast.outputs.pgn_folder import PgnFolderWriter
from daemon.round.core import RoundCore
from daemon.round.inputs import ArbiterInput, RoundInput
from daemon.shell.app import Daemon
from daemon.shell.pipeline import BoardSession
from drivers.dgt.aio.supervisor import BoardSupervisor
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.observations import ClockObserved
from tests.daemon.conftest import Serve
from tests.daemon.support import BoardSpec, read_game, running_daemon, wait_for, write_config

INJECTED = "injected: a bug in the session"


def _internal_errors(daemon: Daemon) -> list[Alert]:
    return [a for a in daemon.hub.open_alerts() if a.kind == "internal_error"]


def _tracebacks(caplog: pytest.LogCaptureFixture, text: str) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info and text in r.message
    ]


def _plies(daemon: Daemon, board: int) -> int:
    return len(daemon.core.games[board].record.moves)


def _break_clock_readings(session: BoardSession, times: int) -> list[int]:
    """Make the session's next ``times`` clock readings raise; returns the count raised."""
    raised = [0]
    original = session.core.receive_clock

    def broken(reading: ClockObserved) -> None:
        if raised[0] < times:
            raised[0] += 1
            raise RuntimeError(INJECTED)
        original(reading)

    session.core.receive_clock = broken  # type: ignore[method-assign]
    return raised


@pytest.mark.error_log(r"board 1's session failed \(RuntimeError: injected")
async def test_a_bug_in_one_session_stays_in_its_board(
    serve: Serve, games_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")  # 10 plies, mate
    clock = ClockSettings.from_text("3+2")
    async with (
        EmulatedBoard(clock=clock, seed=21) as one,
        EmulatedBoard(clock=clock, seed=22) as two,
        serve(one, two) as daemon,
    ):
        raised = _break_clock_readings(daemon.sessions[1], times=3)
        await asyncio.gather(one.play(game, speed=25), two.play(game, speed=25))
        await wait_for(lambda: _plies(daemon, 1) == _plies(daemon, 2) == 10, 15, "both games")
        alerts = _internal_errors(daemon)
    assert raised[0] == 3, "the fault happened, three times"
    assert len(alerts) == 1, alerts
    assert alerts[0].board == 1
    assert alerts[0].details == {"where": "board 1's session", "error": f"RuntimeError: {INJECTED}"}
    assert "Board 1" in alerts[0].action
    assert len(_tracebacks(caplog, "board 1's session failed")) == 1, "the traceback, once"
    moves = [m.uci() for m in game.mainline_moves()]
    for number in (1, 2):
        assert [m.uci for m in daemon.core.games[number].record.moves] == moves


@pytest.mark.error_log(r"board 1's session failed \(RuntimeError: injected")
async def test_a_failed_supervisor_is_replaced(
    tmp_path: Path, games_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=23) as board:
        config = write_config(tmp_path, [BoardSpec(1, str(board.path))])
        async with running_daemon(config) as daemon:
            session = daemon.sessions[1]
            await wait_for(session.online.is_set, 10, "board online")
            first = session.supervisor
            _break_inbox(first)
            first.request_refresh()  # the next report raises: a bug under the task group
            await wait_for(lambda: session.supervisor is not first, 10, "a new supervisor")
            await wait_for(session.online.is_set, 10, "board online again")
            await board.play(game, speed=25)
            await wait_for(lambda: _plies(daemon, 1) == 10, 15, "the game recorded")
            alerts = _internal_errors(daemon)
    assert [a.board for a in alerts] == [1]
    assert len(_tracebacks(caplog, "board 1's session failed")) == 1


def _break_inbox(supervisor: BoardSupervisor) -> None:
    """The supervisor's next batch of reports raises: a bug outside the per-report guard
    (as in the supervisor itself), which ends the session's task group."""
    inbox = supervisor._inbox
    original = inbox.get_batch
    done = [False]

    async def broken(deadline: float | None = None) -> Any:
        if not done[0]:
            done[0] = True
            raise RuntimeError(INJECTED)
        return await original(deadline)

    inbox.get_batch = broken  # type: ignore[method-assign]


@pytest.mark.error_log(r"the PGN folder failed \(OSError: injected")
async def test_a_bug_in_one_output_stays_in_it(
    tmp_path: Path,
    serve: Serve,
    games_dir: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")
    failures = [0]
    original = PgnFolderWriter.publish_board

    def broken(self: PgnFolderWriter, state: BoardState) -> None:
        if failures[0] < 2:
            failures[0] += 1
            raise OSError("injected: the folder's disk")
        original(self, state)

    monkeypatch.setattr(PgnFolderWriter, "publish_board", broken)
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=24) as board:
        pgn_folder = {"path": str(tmp_path / "pgn")}
        async with serve(board, tables={"pgn_folder": pgn_folder}) as daemon:
            await board.play(game, speed=25)
            await wait_for(lambda: _plies(daemon, 1) == 10, 15, "the game recorded")
            written = tmp_path / "pgn" / "round-2" / "game-1.pgn"
            await wait_for(
                lambda: written.exists() and "Nd3#" in written.read_text(), 20, "the PGN file"
            )
            alerts = _internal_errors(daemon)
    assert failures[0] == 2
    assert len(alerts) == 1, alerts
    assert alerts[0].board == 0
    assert alerts[0].details == {
        "where": "the PGN folder",
        "error": "OSError: injected: the folder's disk",
    }
    assert len(_tracebacks(caplog, "the PGN folder failed")) == 1
    with written.open() as handle:
        pgn = chess.pgn.read_game(handle)
    assert pgn is not None
    assert len(list(pgn.mainline_moves())) == 10


@pytest.mark.error_log(r"replaying record \d+ failed as it did live")
async def test_a_replay_goes_past_the_input_a_bug_failed_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The input a core bug failed on is journalled; a restart replays it, fails the same
    way (logged once) and rebuilds every other input: the daemon starts."""
    config = write_config(tmp_path, [BoardSpec(1, None), BoardSpec(2, None)])
    original = RoundCore.apply

    def broken(self: RoundCore, item: RoundInput) -> Any:
        if isinstance(item, ArbiterInput) and item.command == SetResult(board=1, result="1-0"):
            raise RuntimeError(INJECTED)
        return original(self, item)

    monkeypatch.setattr(RoundCore, "apply", broken)
    async with running_daemon(config) as daemon:
        with pytest.raises(RuntimeError, match="injected"):
            await daemon.service.execute(SetResult(board=1, result="1-0"))
        assert (await daemon.service.execute(SetResult(board=2, result="0-1"))).ok
    async with running_daemon(config) as restarted:
        two = restarted.core.engine.result_of(2)
        one = restarted.core.engine.result_of(1)
    assert two is not None
    assert two.result == "0-1"
    assert one is None, "the failed input changed nothing, as live"
