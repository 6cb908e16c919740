"""``dgtcast emulate`` as a real process: prints the device, plays, stops on Ctrl-C."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import chess
import chess.pgn
import pytest

from daemon.cli import main
from daemon.shell.app import Daemon
from drivers.dgt import commands as cmd
from drivers.dgt.events import BatteryStatus, Event, SerialNumber
from tests.daemon.support import BoardSpec, running_daemon, wait_for, write_config
from tests.emulator.client import PtyClient
from tests.emulator.support import placement, sensors
from tests.serving import START_LIMIT, dgtcast

ROOT = Path(__file__).resolve().parents[2]


async def start(*arguments: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *dgtcast("emulate", *arguments),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def device_of(process: asyncio.subprocess.Process) -> Path:
    assert process.stdout is not None
    async with asyncio.timeout(START_LIMIT):
        line = (await process.stdout.readline()).decode()
    assert line.startswith("device: "), line
    return Path(line.removeprefix("device: ").strip())


async def test_emulate_plays_the_game_and_stops_on_ctrl_c(games_dir: Path) -> None:
    pgn = games_dir / "molinari-bordais-1979.pgn"
    with pgn.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    final = game.end().board()
    process = await start(
        "--pgn", str(pgn), "--speed", "300", "--wait", "0.3", "--baud", "0", "--seed", "4"
    )
    try:
        path = await device_of(process)
        client = PtyClient(path)
        try:
            client.send(cmd.RequestBoard(), cmd.StartUpdateNice())
            await client.until(lambda events: placement(sensors(events)) == final, within=20)
        finally:
            client.close()
        assert process.stdout is not None
        async with asyncio.timeout(10):
            over = (await process.stdout.readline()).decode()
        assert over.startswith("game over: 10 plies")
        process.send_signal(signal.SIGINT)
        async with asyncio.timeout(10):
            assert await process.wait() == 0
        assert not path.exists()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_emulate_exits_after_the_game_when_asked(games_dir: Path, tmp_path: Path) -> None:
    link = tmp_path / "ttyDGT"
    process = await start(
        "--pgn",
        str(games_dir / "molinari-bordais-1979.pgn"),
        *("--speed", "1000", "--wait", "0", "--baud", "0", "--exit", "--rotate"),
        *("--link", str(link), "--clock", "3+2", "--clock-model", "dgt3000"),
    )
    try:
        assert await device_of(process) == link
        async with asyncio.timeout(20):
            assert await process.wait() == 0
        assert not link.exists()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_without_a_pgn_file_the_board_plays_a_game_shipped_with_dgtcast(
    tmp_path: Path,
) -> None:
    """The rehearsal of docs/tournament.md runs in the event's folder: no PGN file there."""
    process = await asyncio.create_subprocess_exec(
        *dgtcast("emulate", "--game", "4", "--speed", "1000", "--wait", "0", "--baud", "0"),
        *("--exit", "--link", str(tmp_path / "ttyDGT")),
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        await device_of(process)
        assert process.stdout is not None
        async with asyncio.timeout(30):
            over = (await process.stdout.readline()).decode()
            assert await process.wait() == 0
        assert over == "game over: 21 plies played, result 1-0\n"  # Réti v Tartakower
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def test_a_missing_pgn_file_says_the_shipped_games_need_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["emulate", "--pgn", str(tmp_path / "opera.pgn")]) == 2
    assert capsys.readouterr().err == (
        f"dgtcast emulate: {tmp_path / 'opera.pgn'}: no such file (without --pgn the board"
        " plays a game shipped with dgtcast)\n"
    )
    assert main(["emulate", "--game", "9"]) == 2
    assert "without --pgn the games are those shipped: 1 evergreen, " in capsys.readouterr().err


