"""bench/run's plans: issue 24's prints what it will run, and a plan it lacks is refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "bench/run", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_issue24_plan_names_every_figure_it_measures() -> None:
    done = _run_bench("--plan", "issue24", "--dry-run")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "plan issue24:"
    assert lines[1].startswith("500 boards: 60 s, a snapshot every 20 s")
    assert lines[2].startswith("clock storm, 60 boards at 60 reports/s")
    assert "100, 500, 1000, 1500, 2000" in lines[3]
    assert "10,000 (10,000 with fixed ticks too)" in lines[4]
    assert len(lines) == 5  # issue 24's figures only


def test_the_quick_flag_is_the_quick_plan() -> None:
    done = _run_bench("--quick", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "plan quick:"
    assert "restart at 500 boards" in done.stdout


def test_a_plan_it_lacks_is_refused() -> None:
    done = _run_bench("--plan", "nonsense")
    assert done.returncode == 2
    assert "invalid choice: 'nonsense'" in done.stderr
