"""The rehearsal with a killed daemon, N times: ``bench/rehearsal.py [--runs 10] ...``.

Each rehearsal is docs/tournament.md's with real processes: one ``dgtcast emulate`` board
(3600+10, mode 23, a DGT 3000, ``--after-driver --wait 5``) playing a game, ``dgtcast run
--config r.toml --set-clocks --plain`` following it. Between ``--kill`` seconds (15-45)
after the arbiter starts the clock the daemon is killed with ``kill -9``; after a
downtime of ``--down`` seconds (3-15) it is started again, the same command, while the
players go on moving. Once the players are done and the daemon proposes the result,
``dgtcast result confirm --all --config r.toml`` confirms it; then the daemon's record is
read as users get it: ``GET /board/1.pgn`` and the open alerts of the arbiter channel.
The truth is the game and the emulator's ``--record`` (bench/rehearsal_truth.py).

Each rehearsal has its own folder (``--out``, kept: r.toml, the journal, the daemon's
logs ``daemon-1.log`` and ``daemon-2.log``, the emulator's, the clock record, the PGN and
``result.json``), its own ports and journal; ``--parallel K`` runs K at once (they are
mostly idle). Loopback only; every wait is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import os
import random
import signal
import socket
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import chess.pgn
from common import machine, shared_dir
from rehearsal_truth import compare, expected_clocks, read_record
from websockets.asyncio.client import connect

from daemon.commands.emulate import read_game, shipped_game
from daemon.config.local_token import arbiter_token
from daemon.config.model import load_config
from daemon.game.durations import TimeControl

CONTROL = "3600+10"
#: Four shipped games (mates) and two of shared/data/games (results with the kings; not
#: anastasian-lewis.pgn, whose ply 82 is a null move: a press without a move).
DEFAULT_GAMES = "1,2,3,4,kasparov-deep-blue-1997.pgn:6,nepomniachtchi-liren-game1.pgn:1"
DGTCAST = str(Path(sys.executable).parent / "dgtcast")


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """One rehearsal: its game, when the daemon is killed and for how long, its seed."""

    number: int
    game: str
    kill_after: float
    downtime: float
    seed: int
    speed: float
    wait: float


@dataclass(slots=True, kw_only=True)
class Outcome:
    """What one rehearsal found (``result.json`` in its folder)."""

    number: int
    game: str
    kill_after: float
    downtime: float
    plies: int = 0
    pgn_plies: int = 0
    moves_exact: bool = False
    first_wrong_ply: int | None = None
    worst_clk_error: float = float("nan")
    worst_ply: int | None = None
    clk_errors: list[tuple[int, float, int]] | None = None
    missing_clocks: int = 0
    result: str = "?"
    game_result: str = "?"
    open_alerts: list[str] | None = None
    confirm: str = ""
    error: str = ""
    exact: bool = False


def game_args(spec: str) -> tuple[list[str], chess.pgn.Game]:
    """``N`` (a shipped game) or ``FILE:N`` (FILE in shared/data/games unless a path)."""
    if ":" not in spec:
        path, number = shipped_game(int(spec))
        return ["--game", spec], read_game(path, number)
    name, number_text = spec.rsplit(":", 1)
    path = Path(name)
    if not path.exists():
        path = shared_dir() / "data" / "games" / name
    return ["--pgn", str(path), "--game", number_text], read_game(path, int(number_text))


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_config(folder: Path, port: int) -> Path:
    """The rehearsal's r.toml: one board on the emulator's port, 3600+10, mode 23."""
    text = f"""[event]
name = "Rehearsal"
round = 1
time_control = "{CONTROL}"
dgt_mode = 23

[server]
host = "127.0.0.1"
port = {port}

[storage]
path = "journal.db"

[pgn_folder]
path = "pgn"

[[boards]]
number = 1
port = "{folder / "board"}"
white = "White, Player"
black = "Black, Player"
"""
    path = folder / "r.toml"
    path.write_text(text)
    return path


async def _start(command: list[str], log: Path, folder: Path) -> asyncio.subprocess.Process:
    with log.open("ab") as out:
        return await asyncio.create_subprocess_exec(
            *command,
            cwd=folder,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
        )


async def _until(what: str, check: Any, within: float, every: float = 0.2) -> Any:
    """Poll ``check()`` until it returns something true; raise after ``within`` s."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        await asyncio.sleep(every)
    raise TimeoutError(f"{what}: not within {within:g} s")


