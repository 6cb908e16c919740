"""The round's inputs as journal records and back: the journal's edge (pure).

:func:`entry_of` turns a :data:`~daemon.round.inputs.RoundInput` into the record the round
service appends; :func:`input_of` reads a journalled record back for a replay. These are
the only functions that read or write an input's payload: the observations' payloads are
:mod:`daemon.journal.inputs`, an arbiter command's its JSON form with ``command`` for
``type``, a round change's :meth:`~daemon.round.change.RoundChange.payload`. The records'
form never changes with the code, so every journal ever written replays.
:func:`outcome_records` writes what an input caused (its game events and decisions).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, assert_never

from base.fen import board_fen, board_from_fen
from broadcast.feed.commands import ArbiterCommand, command_from_json, command_to_json
from broadcast.feed.messages import to_json_dict
from daemon.arbiter.decisions import Decision
from daemon.game.events import ClockUpdated, GameEvent
from daemon.journal.inputs import (
    ARBITER,
    BATTERY,
    CLOCK,
    FLOOD,
    JOURNAL,
    LINK,
    PLACEMENT,
    RECOVERY,
    START,
    TICK,
    battery_from_payload,
    battery_payload,
    clock_adds_of,
    clock_from_payload,
    clock_lacking_of,
    clock_payload,
    clock_refused_of,
    clock_set_of,
    link_from_payload,
    link_payload,
    placement_from_payload,
    placement_payload,
)
from daemon.journal.records import Entry
from daemon.journal.store import ROUND
from daemon.round.change import RoundChange
from daemon.round.inputs import (
    ArbiterInput,
    BatteryInput,
    BoardInput,
    ClockInput,
    FloodInput,
    JournalInput,
    LinkInput,
    PlacementInput,
    RecoveryInput,
    RoundChangeInput,
    RoundInput,
    StartInput,
    TickInput,
)
from daemon.round.link_silence import BOARD_SILENCE
from drivers.memory import memory_from_payload, memory_payload
from drivers.observations import ClockSide

__all__ = [
    "command_from_payload",
    "command_payload",
    "entry_of",
    "input_of",
    "outcome_records",
    "payload_of",
]


def entry_of(item: RoundInput) -> Entry:
    """The journal record of an input."""
    return Entry(board=item.board, kind=item.KIND, at=item.at, payload=payload_of(item))


def payload_of(item: RoundInput) -> dict[str, Any]:
    """An input's journal payload (plain JSON data)."""
    match item:
        case PlacementInput() | ClockInput() | LinkInput() | BatteryInput() | RecoveryInput():
            return _board_payload(item)
        case FloodInput():
            return {"flooding": item.flooding, "rate": item.rate}
        case TickInput():
            return {}
        case StartInput():
            return {"silence": item.silence}
        case JournalInput():
            return {"written": item.written, "reason": item.reason, "held": item.held}
        case ArbiterInput():
            return command_payload(item.command)
        case RoundChangeInput():
            return item.change.payload()
        case _:
            assert_never(item)


def _board_payload(item: BoardInput) -> dict[str, Any]:
    match item:
        case PlacementInput():
            return placement_payload(item.sensed)
        case ClockInput():
            return clock_payload(
                item.reading,
                clock_adds=item.increments == "clock",
                clock_refused=item.increments == "refused",
                clock_set=item.clock_set,
                lacking=item.lacking,
            )
        case LinkInput():
            return link_payload(item.link, item.reason, serial=item.serial, port=item.port)
        case BatteryInput():
            return battery_payload(item.battery)
        case RecoveryInput():
            return _recovery_payload(item)
        case _:
            assert_never(item)


def input_of(board: int, kind: str, payload: Mapping[str, Any], at: float) -> RoundInput:
    """The input a journal record holds (the inverse of :func:`entry_of`).

    Raises:
        ValueError: ``kind`` is no input kind, or the payload is not one of its kind.
        KeyError, TypeError: the payload lacks a field, or holds one of the wrong type.
    """
    decode = _DECODERS.get(kind)
    if decode is None:
        raise ValueError(f"not an input kind: {kind}")
    return decode(board, payload, at)


def command_payload(command: ArbiterCommand) -> dict[str, Any]:
    """An arbiter command as a journal payload: its fields, and its name as ``command``."""
    data = command_to_json(command)
    data["command"] = data.pop("type")
    return data


def command_from_payload(payload: Mapping[str, Any]) -> ArbiterCommand:
    """The inverse of :func:`command_payload`."""
    data = {name: value for name, value in payload.items() if name != "command"}
    return command_from_json({"type": payload["command"], **data})


