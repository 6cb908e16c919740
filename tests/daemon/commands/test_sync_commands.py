"""A board out of sync from the terminal: ``dgtcast sync`` and the console's keys.

``dgtcast sync rebuild`` / ``accept`` (the real command line, in a thread) and the live
console's ``r`` and ``a`` keys against a real daemon with one emulated e-board and one
board without: the arbiter page's "Rebuild from memory" and "Accept position", with the
daemon's answers (issue 32, item 2).
"""

from __future__ import annotations

import asyncio
import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from broadcast.feed.commands import AcceptPosition, RebuildFromMemory
from daemon.cli import main
from daemon.console.keys import HINT, KeyPrompt, SyncRequest, press
from daemon.console.link import ConsoleKeys
from daemon.session.states import SessionState
from drivers.dgt.commands import RequestEEMoves
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.support import BoardSpec, running_daemon, wait_for, write_config


async def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()

    def call() -> int:
        with redirect_stdout(out), redirect_stderr(err):
            return main(list(argv))

    code = await asyncio.to_thread(call)
    return code, out.getvalue(), err.getvalue()


def test_the_keys_r_and_a_ask_for_a_board() -> None:
    assert "r rebuild a board from its memory" in HINT
    assert "a accept a board's position" in HINT
    for key, action, command in (
        ("r", "rebuild", RebuildFromMemory(board=12)),
        ("a", "accept", AcceptPosition(board=12)),
    ):
        prompt, request = press(KeyPrompt(), key)
        assert request is None
        assert prompt.action == action
        for typed in "12":
            prompt, request = press(prompt, typed)
        prompt, request = press(prompt, "\r")
        assert request == SyncRequest(board=12, action=action)
        assert request.commands() == [command]
        prompt, request = press(KeyPrompt(action=action, text="12 13"), "\r")
        assert request is None
        assert prompt.reply == "type a board number"


def _memory_reads(board: EmulatedBoard) -> int:
    return sum(isinstance(c, RequestEEMoves) for c in board.firmware.commands)


async def test_a_board_rebuilt_and_accepted_from_the_terminal(tmp_path: Path) -> None:
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=3) as board:
        config = write_config(tmp_path, [BoardSpec(1, str(board.path)), BoardSpec(2, None)])
        async with running_daemon(config) as daemon:
            await wait_for(lambda: daemon.sessions[1].online.is_set(), 10, "board 1 online")
            session = daemon.sessions[1].core
            await wait_for(lambda: session.state is SessionState.LIVE, 10, "board 1 live")
            options = ["--config", str(config), "--http-port", str(daemon.server.port)]

            reads = _memory_reads(board)
            code, out, err = await _cli("sync", "rebuild", "1", *options)
            assert (code, err) == (0, "")
            assert out.startswith("board 1: its memory is being read: the moves it holds")
            # the read may be over by now (the command is a process of its own): the board
            # was asked for its memory, and the session is live again
            await wait_for(lambda: _memory_reads(board) > reads, 10, "the memory asked for")
            await wait_for(lambda: session.state is SessionState.LIVE, 30, "the memory read")

            code, out, err = await _cli("sync", "rebuild", "2", *options)
            assert (code, out, err) == (1, "", "board 2 has no e-board\n")
            code, out, err = await _cli("sync", "accept", "1", *options)
            assert (code, err) == (0, "")  # the board shows the game: nothing jumps
            assert out == "board 1: the game goes on from the board's position\n"

            keys = ConsoleKeys(daemon)
            keys.feed("r1\r")
            await wait_for(lambda: "board 1:" in keys.prompt.reply, 10, "the answer shown")
            assert keys.prompt.reply == "board 1: its memory is being read again"
            answer = await keys.carry_out(SyncRequest(board=2, action="accept"))
            assert answer == "board 2 has no e-board"
