"""docs/tournament.md walked with its own commands, as real processes, on emulated boards.

Two sections (OPEN on boards 1-2, U12 on 41-42, board 42 without an e-board), boards by
serial number and no port, two rounds of the pairing program's files. Every step is a
command of the walkthrough: ``dgtcast emulate --serial … --clock-mode 23`` per e-board
(its rehearsal), ``dgtcast boards --config``, ``dgtcast run --config … --set-clocks``,
``dgtcast result set`` for the board without an e-board, ``dgtcast result confirm
--all``, then between rounds, while the daemon runs: ``dgtcast round next``, the
emulators started again with the next round's games (on new ports), ``dgtcast clocks
set``; after the last round ``round next`` says the event is over, and says so again
after a restart. Each round ends with no open alert, and no ``clock_mismatch`` is ever
raised. Only the HTTP port differs (``--http-port 0``: the tests share a machine).

Then §1's "Rehearse what goes wrong" in the rehearsal's copy of an event: a late arrival
(``--late-by inf``), a flag fall (``--plies``), a pulled cable (``kill -USR1``, twice).
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from broadcast.feed.messages import BoardStatus
from daemon.commands.arbiter_client import arbiter_session, daemon_url
from daemon.config.model import load_config
from daemon.pairing import Tournament
from tests.daemon.support import emulator_processes
from tests.serving import DGTCAST

SERIALS = {1: "12401", 2: "12388", 41: "20455"}
CLOCKS = {1: "5400+30", 2: "5400+30", 41: "3600+30"}
MATE = '[Result "1-0"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n'
FOOL = '[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n'
#: When an emulated game begins: once the daemon follows the board, then 3 s on; in
#: round 2 later, so that ``dgtcast clocks set`` comes first (tournament.md).
PLAY = ("--after-driver", "--wait", "3")
NEXT = ("--after-driver", "--wait", "15")
#: The games each e-board plays, by round.
GAMES = {1: {1: MATE, 2: FOOL, 41: MATE}, 2: {1: FOOL, 2: MATE, 41: FOOL}}

CONFIG = """\
[event]
name = "Spring Congress 2026"
site = "Riverside Club"
round = 1
time_control = "5400+30"
default_time = "30m"
dgt_mode = 23

[server]
arbiter_token = "a long random secret"

[storage]
path = "congress.db"

[pgn_folder]
path = "pgn"

[[sections]]
name = "OPEN"
[sections.pairing]
trf = "open.trf"
pairings = "open-round{round}.txt"
[[sections.boards]]
number = 1
serial = "12401"
[[sections.boards]]
number = 2
serial = "12388"