@pytest.mark.parametrize("battery", [None, "84"])
async def test_emulate_acts_as_a_bluetooth_board_with_battery_else_as_a_usb_board(
    games_dir: Path, battery: str | None
) -> None:
    pgn = str(games_dir / "molinari-bordais-1979.pgn")
    extra = [] if battery is None else ["--battery", battery]
    process = await start("--pgn", pgn, "--wait", "30", "--baud", "0", *extra)
    try:
        client = PtyClient(await device_of(process))
        try:
            # A USB board says nothing to 0x4C: the serial number behind it comes first.
            client.send(cmd.RequestBattery(), cmd.RequestSerialNumber())
            events = await client.until(lambda events: any(_is_serial(e) for e in events))
            if battery is None:
                assert not any(isinstance(e, BatteryStatus) for e in events)
            else:
                (status,) = [e for e in events if isinstance(e, BatteryStatus)]
                assert status.percent == 84
                assert events.index(status) < next(i for i, e in enumerate(events) if _is_serial(e))
        finally:
            client.close()
    finally:
        process.send_signal(signal.SIGINT)
        async with asyncio.timeout(10):
            await process.wait()


def _is_serial(event: Event) -> bool:
    return isinstance(event, SerialNumber)


@pytest.mark.parametrize(
    "arguments",
    [
        ["--pgn", "missing.pgn"],
        ["--game", "2"],
        ["--clock", "fast"],
        ["--speed", "0"],
        ["--noise", "2"],
    ],
)
def test_bad_usage_exits_2(
    arguments: list[str], games_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pgn = ["--pgn", str(games_dir / "molinari-bordais-1979.pgn")]
    assert main(["emulate", *pgn, *arguments]) == 2
    assert "dgtcast emulate:" in capsys.readouterr().err


@pytest.mark.parametrize("level", ["120", "full"])
def test_a_bad_battery_level_exits_2(
    level: str, games_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pgn = ["--pgn", str(games_dir / "molinari-bordais-1979.pgn")]
    with pytest.raises(SystemExit) as exit_:
        main(["emulate", *pgn, "--battery", level])
    assert exit_.value.code == 2
    assert f"a battery level is 0..100, not '{level}'" in capsys.readouterr().err


async def test_emulate_after_driver_plays_once_a_driver_follows_the_board(
    games_dir: Path,
) -> None:
    pgn = str(games_dir / "molinari-bordais-1979.pgn")
    process = await start("--pgn", pgn, "--after-driver", "--wait", "0", "--speed", "300")
    try:
        path = await device_of(process)
        client = PtyClient(path)
        try:
            client.send(cmd.RequestBoard(), cmd.StartUpdateNice())  # a driver follows it
            assert process.stdout is not None
            async with asyncio.timeout(20):
                assert (await process.stdout.readline()).decode() == "driver connected\n"
                over = (await process.stdout.readline()).decode()
            assert over.startswith("game over: 10 plies")
        finally:
            client.close()
        process.send_signal(signal.SIGINT)
        async with asyncio.timeout(10):
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_a_flag_fall_and_a_pulled_cable_rehearsed_from_the_command_line(
    games_dir: Path, tmp_path: Path
) -> None:
    """Issue 33, item 6: ``--plies`` stops the players (the mover's flag falls), a line
    ``u`` on standard input pulls the cable out and the next plugs it back in.

    A 6-second clock: the four plies take well under a second each side at ``--speed
    50``, so the flag falls seconds after them, not the twenty a longer clock would take."""
    link = tmp_path / "ttyDGT"
    process = await asyncio.create_subprocess_exec(
        *dgtcast(
            "emulate", "--pgn", str(games_dir / "molinari-bordais-1979.pgn"),
            "--link", str(link), "--speed", "50", "--wait", "0", "--after-driver",
            "--plies", "4", "--clock", "6", "--clock-mode", "23", "--baud", "0",
        ),
        cwd=ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        assert await device_of(process) == link
        config = write_config(tmp_path, [BoardSpec(1, str(link))], time_control="6")
        async with running_daemon(config) as daemon:
            engine = daemon.core.engine
            async with asyncio.timeout(30):
                assert (await process.stdout.readline()).decode() == "driver connected\n"
                line = (await process.stdout.readline()).decode()
            assert line == "stopped after ply 4: the mover's time runs on\n"

            def raised(kind: str) -> list[str]:
                return [a.kind for a in engine.alerts if a.kind == kind and a.is_open]

            await wait_for(lambda: bool(raised("flag_fall")), 30, "the flag fell")
            assert len(daemon.core.games[1].record.moves) == 4
            process.stdin.write(b"u\n")
            await process.stdin.drain()
            async with asyncio.timeout(10):
                assert (await process.stdout.readline()).decode() == "cable pulled out\n"
            await wait_for(lambda: not daemon.sessions[1].online.is_set(), 20, "board offline")
            process.stdin.write(b"u\n")
            await process.stdin.drain()
            async with asyncio.timeout(10):
                assert (await process.stdout.readline()).decode() == "cable plugged back in\n"
            await wait_for(daemon.sessions[1].online.is_set, 20, "board back online")
        process.send_signal(signal.SIGINT)
        async with asyncio.timeout(10):
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [("--plies", "-1", "0 or more"), ("--plies", "four", "counts plies"),
     ("--late-by", "soon", "is seconds")],
)  # fmt: skip
def test_bad_rehearsal_options_exit_2(
    option: str, value: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["emulate", option, value])
    assert stopped.value.code == 2
    assert words in capsys.readouterr().err


async def test_an_emulator_stopped_mid_game_resumes_where_it_was(
    games_dir: Path, tmp_path: Path
) -> None:
    """Issue 33, item 6: Ctrl-C lost the position; ``--resume`` goes on from it."""
    pgn = games_dir / "molinari-bordais-1979.pgn"  # 10 plies, mate
    with pgn.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    link = tmp_path / "ttyDGT"
    options = ["--pgn", str(pgn), "--link", str(link), "--speed", "50", "--wait", "0"]
    options += ["--after-driver", "--clock", "600+5", "--baud", "0"]

    async def emulator(*more: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            *dgtcast("emulate", *options, *more), cwd=ROOT, stdout=asyncio.subprocess.PIPE
        )

    async def line_of(process: asyncio.subprocess.Process) -> str:
        assert process.stdout is not None
        async with asyncio.timeout(30):
            return (await process.stdout.readline()).decode()

    first = await emulator("--plies", "5")
    second: asyncio.subprocess.Process | None = None
    try:
        assert await device_of(first) == link
        config = write_config(tmp_path, [BoardSpec(1, str(link))], time_control="600+5")
        async with running_daemon(config) as daemon:
            record = daemon.core.games[1].record
            assert await line_of(first) == "driver connected\n"
            assert await line_of(first) == "stopped after ply 5: the mover's time runs on\n"
            await wait_for(lambda: len(record.moves) == 5, 20, "five plies")
            first.send_signal(signal.SIGINT)
            assert await line_of(first) == (
                "position kept at ply 5: start again with --resume to go on\n"
            )
            async with asyncio.timeout(10):
                assert await first.wait() == 0
            second = await emulator("--resume", "--exit")
            assert await device_of(second) == link
            assert await line_of(second) == "resumed at ply 5\n"
            assert (await line_of(second)).startswith("driver connected")
            assert (await line_of(second)).startswith("game over: 10 plies")
            await wait_for(lambda: engine_result(daemon) == "0-1", 20, "the mate")
            assert [m.uci for m in record.moves] == [m.uci() for m in game.mainline_moves()]
            assert not [a for a in daemon.core.engine.alerts if a.kind == "out_of_sync"]
    finally:
        for process in (first, second):
            if process is not None and process.returncode is None:
                process.kill()
                await process.wait()


def engine_result(daemon: Daemon) -> str | None:
    state = daemon.core.engine.result_of(1)
    return None if state is None else str(state.result)


def test_resume_without_a_kept_board_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["emulate", "--link", str(tmp_path / "ttyDGT"), "--resume"]) == 2
    assert "--resume: nothing kept in" in capsys.readouterr().err
