"""What the daemon hands to the broadcast layer, and what arbiters send back.

``broadcast`` knows messages, not DGT or trackers: the daemon's pipeline turns each game
snapshot into a :class:`BoardState` and each alert into an :class:`Alert`; the broadcast
layer fans them out (websocket feed, PGN endpoints, MQTT, lichess, PGN folder). Arbiter
commands arrive as :data:`ArbiterCommand` values and are executed by a
:class:`CommandHandler` that the daemon (or a relay) provides.

Every value here is JSON-friendly through :func:`to_json_dict`. Alerts have one wire form,
:func:`alert_to_json` and :func:`alert_from_json` (every version of an alert: raised,
updated, acknowledged, resolved; docs/alerts.md), used by the arbiter channel, MQTT, the
webhook, relays and the journal. Arbiter commands have one
codec, :func:`command_to_json` and :func:`command_from_json` (untrusted data, validated
by pydantic, with one-line reasons); the arbiter channel, the relays' command topics and
the journal all use it.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, Protocol, get_args

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from base.colors import Color

__all__ = [
    "BY_ARBITER",
    "BY_DGTCAST",
    "COMMAND_TYPES",
    "LOW_BATTERY",
    "MALFORMED_JSON",
    "MAX_BOARD",
    "MAX_ID",
    "MAX_LINE",
    "MAX_TEXT",
    "NOT_UNICODE",
    "RESULTS",
    "AcceptPosition",
    "AckAlert",
    "Alert",
    "AlertKind",
    "AlertState",
    "AlertStep",
    "ArbiterCommand",
    "BoardNumber",
    "BoardState",
    "BoardStatus",
    "ChooseLine",
    "CommandHandler",
    "CommandRejected",
    "CommandReply",
    "ConfirmResult",
    "Evaluation",
    "MoveInfo",
    "NextRound",
    "Positive",
    "Ref",
    "SetClocks",
    "SetResult",
    "Text",
    "alert_from_json",
    "alert_to_json",
    "alerts_from_json",
    "board_state_from_json",
    "command_from_json",
    "command_to_json",
    "decode_untrusted_json",
    "evaluation_from_json",
    "to_json_dict",
]

#: Results an arbiter may set: normal results, and forfeits (+- -+ --) per the TRF codes.
RESULTS = frozenset({"1-0", "0-1", "1/2-1/2", "+-", "-+", "--", "*"})


class AlertKind(enum.StrEnum):
    """The kinds of :class:`Alert` the daemon's alert engine raises (docs/alerts.md)."""

    FLAG_FALL = "flag_fall"
    LATE_ARRIVAL = "late_arrival"
    BOARD_OFFLINE = "board_offline"
    BOARD_FLOODING = "board_flooding"
    CLOCK_OFFLINE = "clock_offline"
    OUT_OF_SYNC = "out_of_sync"
    CLOCK_MISMATCH = "clock_mismatch"
    RESULT_SIGNALLED = "result_signalled"
    GAME_OVER = "game_over"
    MOVES_RECOVERED = "moves_recovered"
    GAP_AMBIGUOUS = "gap_ambiguous"
    LICHESS_REFUSED = "lichess_refused"  # raised by the lichess push, not by a board
    JOURNAL_FAILED = "journal_failed"
    INTERNAL_ERROR = "internal_error"  # a bug the daemon survived (daemon/shell/faults.py)


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


class AlertState(enum.StrEnum):
    """Where an alert is in its life (docs/alerts.md, "Life cycle")."""

    OPEN = "open"  # its condition holds, or the decision it asks for is not made yet
    RESOLVED = "resolved"  # the condition cleared, or the decision was made


