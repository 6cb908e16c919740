"""Journal throughput: appends per second, one per transaction and batched.

Run ``.venv/bin/python bench/journal.py [--seconds S] [--dir DIR]``. Each scenario writes
records shaped like the daemon's (a clock reading payload) into a fresh journal in DIR
(default: a temporary folder, which may be on tmpfs; pass a folder on the venue
machine's disk for real figures) for about S seconds and prints records/s.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

from daemon.journal.records import Entry
from daemon.journal.store import Journal

__all__ = ["main", "measure"]

_PAYLOAD = {"left": 5412, "right": 5398, "running": "left", "flags": [False, False]}


def measure(
    folder: Path, synchronous: Literal["normal", "full"], batch: int, seconds: float
) -> float:
    """Records per second appended in batches of ``batch`` for about ``seconds``."""
    path = folder / f"bench-{synchronous}-{batch}.db"
    written = 0
    with Journal(path, synchronous=synchronous) as journal:
        start = time.perf_counter()
        elapsed = 0.0
        while elapsed < seconds:
            if batch == 1:
                journal.append(written % 8 + 1, "clock", _PAYLOAD, time.time())
            else:
                entries = [
                    Entry(
                        board=(written + i) % 8 + 1, kind="clock", at=time.time(), payload=_PAYLOAD
                    )
                    for i in range(batch)
                ]
                journal.append_many(entries)
            written += batch
            elapsed = time.perf_counter() - start
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return written / elapsed


def main(argv: list[str] | None = None) -> int:
    """Print the figures, one scenario per line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per scenario")
    parser.add_argument("--dir", type=Path, default=None, help="folder for the journal files")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        print(f"journal throughput in {folder} ({args.seconds:g} s per scenario)")
        for synchronous in ("normal", "full"):
            for batch in (1, 10, 100):
                rate = measure(Path(folder), synchronous, batch, args.seconds)
                print(f"  synchronous={synchronous:<6}  batch={batch:<3}  {rate:>10,.0f} records/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
