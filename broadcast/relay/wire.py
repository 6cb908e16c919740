"""The wire format of arbiter commands over MQTT (see :mod:`broadcast.relay.remote`).

A command travels as ``{"request": "…", "reply_to": "<topic>", "sent_at": t,
"command": {"type": "set_result", "board": 3, "result": "1-0"}}`` and is answered with
``{"request": "…", "daemon": "<id>", "ok": true, "reason": "", "details": {}}`` (with an
event key both carry their signature, ``auth``). A daemon with a key carries out each
signed request once: :class:`ReplayGuard`. Pure: bytes in, values out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from broadcast.feed.commands import (
    ArbiterCommand,
    CommandRejected,
    CommandReply,
    command_from_json,
    command_to_json,
)
from broadcast.feed.events import encode_json

__all__ = ["CommandRequest", "ReplayGuard", "answer_payload", "read_answer"]


class _RequestData(BaseModel):
    request: str
    reply_to: str
    sent_at: float
    command: dict[str, Any]


class _AnswerData(BaseModel):
    request: str
    ok: bool
    reason: str
    details: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandRequest:
    """One command on its way to a daemon."""

    request: str
    reply_to: str
    sent_at: float
    command: ArbiterCommand

    def to_payload(self) -> bytes:
        """The request's JSON."""
        data = {
            "request": self.request,
            "reply_to": self.reply_to,
            "sent_at": self.sent_at,
            "command": command_to_json(self.command),
        }
        return encode_json(data).encode()

    @classmethod
    def from_payload(cls, payload: bytes) -> CommandRequest:
        """Read a request (untrusted: validated by pydantic and the command codec).

        Raises:
            CommandRejected: not a request, or its command is not exactly a command.
        """
        try:
            data = _RequestData.model_validate_json(payload)
        except ValidationError:
            raise CommandRejected("not a command request") from None
        command = command_from_json(data.command)
        return cls(
            request=data.request, reply_to=data.reply_to, sent_at=data.sent_at, command=command
        )


def answer_payload(request: str, daemon_id: str, reply: CommandReply) -> bytes:
    """A daemon's answer to ``request``."""
    data = {
        "request": request,
        "daemon": daemon_id,
        "ok": reply.ok,
        "reason": reply.reason,
        "details": reply.details,
    }
    return encode_json(data).encode()


def read_answer(payload: bytes) -> tuple[str, CommandReply] | None:
    """The request an answer is for, and the answer; None when it is no answer."""
    try:
        data = _AnswerData.model_validate_json(payload)
    except ValidationError:
        return None
    reply = CommandReply(ok=data.ok, reason=data.reason, details=data.details or {})
    return data.request, reply


@dataclass
class ReplayGuard:
    """Which signed requests a daemon has carried out: each one once, none from before
    what it remembers nor from far ahead of its clock (docs/deployment.md, "The event key").

    A signed request read off the broker and sent again is refused: its id is known, or it
    is older than the oldest one remembered (``floor``, raised as old ones are forgotten)
    or than ``window``. Kept in a file by the daemon (:meth:`to_json`), so a restart forgets
    nothing.

    Attributes:
        window: seconds a request may take to arrive (a daemon away that long misses it).
        ahead: seconds a request's ``sent_at`` may be ahead of the daemon's clock.
        kept: request ids remembered at most.
    """

    window: float = 86_400.0
    ahead: float = 300.0
    kept: int = 1024
    floor: float = 0.0
    seen: dict[str, float] = field(default_factory=dict)

    def refusal(self, request: CommandRequest, now: float) -> str | None:
        """Why ``request`` may not be carried out now; None: it may."""
        sent = request.sent_at
        if sent > now + self.ahead:
            return f"sent {sent - now:.0f} s ahead of this daemon's clock (keep the PCs on NTP)"
        if request.request in self.seen:
            return "carried out already: a command is carried out once (a replay?)"
        if sent < now - self.window or sent <= self.floor:
            return (
                f"sent {now - sent:.0f} s ago, before what this daemon remembers (a replay,"
                " or it was away too long): send it again"
            )
        return None

    def record(self, request: CommandRequest, now: float) -> None:
        """``request`` was carried out: it never is again."""
        self.seen[request.request] = request.sent_at
        for name, sent in list(self.seen.items()):
            if sent < now - self.window:  # refused by its time from now on
                del self.seen[name]
        while len(self.seen) > self.kept:
            oldest = min(self.seen, key=self.seen.__getitem__)
            self.floor = max(self.floor, self.seen.pop(oldest))

    def to_json(self) -> str:
        """What to keep across restarts."""
        return json.dumps({"floor": self.floor, "seen": self.seen}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ReplayGuard:
        """A guard kept by :meth:`to_json`.

        Raises:
            ValueError: not one.
        """
        data = _GuardData.model_validate_json(text)
        return cls(floor=data.floor, seen=dict(data.seen))


class _GuardData(BaseModel):
    floor: float
    seen: dict[str, float]
