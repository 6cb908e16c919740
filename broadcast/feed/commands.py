"""Arbiter commands: what arbiters send back, and their one wire codec.

Commands arrive as :data:`ArbiterCommand` values and are executed by a
:class:`CommandHandler` that the daemon (or a relay) provides. :func:`command_to_json`
and :func:`command_from_json` are the one codec (untrusted data, validated by pydantic,
with one-line reasons); the arbiter channel, the relays' command topics and the journal
all use it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Protocol, get_args

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from broadcast.feed.messages import MAX_BOARD, MAX_ID, NOT_UNICODE, RESULTS

__all__ = [
    "COMMAND_TYPES",
    "MAX_LINE",
    "MAX_TEXT",
    "AcceptPosition",
    "AckAlert",
    "ArbiterCommand",
    "BoardNumber",
    "ChooseLine",
    "CommandHandler",
    "CommandRejected",
    "CommandReply",
    "ConfirmResult",
    "NextRound",
    "Positive",
    "RebuildFromMemory",
    "Ref",
    "SetClocks",
    "SetResult",
    "Text",
    "command_from_json",
    "command_to_json",
]

# Adding a command is adding one class here (a ``TYPE``, its fields, ``DEFERRABLE``) and
# its name to ``ArbiterCommand``; the wire codec below, the arbiter channel, the relays
# and the journal all take it from there. The daemon then carries it out in
# ``daemon/round/core.py`` (mypy checks that every command has a case there).

#: The highest candidate line of a gap an arbiter may choose.
MAX_LINE = 1000
#: The longest text field of a command (a section's name).
MAX_TEXT = 200


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
class RebuildFromMemory(_BoardCommand):
    """``{"type": "rebuild_from_memory", "board": 3}``: read the board's memory again
    now and recover the moves since the last agreed position (docs/alerts.md)."""

    TYPE: ClassVar[str] = "rebuild_from_memory"
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
    AckAlert
    | SetResult
    | ConfirmResult
    | AcceptPosition
    | RebuildFromMemory
    | ChooseLine
    | SetClocks
    | NextRound
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
