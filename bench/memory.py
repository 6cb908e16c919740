"""Memory per board: the daemon's RSS with N boards, minus its RSS with none, divided by N.

Run ``.venv/bin/python bench/memory.py [--boards 500] [--seconds 30]``.

"None" is the same daemon on a round with a single board that has no e-board (a round
needs one board): started, serving, nothing connected. "With N boards" is the daemon of
``bench/latency.py``'s set-up with N emulated boards connected (their links, sessions,
trackers, records and hub states), measured once every board is online and again after
they played at blitz pace for the given time. RSS is ``VmRSS`` of /proc/PID/status: it
counts what the process touched, shared libraries included, so the difference is what
the boards add. ``bench/recovery.py`` gives the other end: RSS after whole games.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from common import Child, process_rss_kib, write_round_config
from latency import LatencyRun, Load, measure

__all__ = ["Memory", "baseline_kib", "main", "per_board"]


async def baseline_kib(settle: float = 1.0) -> int:
    """RSS of a daemon serving a round with no e-board, KiB."""
    with tempfile.TemporaryDirectory(prefix="dgtcast-memory-") as folder:
        work = Path(folder)
        config = write_round_config(work, [None])
        args = ["--role", "daemon", "--config", str(config), "--profile", str(work / "p")]
        daemon = await Child.start("latency.py", args, work / "daemon.log")
        try:
            await daemon.receive(60)
            await asyncio.sleep(settle)
            return process_rss_kib(daemon.pid)
        finally:
            await daemon.finish()


@dataclass(frozen=True, slots=True, kw_only=True)
class Memory:
    """KiB per board, connected and after play, over a baseline."""

    boards: int
    baseline_kib: int
    connected_kib: float
    played_kib: float
    seconds: float

    def summary(self) -> str:
        """One line of text."""
        return (
            f"{self.boards} boards over a {self.baseline_kib / 1024:.0f} MiB daemon: "
            f"{self.connected_kib:.0f} KiB per board connected, {self.played_kib:.0f} KiB "
            f"after {self.seconds:.0f} s of play"
        )


def per_board(run: LatencyRun, baseline: int) -> Memory:
    """The memory figures of a latency run over a baseline."""
    return Memory(
        boards=run.boards,
        baseline_kib=baseline,
        connected_kib=(run.rss_idle_kib - baseline) / run.boards,
        played_kib=(run.rss_end_kib - baseline) / run.boards,
        seconds=run.seconds,
    )


async def _main(boards: int, seconds: float) -> Memory:
    baseline = await baseline_kib()
    run = await measure(Load(boards=boards, seconds=seconds))
    return per_board(run, baseline)


def main(argv: list[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--boards", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=30.0, help="play time")
    args = parser.parse_args(argv)
    print(asyncio.run(_main(args.boards, args.seconds)).summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
