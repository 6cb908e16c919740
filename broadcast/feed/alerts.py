"""Arbiter alerts: their kinds, their life cycle, and their one wire form.

Every version of an alert (raised, updated, acknowledged, resolved; docs/alerts.md) goes
out as :func:`alert_to_json` and comes back through :func:`alert_from_json`: the arbiter
channel, MQTT, the webhook, relays and the journal all use them.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter

from broadcast.feed.messages import decode_untrusted_json, to_json_dict

__all__ = [
    "BY_ARBITER",
    "BY_DGTCAST",
    "Alert",
    "AlertKind",
    "AlertState",
    "AlertStep",
    "alert_from_json",
    "alert_to_json",
    "alerts_from_json",
]


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
    RESULT_CONTRADICTS_BOARD = "result_contradicts_board"  # an arbiter's result, not the board's
    MOVES_RECOVERED = "moves_recovered"
    GAP_AMBIGUOUS = "gap_ambiguous"
    LICHESS_REFUSED = "lichess_refused"  # raised by the lichess push, not by a board
    JOURNAL_FAILED = "journal_failed"
    INTERNAL_ERROR = "internal_error"  # a bug the daemon survived (daemon/shell/faults.py)
    BOARDS_CLAIMED = "boards_claimed"  # another daemon claims ours on the broker, at start


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


_ALERT = TypeAdapter(Alert)
_ALERTS = TypeAdapter(list[Alert])


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
