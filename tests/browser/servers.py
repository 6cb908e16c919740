"""Broadcast servers without a daemon, fed by hand: boards and a refusing arbiter."""

from __future__ import annotations

import socket
import time
from typing import Any

import chess

from broadcast.feed.commands import ArbiterCommand, CommandReply
from broadcast.feed.messages import BoardState, BoardStatus, MoveInfo

__all__ = ["NoArbiter", "board_state", "free_port"]


class NoArbiter:
    """The command handler of a server without a daemon: every command is refused."""

    async def execute(self, command: ArbiterCommand) -> CommandReply:
        return CommandReply(ok=False, reason=f"no daemon here to {type(command).__name__}")


def free_port() -> int:
    """A TCP port nobody listens on now (the server is restarted on it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def board_state(number: int, sans: tuple[str, ...] = (), **changes: Any) -> BoardState:
    """Board ``number`` after ``sans``, with a clock that runs for the side to move."""
    position = chess.Board()
    moves: list[MoveInfo] = []
    for san in sans:
        move = position.parse_san(san)
        moves.append(MoveInfo(san=san, uci=move.uci(), clock=5400.0 - len(moves)))
        position.push(move)
    fields: dict[str, Any] = {
        "board": number,
        "section": "Open",
        "round": f"3.{number}",
        "white": f"White {number}",
        "black": f"Black {number}",
        "white_elo": 2000 + number,
        "fen": position.fen(),
        "moves": tuple(moves),
        "last_move": moves[-1].uci if moves else None,
        "white_clock": 5400.0,
        "black_clock": 5400.0,
        "running": "white" if position.turn == chess.WHITE else "black",
        "clock_at": time.time(),
        "status": BoardStatus.ONLINE,
    }
    fields.update(changes)
    return BoardState(**fields)