[[sections]]
name = "U12"
time_control = "3600+30"
[sections.pairing]
trf = "u12.trf"
pairings = "u12-round{round}.txt"
first_board = 41
[[sections.boards]]
number = 41
serial = "20455"
"""


def _event(folder: Path) -> Path:
    for section in ("open", "u12"):
        lines = [f"012 Spring Congress 2026 {section}", "XXR 2"]
        lines += [
            f"001 {rank:>4} m    {f'{section.title()}{rank}, Player':<33} {2000 - rank:>4} AUS"
            f" {3300000 + rank:>11} 2000/01/01 {'0.0':>4} {rank:>4}"
            for rank in range(1, 5)
        ]
        (folder / f"{section}.trf").write_text("\n".join(lines) + "\n")
        (folder / f"{section}-round1.txt").write_text("2\n1 2\n3 4\n")  # the pairing program
    (folder / "congress.toml").write_text(CONFIG)
    return folder / "congress.toml"


async def _dgtcast(folder: Path, *argv: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(DGTCAST), *argv, cwd=folder,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    async with asyncio.timeout(120):
        out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@asynccontextmanager
async def _daemon(folder: Path) -> AsyncIterator[str]:
    """``dgtcast run --config congress.toml --set-clocks``; its HTTP port."""
    log = (folder / "daemon.log").open("ab")
    process = await asyncio.create_subprocess_exec(
        str(DGTCAST), "run", "--config", "congress.toml", "--set-clocks", "--http-port", "0",
        cwd=folder, stdout=asyncio.subprocess.PIPE, stderr=log,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        port = ""
        async with asyncio.timeout(60):
            while not port:
                line = (await process.stdout.readline()).decode()
                assert line, (folder / "daemon.log").read_text()
                if line.startswith("viewer:"):
                    port = line.rsplit(":", 1)[1].strip(" /\n")
        yield port
    finally:
        process.send_signal(signal.SIGINT)
        async with asyncio.timeout(30):
            assert await process.wait() == 0
        log.close()


@asynccontextmanager
async def _boards(
    folder: Path, round_number: int, *start: str, at_once: bool = False
) -> AsyncIterator[None]:
    """One ``dgtcast emulate`` per e-board, as the rehearsal in tournament.md starts it;
    ``start``: when its game begins (``--after-driver --wait 3``: once the daemon reads it).

    One after the other, as people start them; ``at_once``, together (each is a Python
    start-up, a second or more on a busy machine), for ``dgtcast boards`` alone: e-boards
    that appear together before a running daemon are probed by each other's board
    sessions, and the first probe counts as the daemon following the board
    (``--after-driver``), seconds before its own session does.
    """
    boards = []
    for number, serial in SERIALS.items():
        pgn = folder / f"r{round_number}-b{number}.pgn"
        pgn.write_text(GAMES[round_number][number])
        # speed 4: replies of 0.25 s and more; faster ones than the daemon's answer to a
        # press on a busy machine beat its SETNRUN to the clock (docs/faults.md)
        options = ("--clock", CLOCKS[number], "--clock-mode", "23", *start, "--speed", "4")
        boards.append((pgn, serial, options))
    async with AsyncExitStack() as stack:
        for group in [boards] if at_once else [[board] for board in boards]:
            await stack.enter_async_context(emulator_processes(*group))
        yield


async def _until_played(folder: Path, port: str) -> None:
    config = load_config(folder / "congress.toml")

    async def results() -> set[int]:
        async with arbiter_session(config, http_port=int(port)) as session:
            return {s.board for s in session.boards if s.result != "*"}

    for _ in range(240):
        if set(SERIALS) <= await results():
            return
        await asyncio.sleep(0.5)
    raise AssertionError("the e-boards' games never ended")


async def _until_links(folder: Path, port: str, *, online: bool) -> None:
    """Until every e-board is offline (its emulator stopped), or back online."""
    config = load_config(folder / "congress.toml")

    async def lost() -> set[int]:
        async with arbiter_session(config, http_port=int(port)) as session:
            down = (BoardStatus.OFFLINE, BoardStatus.CONNECTING)
            return {s.board for s in session.boards if s.status in down}

    for _ in range(240):
        if (await lost() if online else set(SERIALS) - await lost()) == set():
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"the e-boards never went {'online' if online else 'offline'}")


async def _results_by_keyboard(folder: Path, port: str, typed: str, result: str) -> str:
    http = ("--config", "congress.toml", "--http-port", port)
    code, out, err = await _dgtcast(folder, "result", "set", "42", typed, *http)
    assert (code, err) == (0, ""), err
    assert out == f"board 42: {result} set (provisional until confirmed)\n"
    code, out, err = await _dgtcast(folder, "result", "confirm", "--all", *http)
    assert (code, err) == (0, ""), err
    return out


async def _alerts(folder: Path, port: str) -> tuple[list[str], list[str]]:
    """The kinds of the open alerts and of every alert raised, as the arbiter page gets
    them on sign-in."""
    config = load_config(folder / "congress.toml")
    async with connect(daemon_url(config, int(port))) as ws:
        await ws.send(json.dumps({"type": "auth", "token": "a long random secret"}))
        snapshot = json.loads(await ws.recv())
    open_ = [a["kind"] for a in snapshot["alerts"]]
    return open_, open_ + [a["kind"] for a in snapshot["resolved"]]


@pytest.mark.slow  # two rounds of games on emulated boards in real time (docs/development.md)
async def test_tournament_md_walked_with_emulated_boards(tmp_path: Path) -> None:
    _event(tmp_path)
    async with _boards(tmp_path, 1, "--wait", "3600", at_once=True):  # checked, nothing played
        code, out, _ = await _dgtcast(tmp_path, "boards", "--config", "congress.toml")
        assert code == 0
        named = {line.split()[1]: line.split()[-1] for line in out.splitlines()[1:]}
        assert named == {"12401": "1", "12388": "2", "20455": "41"}
    raised: list[str] = []
    async with _daemon(tmp_path) as port:
        http = ("--config", "congress.toml", "--http-port", port)
        async with _boards(tmp_path, 1, *PLAY):
            await _until_played(tmp_path, port)
            confirmed = await _results_by_keyboard(tmp_path, port, "1/2", "1/2-1/2")
            assert confirmed.splitlines() == [
                "board 1: 1-0 confirmed",
                "board 2: 0-1 confirmed",
                "board 41: 1-0 confirmed",
                "board 42: 1/2-1/2 confirmed",
            ]
            assert (await _alerts(tmp_path, port))[0] == []  # the round ends with none open
            for section in ("open", "u12"):  # the pairing program pairs round 2
                (tmp_path / f"{section}-round2.txt").write_text("2\n4 1\n2 3\n")
            code, out, err = await _dgtcast(tmp_path, "round", "next", *http)
            assert (code, out) == (0, "OPEN: round 2 (2 boards)\nU12: round 2 (2 boards)\n"), err
        await _until_links(tmp_path, port, online=False)
        async with _boards(tmp_path, 2, *NEXT):  # Ctrl-C, started again with the next game
            await _until_links(tmp_path, port, online=True)  # the console shows them back
            code, out, err = await _dgtcast(tmp_path, "clocks", "set", *http)
            assert code == 0, out + err
            assert sorted(out.splitlines()) == ["board 1: set", "board 2: set", "board 41: set"]
            await _until_played(tmp_path, port)
            await _results_by_keyboard(tmp_path, port, "0-1", "0-1")
            open_, raised = await _alerts(tmp_path, port)
            assert open_ == [], open_
            code, _, err = await _dgtcast(tmp_path, "round", "next", *http)
            assert code == 1
            assert err == (
                "dgtcast: not moved on: the event is over: every section has played its last"
                " round (OPEN: 2 rounds; U12: 2 rounds)\n"
            )
    assert "clock_mismatch" not in raised, raised
    async with _daemon(tmp_path) as port:  # a restart resumes in round 2
        code, _, err = await _dgtcast(tmp_path, "round", "next", "--config", "congress.toml",
                                      "--http-port", port)  # fmt: skip
        assert code == 1
        assert "the event is over" in err
    log = (tmp_path / "daemon.log").read_text()
    assert "Traceback" not in log
    assert "OPEN: the round is complete (round 1)" in log
    assert "U12: the round is complete (round 2)" in log
    open_trf = Tournament.from_trf(tmp_path / "open.trf")
    codes = {r: [e.code for e in open_trf.player(r).rounds if e is not None] for r in range(1, 5)}
    assert codes == {1: ["1", "1"], 2: ["0", "1"], 3: ["0", "0"], 4: ["1", "0"]}


#: The rehearsal's copy of an event (tournament.md §1, "Rehearse what goes wrong"): a
#: short default time to see the late arrival within seconds, a short clock to see the
#: flag fall. The players' names stand for the pairing program's (a board nobody is
#: paired on gets no late-arrival check).
REHEARSAL = """\
[event]
name = "Spring Congress 2026 (rehearsal)"
round = 1
dgt_mode = 23

