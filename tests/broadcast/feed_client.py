"""Helpers of the broadcast server tests: a feed model, raw HTTP, board states, a handler."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection

from broadcast.feed.commands import ArbiterCommand, CommandReply
from broadcast.feed.messages import BoardState, BoardStatus, MoveInfo

__all__ = [
    "LINE",
    "FeedModel",
    "HttpAnswer",
    "RecordingHandler",
    "http_get",
    "http_request",
    "recv_json",
    "state_after",
]

#: A short main line to build states from (san, uci).
LINE = (
    ("e4", "e2e4"),
    ("e5", "e7e5"),
    ("Nf3", "g1f3"),
    ("Nc6", "b8c6"),
    ("Bb5", "f1b5"),
    ("a6", "a7a6"),
    ("Ba4", "b5a4"),
    ("Nf6", "g8f6"),
)


def state_after(board: int, plies: int, **fields: Any) -> BoardState:
    """Board ``board`` after the first ``plies`` plies of :data:`LINE`, with a PGN."""
    moves = tuple(
        MoveInfo(san=san, uci=uci, clock=5400.0 - 30 * i) for i, (san, uci) in enumerate(LINE)
    )[:plies]
    sans = " ".join(m.san for m in moves)
    defaults: dict[str, Any] = {
        "board": board,
        "white": f"White {board}",
        "black": f"Black {board}",
        "round": "3",
        "moves": moves,
        "last_move": moves[-1].uci if moves else None,
        "pgn": f'[Round "3.{board}"]\n[White "White {board}"]\n\n{sans} *\n',
        "status": BoardStatus.ONLINE,
    }
    defaults.update(fields)
    return BoardState(**defaults)


@dataclass
class FeedModel:
    """What a spectator knows after applying every message it received."""

    boards: dict[int, dict[str, Any]] = field(default_factory=dict)
    seq: int = 0
    seqs: list[int] = field(default_factory=list)
    snapshots: int = 0

    def apply(self, message: dict[str, Any]) -> None:
        """Apply one feed message (snapshot, event, resumed, pong)."""
        kind = message["type"]
        if kind == "snapshot":
            self.boards = {b["board"]: b for b in message["boards"]}
            self.seq = message["seq"]
            self.snapshots += 1
            return
        if kind in ("resumed", "pong"):
            return
        assert message["seq"] == self.seq + 1, (message, self.seq)
        self.seq = message["seq"]
        self.seqs.append(message["seq"])
        self._apply_event(kind, message)

    def _apply_event(self, kind: str, message: dict[str, Any]) -> None:
        board = message["board"]
        if kind == "board":
            self.boards[board] = message["state"]
            return
        state = self.boards[board]
        if kind in ("move", "correction", "takeback"):
            if kind == "move":
                assert len(state["moves"]) == message["ply"]
            state["moves"] = state["moves"][: message["ply"]] + message.get("moves", [])
            state["fen"], state["last_move"] = message["fen"], message["last_move"]
            return
        names = {
            "clock": ("white_clock", "black_clock", "running", "clock_at"),
            "result": ("result", "result_final"),
            "status": ("status", "recovered_plies", "battery", "battery_charging"),
        }[kind]
        for name in names:
            state[name] = message[name]


async def recv_json(ws: ClientConnection, time_limit: float = 5.0) -> dict[str, Any]:
    """The next text message of ``ws``, decoded."""
    async with asyncio.timeout(time_limit):
        text = await ws.recv()
    assert isinstance(text, str)
    data: dict[str, Any] = json.loads(text)
    return data


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpAnswer:
    """A raw HTTP answer: status, headers (lower-cased names) and body."""

    status: int
    headers: dict[str, str]
    body: bytes


async def http_request(port: int, raw: bytes, time_limit: float = 5.0) -> HttpAnswer:
    """Send ``raw`` bytes to the server and read its whole answer."""
    async with asyncio.timeout(time_limit):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(raw)
            await writer.drain()
            data = await reader.read()
        finally:
            writer.close()
            await writer.wait_closed()
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return HttpAnswer(status=int(status_line.split(" ")[1]), headers=headers, body=body)


async def http_get(port: int, path: str, *headers: str, method: str = "GET") -> HttpAnswer:
    """``GET path`` (the path sent exactly as given, never normalised)."""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *headers, "", ""]
    return await http_request(port, "\r\n".join(lines).encode())


@dataclass
class RecordingHandler:
    """A stand-in for the daemon: records every command and answers from ``replies``."""

    received: list[ArbiterCommand] = field(default_factory=list)
    reply: CommandReply = field(default_factory=lambda: CommandReply(ok=True))
    gate: asyncio.Event | None = None

    async def execute(self, command: ArbiterCommand) -> CommandReply:
        """Record ``command``; wait on ``gate`` if set; answer ``reply``."""
        self.received.append(command)
        if self.gate is not None:
            await self.gate.wait()
        return self.reply
