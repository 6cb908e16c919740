"""A LiveChess API client for tests, speaking the envelope as lichess's DGT page does."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import chess
from websockets.asyncio.client import ClientConnection

from broadcast.feed.messages import BoardState, BoardStatus, MoveInfo

__all__ = ["LiveChessClient", "board_state"]

Message = dict[str, Any]


class LiveChessClient:
    """Sends numbered calls; keeps every feed event it reads, by feed id."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._next_id = 100
        self.events: dict[int, list[Message]] = {}
        self.others: list[Message] = []
        self._consumed: dict[int, int] = {}

    async def receive(self, within: float = 20.0) -> Message:
        """The next message; feed events are also kept in :attr:`events`."""
        text = await asyncio.wait_for(self.ws.recv(), within)
        assert isinstance(text, str)
        message: Message = json.loads(text)
        assert set(message) == {"response", "id", "param", "time"}, message
        assert isinstance(message["time"], int)
        if message["response"] == "feed":
            self.events.setdefault(message["id"], []).append(message["param"])
        return message

    async def send_raw(self, data: str | bytes) -> None:
        """Send a frame as it is."""
        await self.ws.send(data)

    async def answer_to(self, call_id: int | None, within: float = 20.0) -> Message:
        """Read until the call or error response with ``call_id``."""
        while True:
            message = await self.receive(within)
            if message["response"] in ("call", "error") and message["id"] == call_id:
                return message
            if message["response"] != "feed":
                self.others.append(message)

    async def call(self, name: str, param: Any = None, *, omit_param: bool = False) -> Message:
        """Send a call and return its answer (a ``call`` or an ``error`` response)."""
        self._next_id += 1
        call_id = self._next_id
        data: Message = {"call": name, "id": call_id}
        if not omit_param:
            data["param"] = param
        await self.ws.send(json.dumps(data))
        return await self.answer_to(call_id)

    async def feed_until(
        self, feed_id: int, predicate: Callable[[Message], bool], within: float = 30.0
    ) -> Message:
        """The first event of ``feed_id`` not yet returned for which ``predicate`` holds.

        Events before it are passed over: each event is looked at by one call only.
        """
        async with asyncio.timeout(within):
            while True:
                kept = self.events.get(feed_id, [])
                start = self._consumed.get(feed_id, 0)
                for index in range(start, len(kept)):
                    if predicate(kept[index]):
                        self._consumed[feed_id] = index + 1
                        return kept[index]
                self._consumed[feed_id] = len(kept)
                await self.receive(within)


def board_state(
    board: int,
    sans: list[str],
    *,
    serial: str | None = "10001",
    start: str = chess.STARTING_FEN,
    **fields: Any,
) -> BoardState:
    """A board state after ``sans`` from ``start``, with a PGN naming the start."""
    position = chess.Board(start)
    moves = []
    for ply, san in enumerate(sans):
        move = position.parse_san(san)
        moves.append(MoveInfo(san=san, uci=move.uci(), clock=600.0 - ply, emt=1.0))
        position.push(move)
    setup = "" if start == chess.STARTING_FEN else f'[SetUp "1"]\n[FEN "{start}"]\n'
    values: dict[str, Any] = {
        "board": board,
        "white": "Carlsen, Magnus",
        "black": "Nepomniachtchi, Ian",
        "round": f"4.{board}",
        "moves": tuple(moves),
        "fen": position.fen(),
        "last_move": moves[-1].uci if moves else None,
        "pgn": f'[Round "4.{board}"]\n{setup}\n{" ".join(sans)} *\n',
        "status": BoardStatus.ONLINE,
        "serial": serial,
        "port": f"/dev/ttyACM{board}",
    }
    values.update(fields)
    return BoardState(**values)
