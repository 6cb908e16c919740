"""Boards one daemon process sustains at blitz pace before the latency p99 passes 100 ms.

Run ``.venv/bin/python bench/capacity.py [--steps 100 200 300 500 750 1000] [--seconds 30]``.

Each step is a fresh run of ``bench/latency.py``'s set-up (the emulated boards in one
process, the daemon alone in another, a websocket spectator in a third) with that many
boards playing at blitz pace, clocks ticking. The ramp stops at the first step whose p99
from the last serial byte of a move to the spectator passes the limit (a move lost
counts as infinitely late), or after the last step: the cap. Every step is bounded: its
play time, plus at most a minute or two to connect the boards and collect the figures.

The daemon's CPU use per board is printed too: a figure that other load on the machine
disturbs less than latency does.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass

from latency import LatencyRun, Load, measure

__all__ = ["Ramp", "main", "ramp"]

#: The issue's steps, and its limit.
STEPS = (100, 200, 300, 500, 750, 1000)
LIMIT_MS = 100.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Ramp:
    """The steps run, in order, and the limit they were held to."""

    runs: list[LatencyRun]
    limit_ms: float

    def passed(self, run: LatencyRun) -> bool:
        """Whether a step kept its p99 within the limit."""
        return run.quantile_ms(0.99) <= self.limit_ms

    @property
    def sustained(self) -> int | None:
        """The most boards of a step that passed (None: even the first step failed)."""
        passing = [run.boards for run in self.runs if self.passed(run)]
        return max(passing, default=None)

    @property
    def capped(self) -> bool:
        """Whether every step passed (the ramp ended at its cap, not at the limit)."""
        return all(self.passed(run) for run in self.runs)

    def run_with(self, boards: int) -> LatencyRun | None:
        """The step with this many boards, if it ran."""
        return next((run for run in self.runs if run.boards == boards), None)

    def summary(self) -> str:
        """One line per step, then the verdict."""
        lines = [
            f"{run.summary()}  [{'ok' if self.passed(run) else 'over the limit'}]"
            for run in self.runs
        ]
        if self.sustained is None:
            verdict = f"not even {self.runs[0].boards} boards within p99 {self.limit_ms:g} ms"
        elif self.capped:
            verdict = f"{self.sustained} boards (the cap) within p99 {self.limit_ms:g} ms"
        else:
            verdict = f"{self.sustained} boards within p99 {self.limit_ms:g} ms"
        return "\n".join([*lines, f"sustained: {verdict}"])


async def ramp(
    steps: tuple[int, ...] = STEPS, seconds: float = 30.0, limit_ms: float = LIMIT_MS
) -> Ramp:
    """Run the steps in order until one passes the limit."""
    runs: list[LatencyRun] = []
    for boards in steps:
        run = await measure(Load(boards=boards, seconds=seconds))
        runs.append(run)
        print(run.summary(), file=sys.stderr, flush=True)
        if run.quantile_ms(0.99) > limit_ms:
            break
    return Ramp(runs=runs, limit_ms=limit_ms)


def main(argv: list[str] | None = None) -> int:
    """Ramp up and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=list(STEPS))
    parser.add_argument("--seconds", type=float, default=30.0, help="play time per step")
    parser.add_argument("--limit-ms", type=float, default=LIMIT_MS, help="p99 limit")
    args = parser.parse_args(argv)
    result = asyncio.run(ramp(tuple(args.steps), args.seconds, args.limit_ms))
    print(result.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
