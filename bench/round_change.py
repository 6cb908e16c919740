"""What ``dgtcast round next`` costs the daemon: one section of N boards moves on.

Run ``.venv/bin/python bench/round_change.py [--boards 500] [--repeat 5]``.

A configuration of N e-boards (one section) is loaded into a
:class:`~daemon.round.core.RoundCore`; each board sees a placement and a clock reading, as a
live round leaves them. Then the round change's journal payload is applied (new players
on every board: fresh game records and trackers fed the last placement, results
forgotten, alerts closed), and every board's state is rendered for the broadcast, as the
service does before publishing. Printed: the payload's size, and the best of
``--repeat`` runs of each step, in milliseconds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import chess

from daemon.config.model import BoardConfig, load_config
from daemon.journal.store import EVENT_BOARD, ROUND
from daemon.round.change import RoundChange
from daemon.round.codec import input_of
from daemon.round.core import RoundCore
from daemon.round.inputs import ClockInput, PlacementInput
from drivers.observations import ClockObserved, ClockSide, PlacementObserved


def _core(folder: Path, boards: int) -> RoundCore:
    tables = "".join(
        f'[[boards]]\nnumber = {n}\nport = "/dev/dgt-{n}"\nwhite = "W{n}, A"\nblack = "B{n}, A"\n'
        for n in range(1, boards + 1)
    )
    path = folder / "bench.toml"
    path.write_text('[event]\nname = "Bench"\nround = 1\ntime_control = "5400+30"\n' + tables)
    core = RoundCore(load_config(path, env={}))
    clock = ClockObserved(
        left_seconds=5430,
        right_seconds=5430,
        left_flag=False,
        right_flag=False,
        running=None,
        lever=ClockSide.LEFT,
        connected=True,
        at=1.0,
    )
    for number in range(1, boards + 1):
        core.apply(PlacementInput(number, PlacementObserved(board=chess.BaseBoard(), at=1.0)))
        core.apply(ClockInput(number, clock))
    return core


def _change(boards: int, round_number: int) -> RoundChange:
    players = tuple(
        BoardConfig(number=n, white=f"X{n}, A", black=f"Y{n}, A") for n in range(1, boards + 1)
    )
    return RoundChange(section="", round=round_number, round_start=time.time(), boards=players)


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    apply_ms, render_ms = [], []
    size = 0
    with tempfile.TemporaryDirectory() as folder:
        for run in range(args.repeat):
            core = _core(Path(folder), args.boards)
            payload = _change(args.boards, 2 + run).payload()
            size = len(str(payload).encode())
            start = time.perf_counter()
            outcome = core.apply(input_of(EVENT_BOARD, ROUND, payload, time.time()))
            applied = time.perf_counter()
            for number in sorted(outcome.boards):
                core.board_state(number, time.time())
            rendered = time.perf_counter()
            apply_ms.append(1000 * (applied - start))
            render_ms.append(1000 * (rendered - applied))
    print(f"round change, {args.boards} boards: payload {size / 1024:.0f} KiB")
    print(f"  core applies it:      {min(apply_ms):7.1f} ms (best of {args.repeat})")
    print(f"  every board rendered: {min(render_ms):7.1f} ms (best of {args.repeat})")


if __name__ == "__main__":
    main()
