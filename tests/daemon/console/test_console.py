"""The live console: its view (pure), and ``dgtcast run`` on a real pseudo-terminal.

The pty test starts the daemon in its own process on a pty (as a person's terminal), an
emulated board on another pty, plays moves and reads what the terminal was sent: the
board table with players, serial, clocks and the last move, the warning about the
missing board above it. With its output in a pipe, the same daemon writes log lines only.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import chess.pgn
from rich.console import Console

from broadcast.feed.alerts import Alert, AlertKind
from broadcast.feed.messages import BoardState, BoardStatus, MoveInfo
from daemon.console.view import ConsoleFrame, memory_progress, render, wanted
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from tests.daemon.config_file import BoardSpec, write_config
from tests.serving import dgtcast_run

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][AB0-9]|\r")


def _text(frame: ConsoleFrame, now: float, width: int = 140) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    console.print(render(frame, now))
    return console.export_text()


def test_the_view_shows_boards_clocks_results_and_alerts() -> None:
    moves = (
        MoveInfo(san="e4", uci="e2e4", clock=None, emt=None),
        MoveInfo(san="c5", uci="c7c5", clock=None, emt=None),
    )
    running = BoardState(
        board=1,
        white="Carlsen, Magnus",
        black="Caruana, Fabiano",
        moves=moves,
        white_clock=5400.0,
        black_clock=5370.0,
        running="white",
        clock_at=1000.0,
        status=BoardStatus.ONLINE,
        serial="10001",
        battery=84,  # a Bluetooth board
    )
    over = BoardState(
        board=2, section="U12", white="A, B", black="C, D", result="1-0", serial="10002"
    )
    lost = BoardState(board=3, white="E, F", black="G, H", status=BoardStatus.OFFLINE, serial="3")
    silent = BoardState(board=4, white="I, J", black="K, L")
    alert = Alert(
        id=7, kind=AlertKind.BOARD_OFFLINE, board=3, at=990.0, action="Board 3: check its cable"
    )
    frame = ConsoleFrame(
        title="Spring Open: round 2",
        boards=(running, over, lost, silent),
        alerts=(alert,),
        progress="reading journal.db",
    )
    text = _text(frame, now=1061.0)
    rows = {line.split("│")[0].strip(): line for line in text.splitlines() if "│" in line}
    assert "▸1:28:59  1:29:30" in rows["1"]  # White's clock ran 61 s since the reading
    assert "1... c5" in rows["1"]
    assert "#10001 84%" in rows["1"]
    assert "%" not in rows["U12 2"]  # a USB board: no battery
    assert "live" in rows["1"]
    assert "1-0 provisional" in rows["U12 2"]
    assert "#3 lost" in rows["3"]
    assert "OFFLINE" in rows["3"]
    assert "no link" in rows["4"]
    assert "not heard" in rows["4"]
    assert "reading journal.db" in text
    assert "open alerts: 1" in text
    assert "#7 board offline" in text
    assert "Board 3: check its cable" in text
    calm = ConsoleFrame(title="Spring Open: round 2", boards=(running,), alerts=())
    assert "no open alerts" in _text(calm, now=1000.0)


def test_an_80_column_terminal_shows_every_board_its_clocks_result_and_state() -> None:
    """The walkthrough's terminal: the Link column goes, nothing the arbiter needs does."""
    moves = (MoveInfo(san="Qh4#", uci="d8h4", clock=None, emt=None),) * 40
    boards = (
        BoardState(
            board=20,
            section="OPEN",
            white="Okafor, Daniel",
            black="Lindqvist, Maja",
            moves=moves,
            white_clock=5400.0,
            black_clock=5370.0,
            running="white",
            clock_at=1000.0,
            status=BoardStatus.ONLINE,
            serial="12401",
        ),
        BoardState(board=41, section="U12", white="A, B", black="C, D", result="1/2-1/2"),
        BoardState(board=42, section="U12", white="E, F", black="G, H", result="1-0",
                   result_final=True),
    )  # fmt: skip
    frame = ConsoleFrame(title="Spring Congress 2026", boards=boards, alerts=())
    narrow = _text(frame, now=1000.0, width=80)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    rows = {line.split("│")[0].strip(): line for line in narrow.splitlines() if "│" in line}
    assert set(rows) == {"OPEN 20", "U12 41", "U12 42"}
    assert "▸1:30:00  1:29:30" in rows["OPEN 20"]
    assert "20... Qh4#" in rows["OPEN 20"]
    assert rows["OPEN 20"].rstrip().endswith("live")
    assert "1/2-1/2" in rows["U12 41"]
    assert rows["U12 41"].rstrip().endswith("to confirm")
    assert rows["U12 42"].rstrip().endswith("finished")
    assert "#12401" not in narrow
    wide = _text(frame, now=1000.0, width=140)
    assert "#12401" in wide
    assert "1/2-1/2 provisional" in wide


def test_acknowledged_alerts_are_marked_and_the_last_resolved_ones_say_why() -> None:
    flag = Alert(id=8, kind=AlertKind.FLAG_FALL, board=2, at=995.0, action="Board 2: confirm 1-0")
    offline = Alert(id=7, kind=AlertKind.BOARD_OFFLINE, board=3, at=990.0)
    frame = ConsoleFrame(
        title="Spring Open: round 2",
        boards=(),
        alerts=(flag.acknowledge(1000.0),),
        resolved=(offline.resolve(1030.0, "the e-board answers again after 40s"),),
    )
    text = _text(frame, now=1061.0)
    assert "open alerts: 1 (1 acknowledged)" in text
    assert "#8 flag fall (board 2) (acknowledged)" in text
    assert "resolved lately:" in text
    assert "#7 board offline (board 3)" in text
    assert "resolved by dgtcast: the e-board answers again after 40s" in text


