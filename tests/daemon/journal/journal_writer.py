"""A journal writer for the crash test: appends forever, printing each committed ``n``.

Run as ``python journal_writer.py DB BATCH``. Each record's payload holds ``n`` (counting
on from the last record already in the journal), a filler whose length varies, and a
digest of both, so a torn or mixed-up record is detected on reading.
"""

from __future__ import annotations

import hashlib
import sys

from daemon.journal.records import Entry
from daemon.journal.store import Journal

__all__ = ["digest", "entry", "main"]


def digest(n: int, fill: str) -> str:
    """What the record numbered ``n`` must carry as ``digest``."""
    return hashlib.sha256(f"{n}:{fill}".encode()).hexdigest()


def entry(n: int) -> Entry:
    """The record numbered ``n``."""
    fill = "é" * (n * 37 % 300)
    payload = {"n": n, "fill": fill, "digest": digest(n, fill)}
    return Entry(board=n % 4 + 1, kind="move", at=1_750_000_000.0 + n / 8, payload=payload)


def main(argv: list[str]) -> int:
    """Append batches of ``BATCH`` records until killed."""
    path, batch = argv[1], int(argv[2])
    with Journal(path) as journal:
        last = list(journal.records(after=journal.last_seq - 1))
        n = last[0].payload["n"] if last else 0
        while True:
            entries = [entry(n + i) for i in range(1, batch + 1)]
            if batch == 1:
                journal.append(entries[0].board, entries[0].kind, entries[0].payload, entries[0].at)
            else:
                journal.append_many(entries)
            n += batch
            print(n, flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
