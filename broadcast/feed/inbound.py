"""Messages from the MQTT broker, bounded and checked before they are used (pure).

Any client that can write to the broker can write any topic (docs/deployment.md, "Who
can do what"), so what a relay or a daemon reads there is untrusted input, like a
spectator's message:

* **size**: each kind of message has a byte limit (:data:`LIMITS`, by the topic's last
  level), checked before anything is parsed;
* **depth**: JSON nested deeper than :data:`MAX_DEPTH` is refused (``json`` itself
  raises :class:`RecursionError` about a thousand deep, and ended a relay that way);
* **fields**: a board state names its board, its position (a FEN python-chess reads) and
  its time; its texts, moves and clock times are bounded (:func:`check_board_state`);
* **times**: a time from the broker is never later than the receiver's clock
  (:func:`bounded_time`): one forged far in the future (``updated_at: 9e9``) made every
  real state "older" for good.

Each refusal is a :class:`BadMessage` (a :class:`ValueError`) saying why; the receiver
logs it (at most one line every 10 s) and changes nothing.
"""

from __future__ import annotations

import math
from typing import Any

import chess
from pydantic import ValidationError

from broadcast.feed.messages import (
    MAX_BOARD,
    BoardState,
    board_state_from_json,
    decode_untrusted_json,
)

__all__ = [
    "LIMITS",
    "MAX_DEPTH",
    "MAX_PGN",
    "MAX_PLIES",
    "MAX_TEXT",
    "BadMessage",
    "board_number",
    "board_state_from_broker",
    "bounded_time",
    "check_board_state",
    "check_size",
    "read_json",
]

_KIB = 1024
#: Bytes a message may have, by its topic's last level (docs/mqtt.md). A board state
#: with a long game is about 20 KB; 1 MiB is also the broker's ``max_packet_size`` in
#: docs/deployment.md. A past round holds every game of a section.
LIMITS: dict[str, int] = {
    "state": 1024 * _KIB,
    "clocks": 1 * _KIB,
    "eval": 64 * _KIB,
    "status": 64,
    "boards": 256 * _KIB,
    "alerts": 1024 * _KIB,
    "resolved": 1024 * _KIB,
    "commands": 64 * _KIB,
    "replies": 64 * _KIB,
    "standings": 1024 * _KIB,
    "round": 16 * 1024 * _KIB,
}
#: The deepest JSON any message of dgtcast has is a past round (round, games, game,
#: moves, move: 5 levels) or an alert's details; far below ``json``'s own limit.
MAX_DEPTH = 32
#: Characters of a board state's PGN, and plies of its game (the longest games played
#: have under 600 plies; the PGN of one with clock comments is about 30 characters a ply).
MAX_PGN = 512 * _KIB
MAX_PLIES = 4000
#: Characters of a name, section, round, serial number or port (the configuration's own
#: bound on names, docs/faults.md).
MAX_TEXT = 200
#: Seconds a clock may show (a DGT clock shows at most 9:59:59), with room for negatives.
_MAX_CLOCK = 100_000.0
_VARIANTS = frozenset({"standard", "chess960"})


class BadMessage(ValueError):
    """A message from the broker that is refused; ``str()`` says why."""


def check_size(leaf: str, payload: bytes) -> None:
    """Refuse a payload longer than its kind's limit (:data:`LIMITS`; unknown: 64 KiB).

    Raises:
        BadMessage: too long.
    """
    limit = LIMITS.get(leaf, 64 * _KIB)
    if len(payload) > limit:
        raise BadMessage(f"{len(payload)} bytes, more than the {limit} a {leaf!r} may have")


def read_json(payload: bytes, leaf: str) -> Any:
    """The JSON of a payload, once its size and depth are checked.

    Raises:
        BadMessage: too long, not JSON, no valid Unicode, or nested too deeply.
    """
    check_size(leaf, payload)
    try:
        data = decode_untrusted_json(payload)
    except ValueError as exc:
        raise BadMessage(str(exc)) from None
    if _depth(data) > MAX_DEPTH:
        raise BadMessage(f"JSON nested more than {MAX_DEPTH} deep")
    return data