#: Who took a step of an alert's life: dgtcast itself (the condition cleared) ...
BY_DGTCAST = "dgtcast"
#: ... or an arbiter (a command: acknowledge, confirm a result, accept a position, ...).
BY_ARBITER = "arbiter"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlertStep:
    """One step of an alert's history: what happened, when, by whom, and why in words."""

    step: Literal["raised", "updated", "acknowledged", "resolved"]
    at: float  # wall-clock time, epoch seconds
    by: str = BY_DGTCAST  # BY_DGTCAST or BY_ARBITER
    note: str = ""


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Alert:
    """An arbiter alert (kinds listed in docs/alerts.md), one version of it.

    ``at`` is when it was raised; ``state`` and ``acknowledged`` are where it is now, and
    ``history`` how it got there, oldest step first. Each change is a new version with
    the same ``id`` (the methods below return it); receivers keep the latest.
    """

    id: int
    kind: AlertKind
    board: int
    at: float  # wall-clock time, epoch seconds
    details: dict[str, Any] = field(default_factory=dict)
    action: str = ""  # the suggested action, in words
    state: AlertState = AlertState.OPEN
    acknowledged: bool = False
    history: tuple[AlertStep, ...] = ()

    @classmethod
    def raised(
        cls,
        *,
        id: int,
        kind: AlertKind,
        board: int,
        at: float,
        details: dict[str, Any],
        action: str,
    ) -> Alert:
        """A new open alert, its history the one step ``raised``."""
        step = AlertStep(step="raised", at=at)
        return cls(
            id=id, kind=kind, board=board, at=at, details=details, action=action, history=(step,)
        )

    @property
    def is_open(self) -> bool:
        """Whether the alert is open (acknowledged or not)."""
        return self.state is AlertState.OPEN

    def updated(self, at: float, details: dict[str, Any], action: str, note: str) -> Alert:
        """The same condition, now with ``details`` and ``action`` (an open alert)."""
        step = AlertStep(step="updated", at=at, note=note)
        return dataclasses.replace(
            self, details=details, action=action, history=(*self.history, step)
        )

    def acknowledge(self, at: float, by: str = BY_ARBITER) -> Alert:
        """Seen by an arbiter (it stays open while its condition holds); once only."""
        if self.acknowledged:
            return self
        step = AlertStep(step="acknowledged", at=at, by=by)
        return dataclasses.replace(self, acknowledged=True, history=(*self.history, step))

    def resolve(self, at: float, note: str, by: str = BY_DGTCAST) -> Alert:
        """The condition cleared, or the decision was made (``note`` says which); once only."""
        if not self.is_open:
            return self
        step = AlertStep(step="resolved", at=at, by=by, note=note)
        return dataclasses.replace(self, state=AlertState.RESOLVED, history=(*self.history, step))


# --- Arbiter commands ----------------------------------------------------------------
#
# Adding a command is adding one class here (a ``TYPE``, its fields, ``DEFERRABLE``) and
# its name to ``ArbiterCommand``; the wire codec below, the arbiter channel, the relays
# and the journal all take it from there. The daemon then carries it out in
# ``daemon/round/core.py`` (mypy checks that every command has a case there).

#: The highest board number (the TRF's four digits; the configuration's bound too).
MAX_BOARD = 9999
#: The highest id a message carries (alert ids, refs): exact in every JSON reader.
MAX_ID = 2**53 - 1
#: The highest candidate line of a gap an arbiter may choose.
MAX_LINE = 1000
#: The longest text field of a command (a section's name).
MAX_TEXT = 200
#: The one reason every client hears for text that is no valid Unicode.
NOT_UNICODE = "text must be valid Unicode (a lone surrogate such as \\ud800 is not)"


def _unicode(text: str) -> str:
    try:
        text.encode()
    except UnicodeEncodeError:
        raise ValueError(NOT_UNICODE) from None
    return text


#: Field types of commands, validated strictly (no "7" for 7, no true for 1) and within
#: their ranges, so that nothing out of range reaches the core or the journal.
Positive = Annotated[int, Field(strict=True, gt=0, le=MAX_ID)]
BoardNumber = Annotated[int, Field(strict=True, gt=0, le=MAX_BOARD)]
Text = Annotated[str, Field(strict=True, max_length=MAX_TEXT), AfterValidator(_unicode)]
_COMMAND_CONFIG = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True, kw_only=True)
class AckAlert:
    """``{"type": "ack_alert", "id": 7}``."""

    __pydantic_config__ = _COMMAND_CONFIG
    TYPE: ClassVar[str] = "ack_alert"
    DEFERRABLE: ClassVar[bool] = True
    id: Positive