async def arbiter_snapshot(config_path: Path) -> dict[str, Any]:
    """The arbiter channel's snapshot (boards with provisional results, open alerts)."""
    config = load_config(config_path)
    token = arbiter_token(config).value
    url = f"ws://127.0.0.1:{config.server.port}/ws/arbiter"
    async with asyncio.timeout(10), connect(url) as ws:
        await ws.send(json.dumps({"type": "auth", "token": token}))
        snapshot: dict[str, Any] = json.loads(await ws.recv())
    return snapshot


def fetch(url: str) -> str:
    """GET ``url`` (loopback), as text."""
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


async def _stop(process: asyncio.subprocess.Process | None) -> None:
    if process is None or process.returncode is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        async with asyncio.timeout(15):
            await process.wait()
    except TimeoutError:
        process.kill()
        await process.wait()


async def rehearse(plan: Plan, folder: Path) -> Outcome:
    """One rehearsal in ``folder``; never raises (a failure is the outcome's ``error``)."""
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    outcome = Outcome(
        number=plan.number, game=plan.game, kill_after=plan.kill_after, downtime=plan.downtime
    )
    emulator = daemon = None
    try:
        emulator, daemon = await _play(plan, folder, outcome)
    except Exception as exc:
        outcome.error = f"{type(exc).__name__}: {exc}"
    finally:
        await _stop(daemon)
        await _stop(emulator)
    (folder / "result.json").write_text(json.dumps(asdict(outcome), indent=1) + "\n")
    return outcome