def test_boards_reading_their_memory_get_the_progress_line() -> None:
    catching_up = [
        BoardState(board=number, status=BoardStatus.CATCHING_UP, serial=str(number))
        for number in (3, 7)
    ]
    live = BoardState(board=1, status=BoardStatus.ONLINE)
    assert memory_progress([live]) is None
    line = memory_progress([live, catching_up[0]])
    assert line is not None
    assert line.startswith("reading the memory of board 3:")
    both = memory_progress([live, *catching_up])
    assert both is not None
    assert both.startswith("reading the memory of boards 3, 7:")
    frame = ConsoleFrame(title="Open", boards=(live, *catching_up), alerts=(), progress=both)
    text = _text(frame, now=0.0)
    assert "reading the memory of boards 3, 7" in text
    rows = {line.split("│")[0].strip(): line for line in text.splitlines() if "│" in line}
    assert "catching up" in rows["3"]


def test_the_console_is_for_terminals_only() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wanted(Tty(), {"TERM": "xterm"})
    assert not wanted(io.StringIO(), {"TERM": "xterm"})
    assert not wanted(Tty(), {"TERM": "dumb"})


#: Board 2's port: short, so that the log line naming it fits the terminal whatever the
#: temporary folder (a worker's is longer), and absent on every machine.
ABSENT = "/dev/dgtcast-absent"


def _config(folder: Path, port: str) -> Path:
    boards = [
        BoardSpec(1, port, "Carlsen, Magnus", "Caruana, Fabiano", serial="70001"),
        BoardSpec(2, ABSENT, "Ding, Liren", "Gukesh, D"),
    ]
    return write_config(
        folder,
        boards,
        name="Console Open",
        site=None,
        round_number=3,
        journal="j.db",
        file="console.toml",
    )


@contextlib.contextmanager
def _daemon_on_a_pty(config: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    master, slave = os.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "150", "LINES": "40"}
    env.pop("JOURNAL_STREAM", None)
    process = subprocess.Popen(
        dgtcast_run(config),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=config.parent,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    try:
        yield process, master
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        os.close(master)


class Screen:
    """What the terminal was sent, escape sequences removed."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.text = ""
        os.set_blocking(master, False)

    def read(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            while chunk := os.read(self.master, 65536):
                self.text += ANSI.sub("", chunk.decode("utf-8", "replace"))

    async def wait_for(self, *needles: str, within: float = 30.0) -> None:
        try:
            async with asyncio.timeout(within):
                while True:
                    self.read()
                    if all(needle in self.text for needle in needles):
                        return
                    await asyncio.sleep(0.1)
        except TimeoutError:
            missing = [n for n in needles if n not in self.text]
            raise AssertionError(f"never shown: {missing}; last:\n{self.text[-3000:]}") from None


async def test_run_on_a_terminal_shows_the_live_console(tmp_path: Path) -> None:
    game = chess.pgn.read_game(io.StringIO("1. e4 c5 2. Nf3 d6 *"))
    assert game is not None
    board = EmulatedBoard(
        path=tmp_path / "dgt-1",
        clock=ClockSettings.from_text("3+2"),
        identity=BoardIdentity.from_serial("70001"),
    )
    async with board:
        with _daemon_on_a_pty(_config(tmp_path, str(tmp_path / "dgt-*"))) as (process, master):
            screen = Screen(master)
            await screen.wait_for("Board", "Players", "Carlsen, Magnus – Caruana, Fabiano")
            await screen.wait_for("#70001", "connecting")  # board 2: never heard
            await screen.wait_for("board 2 has no e-board link", "does not exist")
            await board.play(game, speed=20)
            await screen.wait_for("2... d6", "live")  # the last move, once the game is played
            assert "no open alerts" in screen.text
            process.send_signal(signal.SIGINT)
            assert await asyncio.to_thread(process.wait, 20) == 0


async def test_run_into_a_pipe_writes_log_lines_only(tmp_path: Path) -> None:
    config = _config(tmp_path, str(tmp_path / "dgt-*"))
    process = await asyncio.create_subprocess_exec(
        *dgtcast_run(config),
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(30):
            while not any("board 2 has no e-board link" in line for line in lines):
                lines.append((await process.stdout.readline()).decode())
    finally:
        process.send_signal(signal.SIGINT)
        await asyncio.wait_for(process.wait(), 20)
    text = "".join(lines)
    assert "viewer:  http://127.0.0.1:" in text
    assert " WARNING daemon.shell.board_check board 2 has no e-board link" in text
    assert "┃" not in text
    assert "\x1b[" not in text


async def test_results_are_set_and_confirmed_from_the_console_keys(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        [BoardSpec(1, None, "Ding, Liren", "Gukesh, D")],
        name="Keys Open",
        site=None,
        round_number=1,
        default_time=None,
        token=None,
        journal="j.db",
        file="keys.toml",
    )
    with _daemon_on_a_pty(config) as (process, master):
        screen = Screen(master)
        await screen.wait_for("Ding, Liren – Gukesh, D", "keys: s set a result")
        os.write(master, b"s1 1/2\r")
        await screen.wait_for("board 1: 1/2-1/2 set (provisional until confirmed)", "to confirm")
        os.write(master, b"call\r")
        await screen.wait_for("confirmed: board 1", "finished")
        process.send_signal(signal.SIGINT)
        assert await asyncio.to_thread(process.wait, 20) == 0
