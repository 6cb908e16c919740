"""Results from the keyboard, and one truth for the arbiter token on loopback.

``dgtcast result set`` / ``confirm`` (the real command line, in a thread) and the live
console's keys (:class:`ConsoleKeys`, fed as a terminal would) against a real daemon
whose configuration has no ``arbiter_token`` on loopback: the daemon makes its own
token beside the journal (readable by its user only, kept across restarts), the command
line signs in with it, the printed arbiter address carries it, and a wrong token is
still refused. The console's view (pure) shows the keys' prompt and finished games.
"""

from __future__ import annotations

import asyncio
import io
import json
import stat
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from rich.console import Console
from websockets.asyncio.client import connect

from broadcast.feed.commands import SetResult
from broadcast.feed.messages import BoardState, BoardStatus
from daemon.cli import main
from daemon.commands.run import arbiter_address
from daemon.config.local_token import arbiter_token, local_token_path
from daemon.config.model import load_config
from daemon.console.keys import (
    HINT,
    ConfirmRequest,
    KeyPrompt,
    SetRequest,
    confirmable,
    keys_in,
    parse_result,
    press,
    summary,
)
from daemon.console.link import ConsoleKeys, console_frame
from daemon.console.view import ConsoleFrame, render
from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.support import BoardSpec, read_game, running_daemon, wait_for, write_config


def _typed(keys: str, prompt: KeyPrompt | None = None) -> tuple[KeyPrompt, list[object]]:
    prompt = prompt or KeyPrompt()
    requests: list[object] = []
    for key in keys:
        prompt, request = press(prompt, key)
        if request is not None:
            requests.append(request)
    return prompt, requests


def test_the_keys_prompt_for_a_board_and_a_result() -> None:
    prompt, requests = _typed("s12 1/2\r")
    assert requests == [SetRequest(board=12, result="1/2-1/2")]
    assert prompt.action is None
    assert prompt.line == HINT
    prompt, requests = _typed("call U12\r")
    assert requests == [ConfirmRequest(board=None, section="U12")]
    prompt, requests = _typed("c7\r")
    assert requests == [ConfirmRequest(board=7)]
    prompt, requests = _typed("s12 2-0\r")  # a typo: the prompt stays, saying why
    assert requests == []
    assert prompt.action == "set"
    assert "'2-0' is no result" in prompt.reply
    prompt, requests = _typed("\x7f\x7f\x7f1-0\r", prompt)  # corrected with Backspace
    assert requests == [SetRequest(board=12, result="1-0")]
    prompt, requests = _typed("s12\x1bx")  # Esc cancels; other keys do nothing
    assert requests == []
    assert prompt.action is None
    with pytest.raises(ValueError, match="1/2 for a draw"):
        parse_result("draw")
    assert keys_in("\x1b[C\x1b[Ds\x1bOP\x1b") == ["s", "\x1b"]  # arrows and F1 are no keys


def test_confirm_all_takes_the_provisional_results_of_the_section() -> None:
    states = [
        BoardState(board=1, section="OPEN", result="1-0"),
        BoardState(board=2, section="OPEN", result="0-1", result_final=True),
        BoardState(board=3, section="OPEN"),
        BoardState(board=11, section="U12", result="1/2-1/2"),
    ]
    assert confirmable(states, "OPEN") == ([1], [3])
    assert confirmable(states) == ([1, 11], [3])
    request = ConfirmRequest(board=None, section="OPEN")
    assert [c.board for c in request.commands(states)] == [1]
    line = summary(request, [(1, None)], [3])
    assert line == "confirmed: board 1; no result yet: board 3"
    refused = summary(ConfirmRequest(board=3), [(3, "board 3 has no result to confirm")])
    assert refused == "board 3 has no result to confirm"


def test_the_console_shows_finished_games_and_the_keys() -> None:
    boards = (
        BoardState(board=1, white="A, B", black="C, D", status=BoardStatus.ONLINE),
        BoardState(board=2, white="E, F", black="G, H", status=BoardStatus.ONLINE, result="1-0"),
        BoardState(
            board=3, status=BoardStatus.OFFLINE, serial="3", result="0-1", result_final=True
        ),
    )
    prompt, _ = _typed("c2")
    frame = ConsoleFrame(title="Open", boards=boards, alerts=(), keys=prompt)
    console = Console(file=io.StringIO(), width=140, color_system=None, record=True)
    console.print(render(frame, 0.0))
    text = console.export_text()
    rows = {line.split("│")[0].strip(): line for line in text.splitlines() if "│" in line}
    assert rows["1"].rstrip().endswith("live")
    assert rows["2"].rstrip().endswith("to confirm")
    assert rows["3"].rstrip().endswith("finished")  # decided: the pulled cable is no news
    assert "confirm (a board, all, or all SECTION; Enter sends, Esc cancels): 2" in text


