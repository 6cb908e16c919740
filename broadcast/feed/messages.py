"""What the daemon hands to the broadcast layer: board states, clocks, evaluations.

``broadcast`` knows messages, not DGT or trackers: the daemon's pipeline turns each game
snapshot into a :class:`BoardState`; the broadcast layer fans them out (websocket feed,
PGN endpoints, MQTT, lichess, PGN folder). Alerts live in :mod:`broadcast.feed.alerts`,
the arbiter commands that come back in :mod:`broadcast.feed.commands`.

Every value here is JSON-friendly through :func:`to_json_dict`; untrusted JSON from any
client is parsed by :func:`decode_untrusted_json`.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from base.colors import Color

__all__ = [
    "FORFEITS",
    "LOW_BATTERY",
    "MALFORMED_JSON",
    "MAX_BOARD",
    "MAX_ID",
    "NOT_UNICODE",
    "PGN_RESULTS",
    "RESULTS",
    "BoardState",
    "BoardStatus",
    "ClockReading",
    "Evaluation",
    "MoveInfo",
    "board_state_from_json",
    "decode_untrusted_json",
    "evaluation_from_json",
    "to_json_dict",
]

#: Results an arbiter may set: normal results, and forfeits (+- -+ --) per the TRF codes.
RESULTS = frozenset({"1-0", "0-1", "1/2-1/2", "+-", "-+", "--", "*"})
#: The PGN ``Result`` of each result: a forfeit is its winner's result, as lichess
#: broadcasts and the PGN standard (8.2.6) accept; a double forfeit has no winner and no
#: game, and PGN no ``0-0``: ``*``. :data:`FORFEITS` says the forfeit in ``Termination``.
PGN_RESULTS: Mapping[str, str] = {
    "1-0": "1-0",
    "0-1": "0-1",
    "1/2-1/2": "1/2-1/2",
    "+-": "1-0",
    "-+": "0-1",
    "--": "*",
    "*": "*",
}
#: The PGN ``Termination`` of a forfeit (the TRF keeps its ``+``/``-`` codes).
FORFEITS: Mapping[str, str] = {"+-": "forfeit", "-+": "forfeit", "--": "double forfeit"}
#: The highest board number (the TRF's four digits; the configuration's bound too).
MAX_BOARD = 9999
#: The highest id a message carries (alert ids, refs): exact in every JSON reader.
MAX_ID = 2**53 - 1
#: The one reason every client hears for text that is no valid Unicode.
NOT_UNICODE = "text must be valid Unicode (a lone surrogate such as \\ud800 is not)"


class BoardStatus(enum.Enum):
    """What a spectator should know about the board itself."""

    ONLINE = "online"  # e-board heard, game in sync
    OFFLINE = "offline"  # e-board cable pulled / silent
    OUT_OF_SYNC = "out_of_sync"  # placement matches no position of the game
    MANUAL = "manual"  # no e-board: results entered by arbiters
    WAITING = "waiting"  # e-board heard, game not started yet
    CATCHING_UP = "catching_up"  # reading the e-board's memory of what was played unseen
    CONNECTING = "connecting"  # daemon (re)started, e-board not heard since


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveInfo:
    """One ply of the main line."""

    san: str
    uci: str
    clock: float | None  # mover's remaining time after the move ([%clk]), seconds
    emt: float | None = None  # time spent on the move ([%emt]), seconds


#: Below this % a wireless e-board's battery is shown as low (the arbiter page's twin is
#: ``LOW_BATTERY`` in broadcast/static/model.js).
LOW_BATTERY = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardState:
    """A complete snapshot of one board, enough to render it from scratch.

    ``pgn`` is the full game (tags + main line with ``[%clk]``) as the public should see
    it; the tags lichess matches games on never change during a game.
    """

    board: int
    section: str = ""
    round: str = ""
    white: str = ""
    black: str = ""
    white_elo: int | None = None
    black_elo: int | None = None
    pgn: str = ""
    fen: str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    moves: tuple[MoveInfo, ...] = ()
    last_move: str | None = None  # uci
    white_clock: float | None = None  # seconds remaining at ``clock_at``
    black_clock: float | None = None
    running: Color | None = None  # None: stopped
    clock_at: float | None = None  # wall-clock time (epoch seconds) of the clock reading
    status: BoardStatus = BoardStatus.WAITING
    result: str = "*"
    result_final: bool = False  # confirmed by an arbiter (or decided on the board)
    updated_at: float = 0.0  # wall-clock time of this snapshot (epoch seconds)
    serial: str | None = None  # the e-board's serial number, once it has been heard
    port: str | None = None  # the device path it was last heard on
    variant: str = "standard"  # or "chess960" (the PGN then has Variant, SetUp and FEN)
    recovered_plies: int = 0  # plies of this game recovered, not seen live (docs/alerts.md)
    battery: int | None = None  # % left, as a wireless e-board reports it; None: never (USB)
    battery_charging: bool = False  # the e-board is on its charger (with ``battery``)


@dataclass(frozen=True, slots=True, kw_only=True)
class Evaluation:
    """The engine's evaluation of one public position of a board (docs/broadcast.md).

    From White's point of view: ``cp`` centipawns, or ``mate`` in that many moves
    (negative: Black mates). Neither: no evaluation (the analysis is off, or its engine
    missing or crashed): viewers hide the bar. ``line`` is the best line in SAN from
    ``fen``, ``depth`` the plies the engine searched.
    """

    board: int
    fen: str = ""
    cp: int | None = None
    mate: int | None = None
    depth: int = 0
    line: tuple[str, ...] = ()

    @property
    def has_score(self) -> bool:
        """Whether there is an evaluation to show."""
        return self.cp is not None or self.mate is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockReading:
    """A board's clocks changed and nothing else: the compact message for a reading.

    The daemon publishes one (:meth:`broadcast.feed.hub.Hub.publish_clock`) for a clock
    reading that only moves the time, instead of the board's whole :class:`BoardState`
    and its PGN; a relay does the same with a daemon's ``/clocks`` message. The fields
    are those of :class:`BoardState`: ``running`` is None once the game has a result.
    """

    board: int
    white_clock: float | None
    black_clock: float | None
    running: Color | None
    clock_at: float | None


_BOARD_STATE = TypeAdapter(BoardState)


def board_state_from_json(text: str | bytes) -> BoardState:
    """A board state from its JSON (:func:`to_json_dict`), as a daemon published it.

    Untrusted (a relay reads it from the broker): validated strictly by pydantic; fields
    it does not know (from a newer daemon) are ignored.

    Raises:
        ValueError: not a board state (a pydantic ``ValidationError``, or a bad board).
    """
    state = _BOARD_STATE.validate_json(text, strict=True)
    if state.board < 1:
        raise ValueError(f"bad board number {state.board!r}")
    return state


_EVALUATION = TypeAdapter(Evaluation)


def evaluation_from_json(text: str | bytes) -> Evaluation:
    """An evaluation from its JSON (:func:`to_json_dict`), as a daemon published it on
    MQTT: untrusted, validated strictly like :func:`board_state_from_json`.

    Raises:
        ValueError: not an evaluation.
    """
    evaluation = _EVALUATION.validate_json(text, strict=True)
    if not 1 <= evaluation.board <= MAX_BOARD or len(evaluation.line) > 100:
        raise ValueError("not an evaluation of a board")
    return evaluation


#: The one reason every client hears for a message that is not JSON.
MALFORMED_JSON = "malformed JSON"


def decode_untrusted_json(text: str | bytes) -> Any:
    """Parse a client's JSON message; anything that is not JSON is a :class:`ValueError`.

    ``json`` raises :class:`RecursionError` for arrays or objects nested about a thousand
    deep: from a client that is malformed input like any other, never a crash. JSON may
    escape half of a surrogate pair alone (``"\\ud800"``), which no UTF-8 text, log
    line or SQLite column can hold: such a message is bad input too, on every channel.

    Raises:
        ValueError: the text is not JSON (the message is :data:`MALFORMED_JSON`), or
            holds a lone surrogate (:data:`NOT_UNICODE`).
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError(MALFORMED_JSON) from None
    escaped = b"\\u" if isinstance(text, bytes) else "\\u"
    if escaped in text and not _is_unicode(data):  # type: ignore[operator]
        raise ValueError(NOT_UNICODE)
    return data


def _is_unicode(data: Any) -> bool:
    """Whether every string in decoded JSON (keys too) can be encoded as UTF-8."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode()
            except UnicodeEncodeError:
                return False
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return True


def to_json_dict(value: Any) -> Any:
    """Turn a message (dataclass, enum, tuple) into plain JSON-able data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json_dict(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [to_json_dict(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json_dict(v) for k, v in value.items()}
    return value
