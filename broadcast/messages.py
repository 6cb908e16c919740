"""What the daemon hands to the broadcast layer, and what arbiters send back.

``broadcast`` knows messages, not DGT or trackers: the daemon's pipeline turns each game
snapshot into a :class:`BoardState` and each alert into an :class:`Alert`; the broadcast
layer fans them out (websocket feed, PGN endpoints, MQTT, lichess, PGN folder). Arbiter
commands arrive as :data:`ArbiterCommand` values and are executed by a
:class:`CommandHandler` that the daemon (or a relay) provides.

Every value here is JSON-friendly through :func:`to_json_dict`.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "RESULTS",
    "AcceptPosition",
    "AckAlert",
    "Alert",
    "AlertKind",
    "ArbiterCommand",
    "BoardState",
    "BoardStatus",
    "CommandHandler",
    "CommandReply",
    "ConfirmResult",
    "MoveInfo",
    "SetClocks",
    "SetResult",
    "to_json_dict",
]

#: Results an arbiter may set: normal results, and forfeits (+- -+ --) per the TRF codes.
RESULTS = frozenset({"1-0", "0-1", "1/2-1/2", "+-", "-+", "--", "*"})


class AlertKind(enum.StrEnum):
    """The kinds of :class:`Alert` the daemon's alert engine raises (docs/alerts.md)."""

    FLAG_FALL = "flag_fall"
    LATE_ARRIVAL = "late_arrival"
    BOARD_OFFLINE = "board_offline"
    BOARD_ONLINE = "board_online"
    CLOCK_OFFLINE = "clock_offline"
    CLOCK_ONLINE = "clock_online"
    OUT_OF_SYNC = "out_of_sync"
    CLOCK_MISMATCH = "clock_mismatch"
    RESULT_SIGNALLED = "result_signalled"
    GAME_OVER = "game_over"


class BoardStatus(enum.Enum):
    """What a spectator should know about the board itself."""

    ONLINE = "online"  # e-board heard, game in sync
    OFFLINE = "offline"  # e-board cable pulled / silent
    OUT_OF_SYNC = "out_of_sync"  # placement matches no position of the game
    MANUAL = "manual"  # no e-board: results entered by arbiters
    WAITING = "waiting"  # e-board heard, game not started yet


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveInfo:
    """One ply of the main line."""

    san: str
    uci: str
    clock: float | None  # mover's remaining time after the move ([%clk]), seconds
    emt: float | None = None  # time spent on the move ([%emt]), seconds


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
    running: str | None = None  # "white", "black" or None (stopped)
    clock_at: float | None = None  # wall-clock time (epoch seconds) of the clock reading
    status: BoardStatus = BoardStatus.WAITING
    result: str = "*"
    result_final: bool = False  # confirmed by an arbiter (or decided on the board)
    updated_at: float = 0.0  # wall-clock time of this snapshot (epoch seconds)
    serial: str | None = None  # the e-board's serial number, once it has been heard
    port: str | None = None  # the device path it was last heard on


@dataclass(frozen=True, slots=True, kw_only=True)
class Alert:
    """An arbiter alert (kinds listed in docs/alerts.md)."""

    id: int
    kind: str  # flag_fall, late_arrival, board_offline, board_online, clock_offline, ...
    board: int
    at: float  # wall-clock time, epoch seconds
    details: dict[str, Any] = field(default_factory=dict)
    action: str = ""  # the suggested action, in words
    acknowledged: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class AckAlert:
    """``{"type": "ack_alert", "id": 7}``."""

    id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SetResult:
    """``{"type": "set_result", "board": 3, "result": "1-0"}``."""

    board: int
    result: str

    def __post_init__(self) -> None:
        if self.result not in RESULTS:
            raise ValueError(f"result must be one of {sorted(RESULTS)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfirmResult:
    """``{"type": "confirm_result", "board": 3}``: a provisional result becomes final."""

    board: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AcceptPosition:
    """``{"type": "accept_position", "board": 3}``: the game goes on from the board."""

    board: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SetClocks:
    """``{"type": "set_clocks"}``: set every e-board clock to the time control."""


ArbiterCommand = AckAlert | SetResult | ConfirmResult | AcceptPosition | SetClocks


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandReply:
    """The answer to one arbiter command: ok, or an error with a reason."""

    ok: bool
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class CommandHandler(Protocol):
    """Executes arbiter commands; implemented by the daemon (and by relays)."""

    async def execute(self, command: ArbiterCommand) -> CommandReply: ...


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