async def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()

    def call() -> int:
        with redirect_stdout(out), redirect_stderr(err):
            return main(list(argv))

    code = await asyncio.to_thread(call)
    return code, out.getvalue(), err.getvalue()


async def _result(daemon: Daemon, config: Path, *argv: str) -> tuple[int, str, str]:
    port = str(daemon.server.port)
    return await _cli("result", *argv, "--config", str(config), "--http-port", port)


async def test_results_from_the_command_line_without_a_configured_token(tmp_path: Path) -> None:
    specs = [BoardSpec(1, None), BoardSpec(2, None), BoardSpec(3, None)]
    config = write_config(tmp_path, specs, token=None)
    assert arbiter_token(load_config(config)).value is None  # no daemon ran yet
    code, _, err = await _cli("result", "set", "1", "1-0", "--config", str(config))
    assert code == 1
    assert "no daemon has run" in err
    assert "arbiter-token" in err
    async with running_daemon(config) as daemon:
        engine = daemon.core.engine
        token = local_token_path(load_config(config))
        assert stat.S_IMODE(token.stat().st_mode) == 0o600
        secret = token.read_text().strip()
        assert daemon.config.server.arbiter_token == secret
        assert len(secret) >= 24
        address = arbiter_address("http://127.0.0.1:8080", daemon)
        assert address == f"http://127.0.0.1:8080/arbiter#token={secret}"

        code, out, err = await _result(daemon, config, "set", "1", "1/2")
        assert (code, err) == (0, "")
        assert out == "board 1: 1/2-1/2 set (provisional until confirmed)\n"
        code, out, _ = await _result(daemon, config, "set", "2", "0-1")
        state = engine.result_of(1)
        assert state is not None
        assert state.result == "1/2-1/2"
        assert not state.confirmed

        code, out, err = await _result(daemon, config, "confirm", "3")
        assert code == 1
        assert "board 3 has no result to confirm" in err
        code, out, err = await _result(daemon, config, "confirm", "--all")
        assert code == 0, err
        assert out.splitlines() == [
            "board 1: 1/2-1/2 confirmed",
            "board 2: 0-1 confirmed",
            "no result yet: board 3",
        ]
        assert all((s := engine.result_of(n)) is not None and s.confirmed for n in (1, 2))
        code, out, _ = await _result(daemon, config, "confirm", "--all")
        assert out.splitlines() == ["no result yet: board 3"]
        code, _, err = await _result(daemon, config, "confirm", "2", "--section", "U12")
        assert code == 1
        assert "no section 'U12'" in err
        code, _, err = await _cli(
            "round", "next", "--config", str(config), "--http-port", str(daemon.server.port)
        )
        assert code == 1
        assert "results not confirmed: board 3: no result" in err

        url = f"ws://127.0.0.1:{daemon.server.port}/ws/arbiter"
        async with connect(url) as ws:  # a wrong token is still refused
            await ws.send(json.dumps({"type": "auth", "token": "guess-" + secret}))
            assert json.loads(await ws.recv()) == {"type": "error", "reason": "bad token"}
    async with running_daemon(config) as daemon:  # a restart keeps the token
        assert daemon.config.server.arbiter_token == secret


async def test_a_wrong_token_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path, [BoardSpec(1, None)])  # token "arbiter-secret"
    async with running_daemon(config) as daemon:
        monkeypatch.setenv("DGTCAST_ARBITER_TOKEN", "not-the-arbiter-secret")
        code, out, err = await _result(daemon, config, "set", "1", "1-0")
    assert code == 1
    assert out == ""
    assert err == "dgtcast: the daemon refused the arbiter token: bad token\n"