@dataclass(frozen=True, slots=True, kw_only=True)
class SetResult:
    """``{"type": "set_result", "board": 3, "result": "1-0"}``."""

    __pydantic_config__ = _COMMAND_CONFIG
    TYPE: ClassVar[str] = "set_result"
    DEFERRABLE: ClassVar[bool] = True
    board: BoardNumber
    result: Text

    def __post_init__(self) -> None:
        if self.result not in RESULTS:
            raise ValueError(f"result must be one of {sorted(RESULTS)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class _BoardCommand:
    """A command about one board and nothing else: ``{"type": ..., "board": 3}``."""

    __pydantic_config__ = _COMMAND_CONFIG
    TYPE: ClassVar[str]
    DEFERRABLE: ClassVar[bool]
    board: BoardNumber


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfirmResult(_BoardCommand):
    """``{"type": "confirm_result", "board": 3}``: a provisional result becomes final."""

    TYPE: ClassVar[str] = "confirm_result"
    DEFERRABLE: ClassVar[bool] = True


@dataclass(frozen=True, slots=True, kw_only=True)
class AcceptPosition(_BoardCommand):
    """``{"type": "accept_position", "board": 3}``: the game goes on from the board."""

    TYPE: ClassVar[str] = "accept_position"
    DEFERRABLE: ClassVar[bool] = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ChooseLine:
    """``{"type": "choose_line", "board": 3, "line": 2}``: the moves played during a gap
    are candidate line 2 of the board's ``gap_ambiguous`` alert (docs/alerts.md)."""

    __pydantic_config__ = _COMMAND_CONFIG
    TYPE: ClassVar[str] = "choose_line"
    DEFERRABLE: ClassVar[bool] = False
    board: BoardNumber
    line: Annotated[int, Field(strict=True, gt=0, le=MAX_LINE)]


@dataclass(frozen=True, slots=True, kw_only=True)
class SetClocks:
    """``{"type": "set_clocks"}``: set every e-board clock to the time control;
    ``"board": 3`` only that board's, ``"section": "U12"`` only that section's."""

    __pydantic_config__ = _COMMAND_CONFIG
    TYPE: ClassVar[str] = "set_clocks"
    DEFERRABLE: ClassVar[bool] = False
    board: Positive | None = None
    section: Text | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NextRound:
    """``{"type": "next_round", "section": "U12", "force": false}``: on to the next round.

    ``section`` "" moves every section. Refused while results are not confirmed, unless
    ``force`` (docs/tournament.md).
    """

    __pydantic_config__ = _COMMAND_CONFIG
    TYPE: ClassVar[str] = "next_round"
    DEFERRABLE: ClassVar[bool] = False
    section: Text = ""
    force: Annotated[bool, Field(strict=True)] = False


#: Every arbiter command. ``TYPE`` is its name on the wire; ``DEFERRABLE`` says whether
#: it still holds when carried out later (a relay queues it for an offline daemon) or is
#: about the board as it is now (refused when it would arrive late).
ArbiterCommand = (
    AckAlert | SetResult | ConfirmResult | AcceptPosition | ChooseLine | SetClocks | NextRound
)

#: The command classes by their wire name.
COMMAND_TYPES: dict[str, type[ArbiterCommand]] = {c.TYPE: c for c in get_args(ArbiterCommand)}
_ADAPTERS: dict[str, TypeAdapter[Any]] = {name: TypeAdapter(c) for name, c in COMMAND_TYPES.items()}

#: A client's reference for a command, echoed in the answer.
Ref = str | int | None


class CommandRejected(ValueError):
    """A message that is not exactly a command; ``reason`` is the one line sent back."""

    def __init__(self, reason: str, ref: Ref = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.ref = ref


def command_to_json(command: ArbiterCommand) -> dict[str, Any]:
    """A command as JSON data: ``{"type": "set_result", "board": 3, "result": "1-0"}``
    (an optional field left out, None, is not written: ``{"type": "set_clocks"}``)."""
    values = {
        f.name: value
        for f in dataclasses.fields(command)
        if (value := getattr(command, f.name)) is not None
    }
    return {"type": command.TYPE, **values}


def command_from_json(data: object, ref: Ref = None) -> ArbiterCommand:
    """The inverse of :func:`command_to_json`, for untrusted data (validated by pydantic).

    Raises:
        CommandRejected: not exactly one command; the reason names the field and why
            (``ref`` is carried along for the answer).
    """
    if not isinstance(data, dict):
        raise CommandRejected("a message must be a JSON object", ref)
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in _ADAPTERS:
        raise CommandRejected(f"unknown message type: {kind!r:.60}", ref)
    fields = {name: value for name, value in data.items() if name != "type"}
    try:
        command: ArbiterCommand = _ADAPTERS[kind].validate_python(fields)
    except ValidationError as exc:
        raise CommandRejected(_reason(kind, exc.errors()), ref) from None
    return command


def _reason(kind: str, errors: list[ErrorDetails]) -> str:
    """The first problem as one line: unexpected fields, then missing ones, then values."""
    extra = sorted(str(e["loc"][0]) for e in errors if e["type"] == "unexpected_keyword_argument")
    if extra:
        return f"unexpected field(s) for {kind}: {', '.join(extra)}"
    missing = [str(e["loc"][0]) for e in errors if e["type"] == "missing"]
    if missing:
        return f"missing field for {kind}: {missing[0]}"
    error = errors[0]
    name = str(error["loc"][0]) if error["loc"] else ""
    if error["type"] in ("int_type", "greater_than"):
        return f"'{name}' must be a positive integer"
    if error["type"] == "less_than_equal":
        return f"'{name}' must be a positive integer up to {error.get('ctx', {}).get('le')}"
    if error["type"] == "string_type":
        return f"'{name}' must be a string"
    if error["type"] == "string_too_long":
        return f"'{name}' must be at most {MAX_TEXT} characters"
    if error["type"] == "value_error":
        return str(error.get("ctx", {}).get("error", error["msg"]))
    return f"'{name}': {error['msg']}" if name else error["msg"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandReply:
    """The answer to one arbiter command: ok, or an error with a reason."""

    ok: bool
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class CommandHandler(Protocol):
    """Executes arbiter commands; implemented by the daemon (and by relays)."""

    async def execute(self, command: ArbiterCommand) -> CommandReply: ...


_BOARD_STATE = TypeAdapter(BoardState)
_ALERT = TypeAdapter(Alert)
_ALERTS = TypeAdapter(list[Alert])


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


def alert_to_json(alert: Alert) -> dict[str, Any]:
    """Any version of an alert on the wire: ``{"type": "alert", "id": 7, "state": "open",
    ...}`` (the arbiter channel, MQTT ``<prefix>/alerts``, the webhook's body)."""
    return {"type": "alert", **to_json_dict(alert)}


def alert_from_json(text: str | bytes) -> Alert:
    """The inverse of :func:`alert_to_json` (``type`` may be left out), validated strictly.

    Raises:
        ValueError: not an alert.
    """
    data = decode_untrusted_json(text)
    if not isinstance(data, dict) or data.pop("type", "alert") != "alert":
        raise ValueError("not an alert")
    return _ALERT.validate_json(json.dumps(data), strict=True)


def alerts_from_json(text: str | bytes) -> list[Alert]:
    """A JSON list of alerts (:func:`to_json_dict`), validated strictly as above.

    Raises:
        ValueError: not a list of alerts.
    """
    return _ALERTS.validate_json(text, strict=True)


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
