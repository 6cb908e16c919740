"""The truth of a rehearsal and its comparison with the daemon's PGN (pure, no I/O).

The truth is the game's moves and, for each press, what the clock showed: the emulator's
record (``dgtcast emulate --record``, drivers/emulator/record.py) gives each press's
mover time and each SetNRun the clock took. On a mode 23 clock dgtcast adds the
increment itself with a SetNRun after each press, so the ``[%clk]`` a move must get is
the mover's time at the press, plus what that press earned, plus what the mover's
earlier presses earned that the clock was never given (a daemon down for some presses
pays them all with its next SetNRun): an earlier press is paid when the clock added the
increment itself or took a SetNRun after it and before the press in question. This is
``should_have_shown`` of tests/virtual/world.py, on the real processes' record.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from dataclasses import dataclass

import chess
import chess.pgn

from daemon.game.durations import TimeControl

__all__ = [
    "ClockRecord",
    "Comparison",
    "Press",
    "compare",
    "expected_clocks",
    "read_record",
]


@dataclass(frozen=True, slots=True)
class Press:
    """One press of the record: a ply, the mover's side and time before and after it."""

    ply: int
    side: str
    at: float
    before: int
    shown: int


@dataclass(frozen=True, slots=True)
class ClockRecord:
    """The record: presses in order, the times the clock took a SetNRun, the start."""

    presses: tuple[Press, ...]
    sets: tuple[float, ...]
    start: float | None


def read_record(lines: Iterable[str]) -> ClockRecord:
    """Parse the emulator's JSON lines (blank lines skipped)."""
    presses: list[Press] = []
    sets: list[float] = []
    start = None
    for line in lines:
        if not line.strip():
            continue
        data = json.loads(line)
        if data["event"] == "press":
            presses.append(
                Press(data["ply"], data["side"], data["at"], data["before"], data["shown"])
            )
        elif data["event"] == "set":
            sets.append(data["at"])
        elif data["event"] == "start" and start is None:
            start = data["at"]
    return ClockRecord(presses=tuple(presses), sets=tuple(sets), start=start)


def expected_clocks(record: ClockRecord, control: TimeControl) -> dict[int, int]:
    """The ``[%clk]`` each ply must carry, whole seconds, by ply."""
    expected: dict[int, int] = {}
    for index, press in enumerate(record.presses):
        own = [p for p in record.presses[:index] if p.side == press.side]
        unpaid = [
            number
            for number, earlier in enumerate(own, start=1)
            if earlier.shown <= earlier.before  # the clock did not add it itself
            and not any(earlier.at < taken <= press.at for taken in record.sets)
        ]
        earned = control.added_after(len(own) + 1)
        if press.shown > press.before:  # the clock added this press's increment itself
            earned = press.shown - press.before
        owed = sum(control.added_after(number) for number in unpaid)
        expected[press.ply] = press.before + earned + owed
    return expected


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """The daemon's PGN against the truth.

    Attributes:
        plies: plies of the game; ``pgn_plies`` those the PGN holds.
        moves_exact: the PGN's moves are the game's, all of them.
        first_wrong_ply: the first ply whose move differs or is missing (None: none).
        clocks: plies with a ``[%clk]`` and an expected time; ``missing_clocks`` plies
            without one of the two.
        worst_error: the largest ``|[%clk] - truth|``, seconds; ``worst_ply`` its ply.
        errors: (ply, [%clk], truth) of every ply off by more than ``tolerance``.
        result: the PGN's Result tag; ``game_result`` the game's.
    """

    plies: int
    pgn_plies: int
    moves_exact: bool
    first_wrong_ply: int | None
    clocks: int
    missing_clocks: tuple[int, ...]
    worst_error: float
    worst_ply: int | None
    errors: tuple[tuple[int, float, int], ...]
    result: str
    game_result: str

    def exact(self, tolerance: float = 1.0) -> bool:
        """Every move, every clock within ``tolerance``, and the game's result."""
        return (
            self.moves_exact
            and not self.missing_clocks
            and self.worst_error <= tolerance
            and self.result == self.game_result
        )


def compare(
    game: chess.pgn.Game, pgn: str, expected: dict[int, int], *, tolerance: float = 1.0
) -> Comparison:
    """The daemon's PGN text against the game and the expected clocks."""
    truth = list(game.mainline_moves())
    read = chess.pgn.read_game(io.StringIO(pgn))
    got: list[chess.Move] = []
    clocks: dict[int, float] = {}
    if read is not None:
        for ply, node in enumerate(read.mainline(), start=1):
            got.append(node.move)
            clock = node.clock()
            if clock is not None:
                clocks[ply] = clock
    wrong = next(
        (ply for ply, (a, b) in enumerate(zip(truth, got, strict=False), 1) if a != b), None
    )
    if wrong is None and len(got) != len(truth):
        wrong = min(len(got), len(truth)) + 1
    plies = range(1, len(truth) + 1)
    missing = tuple(p for p in plies if p not in clocks or p not in expected)
    diffs = {p: abs(clocks[p] - expected[p]) for p in plies if p not in missing}
    worst_ply = max(diffs, key=lambda p: diffs[p]) if diffs else None
    errors = tuple((p, clocks[p], expected[p]) for p in sorted(diffs) if diffs[p] > tolerance)
    return Comparison(
        plies=len(truth),
        pgn_plies=len(got),
        moves_exact=wrong is None,
        first_wrong_ply=wrong,
        clocks=len(diffs),
        missing_clocks=missing,
        worst_error=diffs[worst_ply] if worst_ply is not None else float("nan"),
        worst_ply=worst_ply,
        errors=errors,
        result="?" if read is None else read.headers.get("Result", "?"),
        game_result=game.headers.get("Result", "*"),
    )