async def _play(
    plan: Plan, folder: Path, outcome: Outcome
) -> tuple[asyncio.subprocess.Process, asyncio.subprocess.Process]:
    args, game = game_args(plan.game)
    port = free_port()
    config = write_config(folder, port)
    record = folder / "clock.jsonl"
    emulate = [
        DGTCAST, "emulate", *args, "--clock", CONTROL, "--clock-mode", "23",
        "--clock-model", "dgt3000", "--after-driver", "--wait", f"{plan.wait:g}",
        "--speed", f"{plan.speed:g}", "--seed", str(plan.seed),
        "--link", str(folder / "board"), "--record", str(record),
    ]  # fmt: skip
    run = [DGTCAST, "run", "--config", str(config), "--set-clocks", "--plain"]
    emulator = await _start(emulate, folder / "emulator.log", folder)
    emulator_log = folder / "emulator.log"
    await _until("the emulator's port", lambda: (folder / "board").exists(), 20)
    daemon = await _start(run, folder / "daemon-1.log", folder)
    try:
        started = await _until("the clock's start", lambda: read_record(_lines(record)).start, 60)
        await asyncio.sleep(max(0.0, started + plan.kill_after - time.monotonic()))
        daemon.kill()  # kill -9
        await daemon.wait()
        await asyncio.sleep(plan.downtime)
        daemon = await _start(run, folder / "daemon-2.log", folder)
        plies = len(list(game.mainline_moves()))
        await _until("the game's end", lambda: "game over" in emulator_log.read_text(), plies * 15)
        proposed = await _until("a result to confirm", lambda: _proposed(config), 60, 1.0)
        done = await asyncio.create_subprocess_exec(
            DGTCAST, "result", "confirm", "--all", "--config", str(config),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        said, _ = await done.communicate()
        outcome.confirm = f"{proposed} -> exit {done.returncode}: {said.decode().strip()}"
        final = await _until("the result confirmed", lambda: _final(config), 20, 0.5)
        outcome.open_alerts = [f"{a['kind']} (board {a['board']})" for a in final["open"]]
        pgn = await asyncio.to_thread(fetch, f"http://127.0.0.1:{port}/board/1.pgn")
        (folder / "board-1.pgn").write_text(pgn)
        expected = expected_clocks(read_record(_lines(record)), TimeControl.from_text(CONTROL))
        found = compare(game, pgn, expected)
        outcome.plies, outcome.pgn_plies = found.plies, found.pgn_plies
        outcome.moves_exact, outcome.first_wrong_ply = found.moves_exact, found.first_wrong_ply
        outcome.worst_clk_error, outcome.worst_ply = found.worst_error, found.worst_ply
        outcome.clk_errors = list(found.errors)
        outcome.missing_clocks = len(found.missing_clocks)
        outcome.result, outcome.game_result = found.result, found.game_result
        outcome.exact = found.exact() and not outcome.open_alerts
    except BaseException:
        await _stop(daemon)
        raise
    return emulator, daemon


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except OSError:
        return []


async def _proposed(config: Path) -> str | None:
    """The board's provisional result, once the daemon has one (None before)."""
    with contextlib.suppress(OSError, TimeoutError, ValueError):
        board = (await arbiter_snapshot(config)).get("boards", [{}])[0]
        if board.get("result", "*") != "*" and not board.get("result_final"):
            return str(board["result"])
    return None


async def _final(config: Path) -> dict[str, Any] | None:
    """The snapshot's open alerts once the board's result is final (None before)."""
    with contextlib.suppress(OSError, TimeoutError, ValueError):
        snapshot = await arbiter_snapshot(config)
        if snapshot.get("boards", [{}])[0].get("result_final"):
            alerts = snapshot.get("alerts", [])
            return {"open": [a for a in alerts if a.get("state") == "open"]}
    return None


def plans(args: argparse.Namespace) -> list[Plan]:
    """The runs: games in turn, kill times and downtimes drawn from ``--seed``."""
    rng = random.Random(args.seed)
    games = args.games.split(",")
    return [
        Plan(
            number=n,
            game=games[(n - 1) % len(games)],
            kill_after=round(rng.uniform(*args.kill), 1),
            downtime=round(rng.uniform(*args.down), 1),
            seed=args.seed * 1000 + n,
            speed=args.speed,
            wait=args.wait,
        )
        for n in range(1, args.runs + 1)
    ]


def line(outcome: Outcome) -> str:
    """One run's printed line."""
    if outcome.error:
        return f"run {outcome.number:2}  {outcome.game:32}  FAILED: {outcome.error}"
    worst = f"{outcome.worst_clk_error:.0f} s"
    if outcome.worst_ply is not None and outcome.worst_clk_error > 0:
        worst += f" (ply {outcome.worst_ply})"
    alerts = ", ".join(outcome.open_alerts or []) or "none"
    if outcome.clk_errors:
        ply, clk, truth = outcome.clk_errors[0]
        worst += f", first off at ply {ply}: {clk:.0f} for {truth}"
    return (
        f"run {outcome.number:2}  {outcome.game:32}  kill {outcome.kill_after:4.1f} s  "
        f"down {outcome.downtime:4.1f} s  plies {outcome.pgn_plies}/{outcome.plies}  "
        f"moves {'exact' if outcome.moves_exact else 'WRONG'}  worst [%clk] {worst}  "
        f"result {outcome.result}  open alerts: {alerts}  {'EXACT' if outcome.exact else 'NOT'}"
    )


async def run_all(plans_: list[Plan], out: Path, parallel: int) -> list[Outcome]:
    """Every rehearsal, ``parallel`` at once; prints each line as it ends."""
    gate = asyncio.Semaphore(parallel)

    async def one(plan: Plan) -> Outcome:
        async with gate:
            outcome = await rehearse(plan, out / f"run-{plan.number:02}")
            print(line(outcome), flush=True)
            return outcome

    return list(await asyncio.gather(*(one(plan) for plan in plans_)))


def _range(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    return float(low), float(high or low)


def main(argv: list[str] | None = None) -> int:
    """Run the rehearsals; exit 0 when every one is exact."""
    options = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    options.add_argument("--runs", type=int, default=10, help="rehearsals (default 10)")
    options.add_argument("--games", default=DEFAULT_GAMES, help="N or FILE:N, comma-separated")
    options.add_argument("--speed", type=float, default=2.0, help="emulate --speed (default 2)")
    options.add_argument("--seed", type=int, default=1, help="draws kill times and players")
    options.add_argument("--parallel", type=int, default=1, help="rehearsals at once (≤ 3)")
    options.add_argument("--kill", type=_range, default=(15.0, 45.0), help="seconds, 15-45")
    options.add_argument("--down", type=_range, default=(3.0, 15.0), help="seconds, 3-15")
    options.add_argument("--wait", type=float, default=5.0, help="emulate --wait (default 5)")
    options.add_argument("--out", type=Path, help="the runs' folders (default: a new temp one)")
    args = options.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="dgtcast-rehearsal-"))
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DGTCAST_SHARED", str(shared_dir()))
    print(f"machine: {machine()}; load {os.getloadavg()[0]:.1f}; runs in {out}", flush=True)
    print(f"--speed {args.speed:g}, --seed {args.seed}, --parallel {args.parallel}", flush=True)
    started = time.monotonic()
    outcomes = asyncio.run(run_all(plans(args), out, max(1, args.parallel)))
    exact = sum(o.exact for o in outcomes)
    games = len({o.game for o in outcomes})
    print(
        f"{exact}/{len(outcomes)} rehearsals exact ({games} games; "
        f"{time.monotonic() - started:.0f} s; load {os.getloadavg()[0]:.1f})"
    )
    return 0 if exact == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