[server]
arbiter_token = "a long random secret"

[storage]
path = "congress.db"

[[sections]]
name = "LATE"
time_control = "600+5"
default_time = "6s"
default_time_warning = "3s"
[[sections.boards]]
number = 1
serial = "30501"
white = "Late, Lena"
black = "Early, Eric"

[[sections]]
name = "FLAG"
time_control = "5"
[[sections.boards]]
number = 2
serial = "30502"
white = "Slow, Sam"
black = "Quick, Quinn"
"""


async def _emulate(folder: Path, serial: str, *options: str) -> asyncio.subprocess.Process:
    """``dgtcast emulate --serial SERIAL --game 1 OPTIONS`` as tournament.md §1 starts it."""
    process = await asyncio.create_subprocess_exec(
        str(DGTCAST), "emulate", "--serial", serial, "--game", "1", "--clock-mode", "23",
        "--after-driver", "--speed", "20", *options,
        cwd=folder, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    async with asyncio.timeout(60):
        assert (await process.stdout.readline()).decode().startswith("device: ")
    return process


async def _said(process: asyncio.subprocess.Process, words: str) -> None:
    """Until the emulator prints a line with ``words``."""
    assert process.stdout is not None
    async with asyncio.timeout(60):
        while words not in (line := (await process.stdout.readline()).decode()):
            assert line, f"the emulator ended before saying {words!r}"


async def _until_alert(folder: Path, port: str, kind: str, *, open_: bool = True) -> None:
    """Until an alert of ``kind`` is open (or, ``open_`` false, none is open any more)."""
    for _ in range(240):
        opened, _ = await _alerts(folder, port)
        if (kind in opened) == open_:
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"{kind}: {'never raised' if open_ else 'still open'}")


async def test_the_rehearsal_of_what_goes_wrong_from_the_command_line(tmp_path: Path) -> None:
    """tournament.md §1: a late arrival (``--late-by inf``), a flag fall (``--plies``), a
    pulled cable (``kill -USR1``, then again), from the command line only; Ctrl-C and
    ``--resume``, and ``u`` on standard input, in tests/emulator/test_cli.py."""
    (tmp_path / "congress.toml").write_text(REHEARSAL)
    async with _daemon(tmp_path) as port:
        late = await _emulate(tmp_path, "30501", "--clock", "600+5", "--late-by", "inf")
        flag = await _emulate(tmp_path, "30502", "--clock", "5", "--plies", "2", "--wait", "1")
        try:
            await _said(flag, "stopped after ply 2: the mover's time runs on")
            await _until_alert(tmp_path, port, "late_arrival")
            await _until_alert(tmp_path, port, "flag_fall")
            flag.send_signal(signal.SIGUSR1)
            await _said(flag, "cable pulled out")
            await _until_alert(tmp_path, port, "board_offline")
            flag.send_signal(signal.SIGUSR1)
            await _said(flag, "cable plugged back in")
            await _until_alert(tmp_path, port, "board_offline", open_=False)  # closed itself
            opened, raised = await _alerts(tmp_path, port)
            assert sorted(opened) == ["flag_fall", "late_arrival"], opened
            assert "board_offline" in raised
        finally:
            for process in (late, flag):
                if process.returncode is None:
                    process.send_signal(signal.SIGINT)
                    async with asyncio.timeout(30):
                        await process.wait()
    log = (tmp_path / "daemon.log").read_text()
    assert "Traceback" not in log
