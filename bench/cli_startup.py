"""How fast the command line starts: ``dgtcast --help`` beside ``python -c "import chess"``.

Run ``.venv/bin/python bench/cli_startup.py [--runs N]``. Each command runs N times
(default 15), the commands interleaved so that a machine getting busier or quieter meanwhile
weighs on all of them alike; the median and the fastest wall time of each are printed, and
how many times ``import chess`` each takes (issue 22 asks at most 3 for ``--help``). The
``--help`` of a command imports that command's module and what it needs to define its
arguments; ``tests/daemon/commands/test_cli.py`` checks which modules those are.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["COMMANDS", "main", "measure"]

_BIN = Path(sys.executable).parent
#: label -> argv; the first is the yardstick.
COMMANDS: dict[str, list[str]] = {
    'python -c "import chess"': [sys.executable, "-c", "import chess"],
    "dgtcast --help": [str(_BIN / "dgtcast"), "--help"],
    "dgtcast round --help": [str(_BIN / "dgtcast"), "round", "--help"],
    "dgtcast results --help": [str(_BIN / "dgtcast"), "results", "--help"],
    "dgtcast run --help": [str(_BIN / "dgtcast"), "run", "--help"],
}


def _once(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def measure(runs: int) -> dict[str, list[float]]:
    """Wall seconds of every run of every command, the commands interleaved."""
    times: dict[str, list[float]] = {label: [] for label in COMMANDS}
    for label, argv in COMMANDS.items():  # warm the file cache first
        _once(argv)
        del label
    for _ in range(runs):
        for label, argv in COMMANDS.items():
            times[label].append(_once(argv))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each command")
    args = parser.parse_args()
    times = measure(args.runs)
    yardstick = statistics.median(next(iter(times.values())))
    print(f"{'command':28} {'median':>9} {'fastest':>9} {'× import chess':>15}")
    for label, seconds in times.items():
        middle = statistics.median(seconds)
        print(
            f"{label:28} {middle * 1000:7.0f} ms {min(seconds) * 1000:6.0f} ms"
            f" {middle / yardstick:14.1f}×"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
