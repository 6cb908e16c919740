"""The wire format of arbiter commands over MQTT (see :mod:`broadcast.remote`).

A command travels as ``{"request": "…", "reply_to": "<topic>", "sent_at": t,
"command": {"type": "set_result", "board": 3, "result": "1-0"}}`` and is answered with
``{"request": "…", "daemon": "<id>", "ok": true, "reason": "", "details": {}}``.
Pure: bytes in, values out.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from broadcast.arbiter_channel import CommandRejected, parse_command
from broadcast.feed import encode_json
from broadcast.messages import (
    AcceptPosition,
    AckAlert,
    ArbiterCommand,
    CommandReply,
    ConfirmResult,
    SetClocks,
    SetResult,
)

__all__ = ["CommandRequest", "answer_payload", "command_name", "command_to_json", "read_answer"]

_NAMES: dict[type[ArbiterCommand], str] = {
    AckAlert: "ack_alert",
    SetResult: "set_result",
    ConfirmResult: "confirm_result",
    AcceptPosition: "accept_position",
    SetClocks: "set_clocks",
}


def command_name(command: ArbiterCommand) -> str:
    """The command's name on the wire: ``"set_result"``, ..."""
    return _NAMES[type(command)]


def command_to_json(command: ArbiterCommand) -> dict[str, Any]:
    """A command as the arbiter channel spells it: ``{"type": "set_result", ...}``."""
    values = {f.name: getattr(command, f.name) for f in dataclasses.fields(command)}
    return {"type": _NAMES[type(command)], **values}


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
        """Read a request.

        Raises:
            CommandRejected: not a request, or its command is not exactly a command.
        """
        try:
            data = json.loads(payload)
            request, reply_to = str(data["request"]), str(data["reply_to"])
            sent_at, text = float(data["sent_at"]), encode_json(data["command"])
        except (ValueError, TypeError, KeyError):
            raise CommandRejected("not a command request") from None
        command, _ = parse_command(text)
        return cls(request=request, reply_to=reply_to, sent_at=sent_at, command=command)


def answer_payload(request: str, daemon_id: str, reply: CommandReply) -> bytes:
    data = {
        "request": request,
        "daemon": daemon_id,
        "ok": reply.ok,
        "reason": reply.reason,
        "details": reply.details,
    }
    return encode_json(data).encode()


def read_answer(payload: bytes) -> tuple[str, CommandReply] | None:
    try:
        data = json.loads(payload)
        details = data.get("details") or {}
        reply = CommandReply(ok=bool(data["ok"]), reason=str(data["reason"]), details=details)
        return str(data["request"]), reply
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
