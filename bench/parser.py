"""DGT parser throughput on one core: bytes/s and messages/s.

Run ``.venv/bin/python bench/parser.py [--copies N] [--rounds R]``. The three real
recordings (``../shared/data/dgt-recordings``, or ``$DGTCAST_SHARED``) are concatenated N
times and fed to one :class:`DgtProtocol` in one chunk, in 64-byte chunks (what a serial
read typically returns under load) and byte by byte (the worst case); a full-size EE_MOVES
dump (7939 bytes, docs/protocol.md §2.2) is fed the same ways. Each figure is the best of R
rounds, in CPU time of this process so that other load on the machine does not skew it.
A board at 9600 baud delivers at most 960 bytes/s: the last column says how many boards
at full line rate one core could parse.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from drivers.dgt.boardside import encode_event
from drivers.dgt.events import EEMoves
from drivers.dgt.protocol import DgtProtocol

__all__ = ["main", "measure", "recordings_stream"]

LINE_RATE = 960  # bytes/s of 9600 baud 8N1 (§1)
ROOT = Path(__file__).resolve().parent.parent


def recordings_stream() -> tuple[bytes, int]:
    """The three recordings concatenated, and how many messages they hold."""
    shared = Path(os.environ.get("DGTCAST_SHARED", ROOT.parent / "shared"))
    frames = [
        base64.b64decode(line)
        for path in sorted((shared / "data" / "dgt-recordings").glob("*.inbytes"))
        for line in path.read_text().split()
    ]
    return b"".join(frames), len(frames)


def ee_moves_frame() -> bytes:
    """A full-size EE_MOVES frame: field changes and clock records, EOF last (§6)."""
    record = bytes.fromhex("4034 5124 620509 733130")
    body = record * (0x1F00 // len(record))
    raw = body + b"\x7f" * (0x1F00 - len(body) - 1) + b"\x6b"
    return encode_event(EEMoves.from_raw(raw))


def _chunks(data: bytes, size: int) -> Iterator[bytes]:
    if size <= 0:
        yield data
        return
    for start in range(0, len(data), size):
        yield data[start : start + size]


def measure(data: bytes, chunk: int, rounds: int) -> tuple[float, int]:
    """Best wall time over ``rounds`` to parse ``data`` in ``chunk``-sized pieces (0 = one).

    Returns:
        (seconds, messages decoded); raises if the parser reported a violation.
    """
    pieces = list(_chunks(data, chunk))
    best = float("inf")
    messages = 0
    for _ in range(rounds):
        protocol = DgtProtocol()
        start = time.process_time()
        for piece in pieces:
            protocol.receive_data(piece)
            protocol.events_received()
        best = min(best, time.process_time() - start)
        if protocol.violations or protocol.bytes_pending:
            raise RuntimeError("the benchmark stream must parse cleanly")
        messages = protocol.messages_received
    return best, messages


def _row(label: str, size: int, seconds: float, messages: int) -> str:
    rate = size / seconds
    return (
        f"  {label:<28} {rate:>14,.0f} {messages / seconds:>14,.0f} "
        f"{seconds / messages * 1e6:>10.2f} {rate / LINE_RATE:>10,.0f}"
    )


def main(argv: list[str] | None = None) -> int:
    """Print the figures as a small table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=20, help="recording repetitions")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many runs")
    args = parser.parse_args(argv)
    if args.copies < 1 or args.rounds < 1:
        parser.error("--copies and --rounds count from 1")
    recording, recorded = recordings_stream()
    stream, count = recording * args.copies, recorded * args.copies
    frame = ee_moves_frame()
    # Byte by byte is slow: a quarter as much, in whole recordings and frames.
    scenarios = [
        ("recordings, one chunk", stream, 0),
        ("recordings, 64-byte chunks", stream, 64),
        ("recordings, byte by byte", recording * max(1, args.copies // 4), 1),
        ("EE_MOVES, one chunk", frame * 20, 0),
        ("EE_MOVES, 64-byte chunks", frame * 20, 64),
        ("EE_MOVES, byte by byte", frame * 5, 1),
    ]
    print(f"DGT parser, one core: {count:,} recorded messages ({len(stream):,} bytes)")
    print(f"  {'scenario':<28} {'bytes/s':>14} {'messages/s':>14} {'µs/msg':>10} {'boards':>10}")
    for label, data, chunk in scenarios:
        seconds, messages = measure(data, chunk, args.rounds)
        print(_row(label, len(data), seconds, messages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
