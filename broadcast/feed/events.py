"""Feed events: what a feed says about a board, their JSON, and the pure diff that derives them.

The hub (:mod:`broadcast.feed.hub`) diffs each new :class:`BoardState` with what the feed has
already said about that board (:func:`diff_states`) and numbers the events it gets
(``move``, ``correction``, ``takeback``, ``clock``, ``result``, ``status``, ``board``);
the engine's evaluations of public positions are ``eval`` events (:class:`EvaluationChanged`).
Everything here is pure: no I/O, no event loop.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from base.colors import Color
from broadcast.feed.messages import (
    BoardState,
    BoardStatus,
    ClockReading,
    Evaluation,
    MoveInfo,
    to_json_dict,
)

__all__ = [
    "BoardAnnounced",
    "ClockChanged",
    "EvaluationChanged",
    "FeedEvent",
    "FeedMessage",
    "MovesAppended",
    "MovesCorrected",
    "MovesTakenBack",
    "ResultChanged",
    "StatusChanged",
    "clock_event_due",
    "diff_states",
    "encode_json",
    "event_to_json",
    "state_to_json",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardAnnounced:
    """``board``: a board appeared, or its players / section / round changed.

    Carries the whole state (without PGN); a client replaces what it knew of the board.
    """

    TYPE: ClassVar[str] = "board"
    seq: int
    board: int
    state: BoardState


@dataclass(frozen=True, slots=True, kw_only=True)
class _MovesFrom:
    """Plies from ply ``ply`` on, and the position after them (``move``, ``correction``)."""

    seq: int
    board: int
    ply: int
    moves: tuple[MoveInfo, ...]
    fen: str
    last_move: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class MovesAppended(_MovesFrom):
    """``move``: new plies were played after ply ``ply`` (the plies known before)."""

    TYPE: ClassVar[str] = "move"


@dataclass(frozen=True, slots=True, kw_only=True)
class MovesCorrected(_MovesFrom):
    """``correction``: the main line changed from ply ``ply``; ``moves`` replace the rest."""

    TYPE: ClassVar[str] = "correction"


@dataclass(frozen=True, slots=True, kw_only=True)
class MovesTakenBack:
    """``takeback``: the main line was cut back to its first ``ply`` plies."""

    TYPE: ClassVar[str] = "takeback"
    seq: int
    board: int
    ply: int
    fen: str
    last_move: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockChanged:
    """``clock``: a reading that a viewer could not extrapolate from the previous one.

    Sent when the running side changes, or a time differs from the extrapolated time by
    more than the hub's tolerance (a clock set by an arbiter, a time bonus). Plain
    ticking is not an event: viewers count down from ``clock_at``.
    """

    TYPE: ClassVar[str] = "clock"
    seq: int
    board: int
    white_clock: float | None
    black_clock: float | None
    running: Color | None
    clock_at: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultChanged:
    """``result``: the result or its finality changed."""

    TYPE: ClassVar[str] = "result"
    seq: int
    board: int
    result: str
    result_final: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusChanged:
    """``status``: the e-board went online, offline, out of sync, catching up, ...; or more
    plies of its game were recovered (played while it was out of sight, issue 11); or its
    battery level changed (wireless boards)."""

    TYPE: ClassVar[str] = "status"
    seq: int
    board: int
    status: BoardStatus
    recovered_plies: int = 0
    battery: int | None = None
    battery_charging: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluationChanged:
    """``eval``: the engine's evaluation of a board's public position, or none any more
    (the analysis' engine is missing or crashed). Only on the public feed, never on the
    arbiter channel."""

    TYPE: ClassVar[str] = "eval"
    seq: int
    board: int
    evaluation: Evaluation


FeedEvent = (
    BoardAnnounced
    | MovesAppended
    | MovesCorrected
    | MovesTakenBack
    | ClockChanged
    | ResultChanged
    | StatusChanged
    | EvaluationChanged
)


def encode_json(value: Any) -> str:
    """Compact JSON text, as sent on every feed."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


_MOVE_FIELDS = tuple(f.name for f in dataclasses.fields(MoveInfo))
_STATE_FIELDS = tuple(f.name for f in dataclasses.fields(BoardState) if f.name != "pgn")


def _field_json(value: Any) -> Any:
    """``to_json_dict``, with a fast path for move lists (they are most of the bytes)."""
    if isinstance(value, tuple) and value and isinstance(value[0], MoveInfo):
        return [{name: getattr(move, name) for name in _MOVE_FIELDS} for move in value]
    if isinstance(value, str | int | float | None):
        return value
    return to_json_dict(value)


def state_to_json(state: BoardState) -> dict[str, Any]:
    """A board state as feed JSON: every field but ``pgn`` (served over HTTP)."""
    return {name: _field_json(getattr(state, name)) for name in _STATE_FIELDS}


def event_to_json(event: FeedEvent) -> dict[str, Any]:
    """A feed event as JSON: ``{"type": ..., "seq": ..., "board": ..., ...}``."""
    data: dict[str, Any] = {"type": event.TYPE}
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        data[f.name] = state_to_json(value) if f.name == "state" else _field_json(value)
    return data


@dataclass(frozen=True, slots=True, kw_only=True)
class FeedMessage:
    """A feed event with its JSON text, encoded once for every consumer."""

    event: FeedEvent
    text: str


# --- Diffing -------------------------------------------------------------------------

_IDENTITY = ("section", "round", "white", "black", "white_elo", "black_elo", "variant")
_CLOCK = ("white_clock", "black_clock", "running", "clock_at")


def _identity(state: BoardState) -> tuple[Any, ...]:
    return tuple(getattr(state, name) for name in _IDENTITY)


def _common_prefix(a: tuple[MoveInfo, ...], b: tuple[MoveInfo, ...]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _needs_announce(known: BoardState | None, new: BoardState) -> bool:
    if known is None or _identity(known) != _identity(new):
        return True
    # A position change without a move change cannot be said with move events.
    return known.moves == new.moves and (known.fen, known.last_move) != (new.fen, new.last_move)


def _move_events(known: BoardState, new: BoardState, seqs: Iterator[int]) -> list[FeedEvent]:
    if known.moves == new.moves:
        return []
    k = _common_prefix(known.moves, new.moves)
    b, fen, last = new.board, new.fen, new.last_move
    if k == len(known.moves):
        added = new.moves[k:]
        return [MovesAppended(seq=next(seqs), board=b, ply=k, moves=added, fen=fen, last_move=last)]
    if k == len(new.moves):
        return [MovesTakenBack(seq=next(seqs), board=b, ply=k, fen=fen, last_move=last)]
    moves = new.moves[k:]
    return [MovesCorrected(seq=next(seqs), board=b, ply=k, moves=moves, fen=fen, last_move=last)]


def _side_off(before: float | None, after: float | None, ran: float, tolerance: float) -> bool:
    """Whether a side's new time is not its old time minus the time it ran."""
    if before is None or after is None:
        return before != after
    return abs(after - max(0.0, before - ran)) > tolerance


def clock_event_due(known: BoardState, new: BoardState | ClockReading, tolerance: float) -> bool:
    """Whether a viewer extrapolating from ``known`` would now show the wrong times."""
    if known.running != new.running or (known.clock_at is None) != (new.clock_at is None):
        return True
    elapsed = 0.0
    if known.clock_at is not None and new.clock_at is not None:
        elapsed = max(0.0, new.clock_at - known.clock_at)
    white_ran = elapsed if known.running == "white" else 0.0
    black_ran = elapsed if known.running == "black" else 0.0
    return _side_off(known.white_clock, new.white_clock, white_ran, tolerance) or _side_off(
        known.black_clock, new.black_clock, black_ran, tolerance
    )


def _health(state: BoardState) -> tuple[object, ...]:
    """What a ``status`` event tells of a board."""
    return (state.status, state.recovered_plies, state.battery, state.battery_charging)


def _other_events(
    known: BoardState, new: BoardState, seqs: Iterator[int], tolerance: float
) -> list[FeedEvent]:
    events: list[FeedEvent] = []
    b = new.board
    if clock_event_due(known, new, tolerance):
        events.append(
            ClockChanged(
                seq=next(seqs),
                board=b,
                white_clock=new.white_clock,
                black_clock=new.black_clock,
                running=new.running,
                clock_at=new.clock_at,
            )
        )
    if (known.result, known.result_final) != (new.result, new.result_final):
        events.append(
            ResultChanged(seq=next(seqs), board=b, result=new.result, result_final=new.result_final)
        )
    if _health(known) != _health(new):
        events.append(
            StatusChanged(
                seq=next(seqs),
                board=b,
                status=new.status,
                recovered_plies=new.recovered_plies,
                battery=new.battery,
                battery_charging=new.battery_charging,
            )
        )
    return events


def diff_states(
    known: BoardState | None, new: BoardState, *, next_seq: int, clock_tolerance: float = 1.5
) -> tuple[list[FeedEvent], BoardState]:
    """Feed events that turn ``known`` into ``new``, numbered from ``next_seq``.

    Args:
        known: what the feed has said about the board so far (None: nothing yet).
        new: the board's new state.
        next_seq: the sequence number of the first event returned.
        clock_tolerance: seconds a clock may differ from its extrapolation before a
            ``clock`` event is due (readings are whole seconds, docs/protocol.md §7.2).

    Returns:
        The events, in order, and the state the feed describes after them: ``new``,
        except that its clock fields stay as last announced when no ``clock`` event was
        due (so small drifts add up to an event instead of being lost).
    """
    seqs = itertools.count(next_seq)
    if _needs_announce(known, new):
        return [BoardAnnounced(seq=next(seqs), board=new.board, state=new)], new
    assert known is not None
    events = _move_events(known, new, seqs) + _other_events(known, new, seqs, clock_tolerance)
    if any(isinstance(e, ClockChanged) for e in events):
        return events, new
    kept = {name: getattr(known, name) for name in _CLOCK}
    return events, dataclasses.replace(new, **kept)
