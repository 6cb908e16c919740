"""The wire format of arbiter commands over MQTT (see :mod:`broadcast.relay.remote`).

A command travels as ``{"request": "…", "reply_to": "<topic>", "sent_at": t,
"command": {"type": "set_result", "board": 3, "result": "1-0"}}`` and is answered with
``{"request": "…", "daemon": "<id>", "ok": true, "reason": "", "details": {}}``.
Pure: bytes in, values out.
"""

from __future__ import annotations

from dataclasses import dataclass
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

__all__ = ["CommandRequest", "answer_payload", "read_answer"]


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
