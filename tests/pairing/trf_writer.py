"""A TRF writer for the crash test: replaces a file over and over until killed.

Run as ``python trf_writer.py PATH FIRST SECOND``. It writes the contents of FIRST and
SECOND in turn to PATH with :func:`~base.atomic_file.write_atomically` and prints
the number of writes done after each, so the test can kill it when it chooses.
"""

from __future__ import annotations

import sys
from pathlib import Path

from base.atomic_file import write_atomically

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Write the versions in turn until killed."""
    path = argv[1]
    contents = [Path(name).read_bytes() for name in argv[2:4]]
    count = 0
    while True:
        write_atomically(path, contents[count % 2])
        count += 1
        print(count, flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
