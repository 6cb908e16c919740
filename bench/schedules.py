"""How fast the fault schedules of tests/virtual/test_fault_schedules.py run, on one core.

Run ``DGTCAST_SHARED=../shared .venv/bin/python bench/schedules.py [--per-test N]
[--runs R] [--profile FILE]``. N schedules (default 50) are drawn from each property
test's strategy (hypothesis, derandomized: the same ones every run, though not the test's
own examples), each played and checked as the test does (``run_schedule``). Each is run R
times (default 1) and its fastest run kept: on a shared machine the fastest is the one
least disturbed (but a second run finds the caches of the first warm). Prints the CPU
time per schedule and the schedules a minute of one core, and the schedules whose checks
failed (bugs: the property tests would fail on them); ``--profile`` writes a cProfile of
the runs (``python -m pstats FILE``).
"""

from __future__ import annotations

import argparse
import cProfile
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT
from hypothesis import HealthCheck, Phase, given, settings

sys.path.insert(0, str(ROOT))
from tests.virtual import schedules
from tests.virtual.found import Schedule

__all__ = ["drawn", "main"]


def drawn(per_test: int) -> list[Schedule]:
    """``per_test`` schedules of each property test's strategy."""
    found: list[Schedule] = []
    for mode23, chess960 in ((False, False), (True, False), (True, True)):

        @settings(
            max_examples=per_test,
            deadline=None,
            derandomize=True,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(schedule=schedules.schedules(mode23=mode23, chess960=chess960))
        def collect(schedule: Schedule) -> None:
            found.append(schedule)

        collect()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-test", type=int, default=50)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--profile", type=Path)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-schedules-"))
    configs = schedules.schedule_configs(folder)
    plan = drawn(args.per_test)
    profile = cProfile.Profile() if args.profile else None
    total = 0.0
    failed: set[Schedule] = set()
    for schedule in plan:
        fastest = float("inf")
        for _ in range(args.runs):
            if profile:
                profile.enable()
            started = time.process_time()
            try:
                schedules.run_schedule(schedule, configs)
            except AssertionError:  # a bug found: timed all the same, named below
                failed.add(schedule)
            fastest = min(fastest, time.process_time() - started)
            if profile:
                profile.disable()
        total += fastest
    if profile and args.profile:
        profile.dump_stats(args.profile)
    each = total / len(plan)
    print(
        f"{len(plan)} schedules, fastest of {args.runs} run(s) each: {each * 1000:.1f} ms of"
        f" one core a schedule, {60 / each:,.0f} a minute"
    )
    for schedule in failed:
        print(f"failed (the test would fail): {schedule}")


if __name__ == "__main__":
    main()
