"""bench/parser.py prints its table for any number of copies of the recordings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _parser_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "bench/parser.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("copies", [1, 3, 5])
def test_any_number_of_copies_parses_cleanly(copies: int) -> None:
    done = _parser_bench("--copies", str(copies), "--rounds", "1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 + 6  # title, header, six scenarios
    assert all(line.split()[-1].replace(",", "").isdigit() for line in lines[2:])


def test_nonsense_counts_are_refused() -> None:
    done = _parser_bench("--copies", "0")
    assert done.returncode == 2
    assert "--copies and --rounds count from 1" in done.stderr