def _depth(data: Any) -> int:
    """How deeply arrays and objects nest in decoded JSON (without recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            deepest = max(deepest, level + 1)
            stack.extend((item, level + 1) for item in value)
    return deepest


def board_number(text: str) -> int:
    """A board number from a topic level: ASCII digits only (``int`` takes ``٣`` as 3).

    Raises:
        BadMessage: not a board number from 1 to :data:`MAX_BOARD`.
    """
    if not (text.isascii() and text.isdigit() and len(text) <= 4) or int(text) < 1:
        raise BadMessage(f"no board number: {text[:20]!r}")
    return int(text)


def board_state_from_broker(payload: bytes, *, board: int | None = None) -> BoardState:
    """A board state a daemon published, bounded and checked (:func:`check_board_state`).

    Args:
        payload: the message.
        board: the board its topic names; the state must be that board's.

    Raises:
        BadMessage: not a whole board state, or one out of bounds.
    """
    data = read_json(payload, "state")
    if not isinstance(data, dict):
        raise BadMessage("not a board state (no JSON object)")
    missing = [key for key in ("board", "fen", "updated_at") if key not in data]
    if missing:
        raise BadMessage(f"not a board state (no {', '.join(missing)})")
    try:
        state = board_state_from_json(payload)
    except ValueError as exc:
        raise BadMessage(_short(exc)) from None
    if board is not None and state.board != board:
        raise BadMessage(f"a state of board {state.board} on board {board}'s topic")
    check_board_state(state)
    return state


def check_board_state(state: BoardState) -> None:
    """Refuse a board state no daemon publishes: out of bounds, or no position.

    Raises:
        BadMessage: the first problem found.
    """
    if not 1 <= state.board <= MAX_BOARD:
        raise BadMessage(f"board {state.board} is not from 1 to {MAX_BOARD}")
    if len(state.pgn) > MAX_PGN:
        raise BadMessage(f"a PGN of {len(state.pgn)} characters (at most {MAX_PGN})")
    if len(state.moves) > MAX_PLIES:
        raise BadMessage(f"{len(state.moves)} plies (at most {MAX_PLIES})")
    texts: tuple[str | None, ...] = (
        state.section,
        state.round,
        state.white,
        state.black,
        state.serial,
        state.port,
    )
    texts += tuple(text for move in state.moves for text in (move.san, move.uci))
    if any(text is not None and len(text) > MAX_TEXT for text in texts):
        raise BadMessage(f"a name, section, round, serial, port or move over {MAX_TEXT} characters")
    if state.variant not in _VARIANTS:
        raise BadMessage(f"unknown variant {state.variant[:20]!r}")
    _check_times(state)
    try:
        chess.Board(state.fen, chess960=state.variant == "chess960")
    except ValueError:
        raise BadMessage(f"no position: {state.fen[:100]!r}") from None


def _check_times(state: BoardState) -> None:
    for value in (state.updated_at, state.clock_at):
        if value is not None and not math.isfinite(value):
            raise BadMessage("a time that is not a finite number")
    clocks = [state.white_clock, state.black_clock, *(m.clock for m in state.moves)]
    clocks += [m.emt for m in state.moves]
    if any(c is not None and not (math.isfinite(c) and abs(c) <= _MAX_CLOCK) for c in clocks):
        raise BadMessage(f"a clock time that is no number of seconds within {_MAX_CLOCK:.0f}")


def bounded_time(at: float, now: float) -> float:
    """A time from the broker, never later than the receiver's clock ``now``.

    A time ahead of ``now`` counts as ``now``: a forged one far ahead then holds back no
    real message sent after it arrived, and a daemon whose clock runs ahead keeps its
    order (each of its times becomes the receiver's own).
    """
    return min(at, now)


def _short(exc: ValueError) -> str:
    """What a validation error says first, cut short (pydantic repeats the input)."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the message"
        return f"not a board state ({where}: {first['msg'][:100]})"
    return str(exc)[:200]