async def test_the_console_keys_set_and_confirm_results(tmp_path: Path) -> None:
    config = write_config(tmp_path, [BoardSpec(1, None), BoardSpec(2, None)])
    async with running_daemon(config) as daemon:
        engine = daemon.core.engine
        keys = ConsoleKeys(daemon)
        keys.feed("s1 1-0\r")
        await wait_for(lambda: engine.result_of(1) is not None, 10, "board 1's result set")
        await wait_for(lambda: "board 1: 1-0 set" in keys.prompt.reply, 10, "the answer shown")
        keys.feed("s2 0-1\r")
        await wait_for(lambda: engine.result_of(2) is not None, 10, "board 2's result set")
        answer = await keys.carry_out(ConfirmRequest(board=None))
        assert answer == "confirmed: boards 1, 2"
        assert all((s := engine.result_of(n)) is not None and s.confirmed for n in (1, 2))
        frame = console_frame(daemon, keys.prompt)
        assert [(s.board, s.result, s.result_final) for s in frame.boards] == [
            (1, "1-0", True),
            (2, "0-1", True),
        ]
        reply = await daemon.service.execute(SetResult(board=1, result="*"))
        assert reply.ok
        assert await keys.carry_out(ConfirmRequest(board=1)) == "board 1 has no result to confirm"


async def test_every_result_of_the_arbiter_page_from_the_command_line(tmp_path: Path) -> None:
    typed = {
        1: ["+-"],
        2: ["--", "-+"],
        3: ["--", "--"],  # the double forfeit after the end of the options
        4: ["white-by-forfeit"],
        5: ["black-by-forfeit"],
        6: ["Double-Forfeit"],
        7: ["1/2"],
    }
    expected = {1: "+-", 2: "-+", 3: "--", 4: "+-", 5: "-+", 6: "--", 7: "1/2-1/2"}
    config = write_config(tmp_path, [BoardSpec(n, None) for n in typed])
    async with running_daemon(config) as daemon:
        port = str(daemon.server.port)
        options = ["--config", str(config), "--http-port", port]
        for board, words in typed.items():
            code, out, err = await _cli("result", "set", *options, str(board), *words)
            assert (code, err) == (0, ""), words
            assert out == f"board {board}: {expected[board]} set (provisional until confirmed)\n"
        for board, result in expected.items():
            state = daemon.core.engine.result_of(board)
            assert state is not None
            assert state.result == result
        code, out, err = await _cli("result", "set", *options, "1", "2-0")
        assert (code, out) == (2, "")
        assert err.splitlines() == [
            "dgtcast result set: '2-0' is no result: write one of *, +-, -+, --, 0-1, 1-0,"
            " 1/2-1/2 (1/2 for a draw; white-by-forfeit, black-by-forfeit, double-forfeit"
            " for +-, -+, --)"
        ]
        kept = daemon.core.engine.result_of(1)
        assert kept is not None
        assert kept.result == "+-"  # the bad one changed nothing


async def test_a_result_contrary_to_a_mate_on_the_board_asks_for_a_confirmation(
    tmp_path: Path, games_dir: Path
) -> None:
    """Issue 33, item 3: on the page (an open alert), the command line and the console."""
    mate = read_game(games_dir / "molinari-bordais-1979.pgn")  # 0-1 by mate
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=33) as board:
        config = write_config(tmp_path, [BoardSpec(1, str(board.path)), BoardSpec(2, None)])
        async with running_daemon(config) as daemon:
            engine = daemon.core.engine
            await wait_for(daemon.sessions[1].online.is_set, 10, "board online")
            await board.play(mate, speed=25)
            await wait_for(lambda: engine.result_of(1) is not None, 10, "mate on the board")
            code, out, err = await _result(daemon, config, "set", "1", "1-0")
            assert code == 0
            assert out == "board 1: 1-0 set (provisional until confirmed)\n"
            assert err.splitlines() == [
                "warning: Board 1: 1-0 was set, but the board says 0-1 (checkmate on the"
                " board). Check the board and the scoresheets; confirm 1-0 if it is meant,"
                " or set the result again.",
                "  to keep it: dgtcast result confirm 1 --config FILE",
            ]
            (page,) = [a for a in daemon.hub.open_alerts() if a.kind == "result_contradicts_board"]
            assert page.details["board_result"] == "0-1"
            keys = ConsoleKeys(daemon)
            answer = await keys.carry_out(SetRequest(board=1, result="1/2-1/2"))
            assert answer.startswith("board 1: 1/2-1/2 set")
            assert "warning: Board 1: 1/2-1/2 was set, but the board says 0-1" in answer
            code, out, err = await _result(daemon, config, "set", "2", "1-0")  # no e-board
            assert (code, err) == (0, "")
            code, out, err = await _result(daemon, config, "confirm", "1")
            assert (code, err) == (0, "")
            assert not [a for a in daemon.hub.open_alerts() if a.board == 1]
            state = engine.result_of(1)
            assert state is not None
            assert (state.result, state.confirmed) == ("1/2-1/2", True)