def _recovery_payload(item: RecoveryInput) -> dict[str, Any]:
    """``{"state": "reading"}``, ``{"state": "read", "memory": …, "heal"?: true}`` or
    ``{"state": "failed", "reason": …}``, then the sensed ``"placement"`` (board FEN) and
    the ``"running"`` side when the read ended with them, and the clock reading held
    meanwhile as ``"came"`` (a clock payload with its ``"at"``)."""
    payload: dict[str, Any] = {"state": item.state}
    if item.state == "read":
        assert item.memory is not None
        payload["memory"] = memory_payload(item.memory)
        if item.heal:
            payload["heal"] = True
    elif item.state == "failed":
        payload["reason"] = item.reason
    if item.placement is not None:
        payload["placement"] = board_fen(item.placement)
        payload["running"] = None if item.running is None else item.running.value
    if item.came is not None:
        payload["came"] = {**clock_payload(item.came), "at": item.came.at}
    return payload


def _placement(board: int, payload: Mapping[str, Any], at: float) -> RoundInput:
    return PlacementInput(board, placement_from_payload(payload, at))


def _clock(board: int, payload: Mapping[str, Any], at: float) -> RoundInput:
    adds, refused = clock_adds_of(payload), clock_refused_of(payload)
    return ClockInput(
        board,
        clock_from_payload(payload, at),
        increments="clock" if adds else "refused" if refused else None,
        clock_set=clock_set_of(payload),
        lacking=clock_lacking_of(payload),
    )


def _link(board: int, payload: Mapping[str, Any], at: float) -> RoundInput:
    serial, port = payload.get("serial"), payload.get("port")
    return LinkInput(
        board,
        link_from_payload(payload, at),
        str(payload.get("reason", "")),
        serial=None if serial is None else str(serial),
        port=None if port is None else str(port),
    )


def _battery(board: int, payload: Mapping[str, Any], at: float) -> RoundInput:
    return BatteryInput(board, battery_from_payload(payload, at))


def _recovery(board: int, payload: Mapping[str, Any], at: float) -> RoundInput:
    state = payload["state"]
    placement, running = payload.get("placement"), payload.get("running")
    came = payload.get("came")
    return RecoveryInput(
        board=board,
        at=at,
        # a state no daemon writes is handled as a failed read, as it always was
        state="reading" if state == "reading" else "read" if state == "read" else "failed",
        memory=memory_from_payload(payload["memory"]) if state == "read" else None,
        heal=bool(payload.get("heal")),
        reason=str(payload.get("reason", "")),
        placement=board_from_fen(placement) if isinstance(placement, str) else None,
        running=ClockSide(running) if isinstance(running, str) else None,
        came=clock_from_payload(came, float(came["at"])) if isinstance(came, dict) else None,
    )


def _flood(board: int, payload: Mapping[str, Any], at: float) -> RoundInput:
    return FloodInput(
        board=board, at=at, flooding=bool(payload["flooding"]), rate=payload.get("rate", 0.0)
    )


def _tick(board: int, payload: Mapping[str, Any], at: float) -> RoundInput:
    return TickInput(at=at)


def _start(board: int, payload: Mapping[str, Any], at: float) -> RoundInput:
    return StartInput(at=at, silence=float(payload.get("silence", BOARD_SILENCE)))


def _journal(board: int, payload: Mapping[str, Any], at: float) -> RoundInput:
    return JournalInput(
        at=at,
        written=bool(payload["written"]),
        reason=str(payload["reason"]),
        held=int(payload["held"]),
    )


def _arbiter(board: int, payload: Mapping[str, Any], at: float) -> RoundInput:
    return ArbiterInput(at=at, command=command_from_payload(payload))


def _round(board: int, payload: Mapping[str, Any], at: float) -> RoundInput:
    return RoundChangeInput(at=at, change=RoundChange.from_payload(payload))


_DECODERS: dict[str, Callable[[int, Mapping[str, Any], float], RoundInput]] = {
    PLACEMENT: _placement,
    CLOCK: _clock,
    LINK: _link,
    BATTERY: _battery,
    RECOVERY: _recovery,
    FLOOD: _flood,
    TICK: _tick,
    START: _start,
    JOURNAL: _journal,
    ARBITER: _arbiter,
    ROUND: _round,
}


def outcome_records(
    game_events: Iterable[tuple[int, GameEvent]], decisions: Sequence[Decision]
) -> list[Entry | Decision]:
    """The records of what an input caused: its game events (``game.<Event>``), then its
    decisions. A ``ClockUpdated`` is left out: it is the clock input read by colour, which
    a replay makes again, and at a reading a second per clock it would double the journal.
    """
    entries: list[Entry | Decision] = [
        Entry(board=board, kind="game." + type(event).__name__, at=event.at, payload=payload)
        for board, event in game_events
        if type(event) is not ClockUpdated
        for payload in (to_json_dict(event),)
    ]
    entries.extend(decisions)
    return entries
