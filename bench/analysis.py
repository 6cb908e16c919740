#!/usr/bin/env -S sh -c 'exec "$(dirname "$0")/../.venv/bin/python" "$0" "$@"'

"""The engine's cost per position: ``bench/analysis.py [--time S] [--depth N] [--plies N]``.

Every position of a real game (../shared/data/games) is analysed once by the project's
engine shell (broadcast/analysis/engine.py) at the given bound with one engine thread,
as ``[analysis]`` does. Printed: the engine process's CPU seconds per position (from
/proc, Linux), the wall time, the depth reached, and how many boards one engine thread
keeps up with when each board makes a move every ``--pace`` seconds (a blitz game: 3+2,
about 80 plies in 9 minutes, a ply every ~7 s per board). docs/performance.md has a run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path

import chess.pgn
from common import shared_dir

from broadcast.analysis.engine import DEFAULT_TIME, AnalystSettings, Engine
from broadcast.analysis.plan import Job

GAME = shared_dir() / "data" / "games" / "nepomniachtchi-liren-game1.pgn"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", type=float, default=None)
    parser.add_argument("--depth", type=int, default=None)
    parser.add_argument("--plies", type=int, default=60)
    parser.add_argument("--pace", type=float, default=7.0, help="seconds per ply per board")
    parser.add_argument("--game", type=Path, default=GAME)
    args = parser.parse_args()
    bound = args.time if args.time is not None or args.depth is not None else DEFAULT_TIME
    engine = Engine(AnalystSettings(time=bound, depth=args.depth, threads=1))
    await engine.start()
    assert engine.pid is not None
    with args.game.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    board, jobs = game.board(), []
    for move in list(game.mainline_moves())[: args.plies]:
        board.push(move)
        jobs.append(Job(fen=board.fen()))
    cpu, wall, depths = [], [], []
    for job in jobs:
        before_cpu, before = cpu_seconds(engine.pid), time.perf_counter()
        analysed = await engine.analyse(job)
        wall.append(time.perf_counter() - before)
        cpu.append(cpu_seconds(engine.pid) - before_cpu)
        depths.append(analysed.depth)
    await engine.close()
    per = statistics.mean(cpu)
    print(f"bound: time={bound} depth={args.depth}, 1 thread, {len(jobs)} positions")
    print(f"CPU per position: mean {per:.3f} s, max {max(cpu):.3f} s")
    print(f"wall per position: mean {statistics.mean(wall):.3f} s")
    print(f"depth reached: median {statistics.median(depths):.0f}, min {min(depths)}")
    boards = args.pace / statistics.mean(wall)
    print(f"boards one thread keeps up with at a ply every {args.pace:g} s: {boards:.0f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
