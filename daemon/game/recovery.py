"""Catching up from a board's own memory: what was played while nobody listened (pure).

When a board comes (back) online and its placement does not match the game (a cable
pull, a daemon restart, a daemon started mid-round), its log (:class:`BoardMemory`, read
from the EEPROM, docs/protocol.md §6) holds every change and lever press since. This
module finds where in that log the game as the tracker knows it stands, and turns the
rest into the observations live input would have given — placements after each change,
clock readings around each press — so that the very same reconstruction
(:class:`~daemon.game.tracker.GameTracker`) makes the moves, each with the ``[%clk]``
the board wrote at its lever press.

Where the game stands in the log (:func:`plan_recovery`), first that applies:

1. **The game's start.** For each placement of the log that is the game's start position
   (normal or rotated; in a Chess960 section the game's own Chess960 start, the one the
   board tags EE_FOURROWS, §6), latest first, a scratch tracker replays the log from
   there; the first point where its line equals the known line is the anchor. Moves are
   followed, not placements, so a repetition (1. Nf3 Nf6 2. Ng1 Ng8 …) cannot make it
   skip plies. A tracker with no game yet (daemon started mid-round) starts at the last
   start position (any of the 960 in a Chess960 section).
2. **The last placement sensed.** When the start is no longer in the log (the cyclic
   buffer overwrote it, or the game began from an accepted position): the one stretch of
   the log where the board stood as last sensed. Two such stretches (a repetition) are
   ambiguous: no anchor.

The log has no times. Every observation of a plan carries the time the log was read,
so no settle timer fires inside it: only lever presses (and, without a running clock, a
reply on top of a move) complete moves, never a pause of a hand.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import chess

from daemon.game.clock import other_side, running_for
from daemon.game.events import GameStarted, MoveMade, MovesWithdrawn
from daemon.game.log_replay import ClockModel, Fed, log_observations
from daemon.game.matching import placement_key
from daemon.game.starts import StartPosition, find_start
from daemon.game.state import TrackerState
from daemon.game.tracker import GameTracker
from drivers.memory import BoardMemory, LoggedChange, LoggedPress
from drivers.observations import ClockSide, PlacementObserved

__all__ = [
    "Anchor",
    "RecoveryPlan",
    "memory_needed",
    "plan_recovery",
    "press_plies",
    "presses_between",
    "replan_from_start",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Anchor:
    """Where the known game stands in the log: feed ``steps[index:]``.

    Attributes:
        index: the first step to feed.
        how: ``"start"`` (replayed from a start position) or ``"placement"``.
        clocks: from a start, the ``[%clk]`` the log gives each ply of the known game
            (None where it gives none).
        back: the known game's last plies the log does not hold (it played others
            there): withdraw them, then feed.
        white_side: from a start, White's clock side as the log tells it, where the
            tracker learnt the other one (a press taken for one that starts the clock
            completed White's first move, its field updates lost): every ply is withdrawn
            (``back``) and replayed from the start with the log's sides.
        start: from a start, the step where the game's start position stands in the log.
    """

    index: int
    how: str
    clocks: tuple[float | None, ...] = ()
    back: int = 0
    white_side: ClockSide | None = None
    start: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecoveryPlan:
    """The observations to feed the live tracker, in order, the log's step each comes
    from, and where they start."""

    anchor: Anchor
    observations: tuple[Fed, ...]
    steps: tuple[int, ...]


def memory_needed(tracker: GameTracker, placement: chess.BaseBoard) -> bool:
    """Whether a board coming online with ``placement`` needs its memory read.

    True when a game is under way and the board no longer shows its position, or when no
    game is known but the board shows one under way (both kings, not a start position).
    """
    key = placement_key(placement)
    if tracker.state is TrackerState.ENDED:
        return False
    if tracker.state is TrackerState.WAITING:
        kings = chess.popcount(placement.kings)
        start = _start_shown(tracker, placement)
        return start is None and kings == 2 and len(placement.piece_map()) > 2
    sensed = tracker.sensed
    return sensed is None or placement_key(sensed) != key


def plan_recovery(
    tracker: GameTracker,
    memory: BoardMemory,
    at: float,
    *,
    start_seconds: int | None = None,
    back: int = 0,
) -> RecoveryPlan | None:
    """The observations that bring ``tracker`` up to the end of ``memory``; None if lost.

    Args:
        tracker: the live tracker (only read).
        memory: the board's log.
        at: the time of every observation of the plan (when the log was read).
        start_seconds: each side's time when the clock was set (base + increment), for
            readings before a side's first logged press; None = unknown.
        back: at most this many of the known game's last plies may be ones the log
            does not hold (a board out of sync: a lost field update can make a line of
            its own of a phantom piece); the anchor is then where the log agrees.
    """
    anchor = _start_anchor(tracker, memory, start_seconds, back) or _placement_anchor(
        tracker, memory
    )
    if anchor is None:
        return None
    return _plan(tracker, memory, anchor, at, start_seconds)


def replan_from_start(
    tracker: GameTracker,
    memory: BoardMemory,
    plan: RecoveryPlan,
    at: float,
    *,
    start_seconds: int | None = None,
) -> RecoveryPlan | None:
    """``plan`` taken up at the game's start instead: every ply withdrawn and replayed
    from the log (None: ``plan`` is not anchored at a start)."""
    first = plan.anchor.start
    if first is None:
        return None
    reached = _where_line_reached(tracker, memory, first, [], start_seconds)
    if reached is None:
        return None
    back = len(tracker.board.move_stack)
    white = plan.anchor.white_side
    anchor = Anchor(index=reached[0], how="start", back=back, white_side=white, start=first)
    return _plan(tracker, memory, anchor, at, start_seconds)


def presses_between(memory: BoardMemory, start: int, end: int) -> list[tuple[LoggedPress, bool]]:
    """The lever presses the log holds in ``steps[start:end]``, each with whether a piece
    had moved since ``start`` (False: a press on the start position, one that starts the
    clock)."""
    presses: list[tuple[LoggedPress, bool]] = []
    moved = False
    for step in memory.steps[start:end]:
        if isinstance(step, LoggedPress):
            presses.append((step, moved))
        elif isinstance(step, LoggedChange):
            moved = True
    return presses


def _plan(
    tracker: GameTracker,
    memory: BoardMemory,
    anchor: Anchor,
    at: float,
    start_seconds: int | None,
) -> RecoveryPlan:
    white = anchor.white_side or tracker.white_side
    turn = tracker.board.turn ^ (anchor.back % 2 == 1)
    mover = None if white is None else white if turn == chess.WHITE else other_side(white)
    model = ClockModel.of(running_for(tracker.last_clock, mover), start_seconds)
    fed = tuple(log_observations(memory, anchor.index, model, at))
    observations = tuple(observation for _, observation in fed)
    return RecoveryPlan(anchor=anchor, observations=observations, steps=tuple(i for i, _ in fed))


def press_plies(
    tracker: GameTracker, memory: BoardMemory, start: int, start_seconds: int | None
) -> dict[int, int]:
    """The lever presses of the log from step ``start`` (the game's start) that completed
    moves, each by its step: the ply the game had reached once it was taken."""
    scratch = GameTracker(tracker.settings)
    completed: dict[int, int] = {}
    ply = 0
    for index in _replayed(scratch, memory, start, start_seconds):
        if scratch.ply > ply and isinstance(memory.steps[index], LoggedPress):
            completed[index] = scratch.ply
        ply = scratch.ply
    return completed


# -- anchors ------------------------------------------------------------------------------


def _start_anchor(
    tracker: GameTracker, memory: BoardMemory, start_seconds: int | None, back: int
) -> Anchor | None:
    shown = [(i, _start_shown(tracker, board)) for i, board in memory.placements()]
    starts = [(i, start) for i, start in shown if start is not None]
    if not starts:
        return None
    if tracker.state is TrackerState.WAITING:
        return Anchor(index=starts[-1][0], how="start")
    board = tracker.board
    root = placement_key(board.root())
    known = [move.uci() for move in board.move_stack]
    for withdrawn in range(min(back, len(known)) + 1):
        line = known[: len(known) - withdrawn]
        for first, start in reversed(starts):
            if start.key != root:
                continue  # another game's start (or the game began from an accepted one)
            reached = _where_line_reached(tracker, memory, first, line, start_seconds)
            if reached is not None:
                index, clocks = reached
                anchor = Anchor(
                    index=index, how="start", clocks=clocks, back=withdrawn, start=first
                )
                return _with_sides(tracker, memory, first, start_seconds, anchor)
    if back:
        return _transposed_anchor(tracker, memory, starts, start_seconds)
    return _relined_anchor(tracker, memory, starts, start_seconds)


def _transposed_anchor(
    tracker: GameTracker,
    memory: BoardMemory,
    starts: Sequence[tuple[int, StartPosition]],
    start_seconds: int | None,
) -> Anchor | None:
    """Where the log plays other moves than the known game's last ones, more than the
    plies a heal may withdraw, to reach the very position the game stands in (lost field
    updates read as a line of phantom moves that ends where the real one does: Qd1 a3
    Qe1 for a3 Nh4 Nf3): the anchor where the two lines part, the known plies since then
    withdrawn. A heal only (the log's line and the game's end in the same position)."""
    board = tracker.board
    root = placement_key(board.root())
    known = [move.uci() for move in board.move_stack]
    target = board.epd()
    for first, start in reversed(starts):
        if start.key != root:
            continue
        line = _line_reaching(tracker, memory, first, len(known), target, start_seconds)
        anchor = None if line is None else _parted(tracker, memory, first, line, start_seconds)
        if anchor is not None:
            return anchor
    return None


def _relined_anchor(
    tracker: GameTracker,
    memory: BoardMemory,
    starts: Sequence[tuple[int, StartPosition]],
    start_seconds: int | None,
) -> Anchor | None:
    """Where the log, replayed from the game's start, stands as the board was last sensed
    (:func:`_placement_anchor`) with a line other than the known game's: lost field
    updates made the tracker take the same placement for other moves (d4 Nb6, Nb3 on its
    way, for Nb3 Nb6, d4 on its way). The log, which holds every change, tells the line:
    the anchor where the two part, the known plies since then withdrawn."""
    placement = _placement_anchor(tracker, memory)
    if placement is None:
        return None
    known = [move.uci() for move in tracker.board.move_stack]
    root = placement_key(tracker.board.root())
    for first, start in reversed(starts):
        if start.key != root or first >= placement.index:
            continue
        scratch = GameTracker(tracker.settings)
        line: list[tuple[str, float | None]] = []
        for index in _replayed(scratch, memory, first, start_seconds):
            _follow(line, scratch)
            if index + 1 >= placement.index:
                break
        played = [uci for uci, _ in line]
        if played[: len(known)] == known:
            continue  # the known game, not another line: no need to withdraw
        anchor = _parted(tracker, memory, first, played, start_seconds)
        if anchor is not None:
            return anchor
    return None


def _parted(
    tracker: GameTracker,
    memory: BoardMemory,
    first: int,
    line: Sequence[str],
    start_seconds: int | None,
) -> Anchor | None:
    """The anchor where the log's ``line`` from step ``first`` and the known game part,
    the known plies since then withdrawn (with the log's clock sides)."""
    known = [move.uci() for move in tracker.board.move_stack]
    shared = next(
        (ply for ply, (a, b) in enumerate(zip(line, known, strict=False)) if a != b),
        min(len(line), len(known)),
    )
    reached = _where_line_reached(tracker, memory, first, known[:shared], start_seconds)
    if reached is None:
        return None
    index, clocks = reached
    anchor = Anchor(index=index, how="start", clocks=clocks, back=len(known) - shared, start=first)
    return _with_sides(tracker, memory, first, start_seconds, anchor)


def _line_reaching(
    tracker: GameTracker,
    memory: BoardMemory,
    start: int,
    plies: int,
    target: str,
    start_seconds: int | None,
) -> list[str] | None:
    """The first line of ``plies`` plies a replay from ``start`` plays that ends in the
    position ``target`` (EPD), if any."""
    scratch = GameTracker(tracker.settings)
    line: list[tuple[str, float | None]] = []
    for _ in _replayed(scratch, memory, start, start_seconds):
        _follow(line, scratch)
        if len(line) == plies and scratch.state is not TrackerState.WAITING:
            board = tracker.board.root()
            for uci, _ in line:
                board.push_uci(uci)
            if board.epd() == target:
                return [uci for uci, _ in line]
    return None


def _with_sides(
    tracker: GameTracker,
    memory: BoardMemory,
    first: int,
    start_seconds: int | None,
    anchor: Anchor,
) -> Anchor:
    """``anchor``, or the game's start with the log's clock sides where the tracker's
    differ (:attr:`Anchor.white_side`; with no move recorded yet, ``anchor`` with them:
    the sides learnt from presses made while the start position stood in the game's eyes,
    White's first move unseen)."""
    if tracker.settings.white_side is not None or tracker.white_side is None:
        return anchor
    scratch = GameTracker(tracker.settings)
    for _ in _replayed(scratch, memory, first, start_seconds):
        pass  # the whole log: the sides it ends with
    white = scratch.white_side
    if not scratch.sides_sure or white is None or white is tracker.white_side:
        return anchor
    if not tracker.board.move_stack:
        return dataclasses.replace(anchor, white_side=white)
    reached = _where_line_reached(tracker, memory, first, [], start_seconds)
    if reached is None:
        return anchor
    back = len(tracker.board.move_stack)
    return Anchor(index=reached[0], how="start", back=back, white_side=white, start=first)


def _start_shown(tracker: GameTracker, placement: chess.BaseBoard) -> StartPosition | None:
    """The start position ``placement`` shows (any Chess960 one in a Chess960 section)."""
    chess960 = tracker.settings.chess960
    return find_start(placement, placement_key(placement), chess960=chess960)


def _where_line_reached(
    tracker: GameTracker,
    memory: BoardMemory,
    start: int,
    known: list[str],
    start_seconds: int | None,
) -> tuple[int, tuple[float | None, ...]] | None:
    """The first step after which a replay from ``start`` has played exactly ``known``,
    and the ``[%clk]`` the replay gave each of its plies."""
    scratch = GameTracker(tracker.settings)
    line: list[tuple[str, float | None]] = []
    for index in _replayed(scratch, memory, start, start_seconds):
        _follow(line, scratch)
        if [uci for uci, _ in line] == known and scratch.state is not TrackerState.WAITING:
            return index + 1, tuple(clock for _, clock in line)
    return None


def _replayed(
    scratch: GameTracker, memory: BoardMemory, start: int, start_seconds: int | None
) -> Iterator[int]:
    """Feed the log from ``start`` to ``scratch`` (no reading before the log but
    ``start_seconds``), yielding each step's index once the tracker has taken it."""
    for index, fed in log_observations(memory, start, ClockModel.of(None, start_seconds), 0.0):
        if isinstance(fed, PlacementObserved):
            scratch.receive_placement(fed)
        else:
            scratch.receive_clock(fed)
        yield index


def _follow(line: list[tuple[str, float | None]], scratch: GameTracker) -> None:
    """Apply the scratch tracker's events to ``line`` (each ply's move and clock)."""
    for event in scratch.events_received():
        if isinstance(event, GameStarted):
            line.clear()
        elif isinstance(event, MoveMade):
            del line[event.ply - 1 :]
            line.append((event.uci, event.clock))
        elif isinstance(event, MovesWithdrawn):
            del line[event.from_ply - 1 :]


def _placement_anchor(tracker: GameTracker, memory: BoardMemory) -> Anchor | None:
    sensed = tracker.sensed
    if sensed is None or tracker.state is TrackerState.WAITING:
        return None
    target = placement_key(sensed)
    stretches: list[int] = []
    inside = False
    for index, board in memory.placements():
        here = placement_key(board) == target
        if here and not inside:
            stretches.append(index)
        inside = here
    if len(stretches) != 1:
        return None  # never stood so, or stood so twice (a repetition): ambiguous
    return Anchor(index=stretches[0] + 1, how="placement")
