"""Chess960 on emulated boards over ptys, served by a real daemon.

Four boards, one per castling order (king first, rook first, both lifted, king onto the
rook's square), each play the twelve start positions of tests/game/test_chess960.py one
after the other: between them every kind of Chess960 castling, short and long, by both
sides. Two of the boards stand turned round. Each game starts from its start position
alone; the journal and the broadcast PGN must hold every game exactly.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from daemon.journal.store import Journal
from daemon.shell.app import Daemon
from drivers.emulator.castling import CASTLING_ORDERS, CastlingOrder
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.conftest import Serve
from tests.daemon.support import wait_for
from tests.game.chess960_games import chess960_game
from tests.game.test_chess960 import LINES

SPEED = 80.0


def _game(number: int) -> chess.pgn.Game:
    """The line of start position ``number`` as a PGN game (Variant, SetUp, FEN)."""
    return chess960_game(number, LINES)


def _journal_games(path: Path, board: int) -> list[tuple[int | None, list[str]]]:
    """(Chess960 number, main line) of every game the journal holds for ``board``."""
    games: list[tuple[int | None, list[dict[str, Any]]]] = []
    with Journal(path, read_only=True) as journal:
        for record in journal.records(board=board):
            payload = record.payload
            if record.kind == "game.GameStarted":
                games.append((payload.get("chess960"), []))
            elif record.kind == "game.MoveMade" and games:
                line = games[-1][1]
                del line[payload["ply"] - 1 :]
                line.append(payload)
            elif record.kind == "game.MovesWithdrawn" and games:
                del games[-1][1][payload["from_ply"] - 1 :]
    return [(number, [m["uci"] for m in line]) for number, line in games]


def _finished(daemon: Daemon, board: int, plies: int) -> Callable[[], bool]:
    def done() -> bool:
        state = daemon.hub.state(board)
        return state is not None and len(state.moves) == plies

    return done


async def _play_all(
    daemon: Daemon, number: int, board: EmulatedBoard, order: CastlingOrder
) -> None:
    for start in sorted(LINES):
        game = _game(start)
        board.reset_clock()
        await board.play(game, speed=SPEED, castling=order)
        plies = len(LINES[start].split())
        await wait_for(_finished(daemon, number, plies), 20, f"board {number}, start {start}")


async def test_chess960_games_castling_in_every_order(tmp_path: Path, serve: Serve) -> None:
    clock = ClockSettings.from_text("3+2")
    first = chess.BaseBoard(chess.Board.from_chess960_pos(0).board_fen())
    async with (
        EmulatedBoard(clock=clock, seed=1, placement=first) as king,
        EmulatedBoard(clock=clock, seed=2, placement=first, rotate=True) as rook,
        EmulatedBoard(clock=clock, seed=3, placement=first) as both,
        EmulatedBoard(clock=clock, seed=4, placement=first, rotate=True) as via_rook,
    ):
        boards = [king, rook, both, via_rook]
        async with serve(*boards, variant="chess960") as daemon:
            await asyncio.gather(
                *(
                    _play_all(daemon, n, b, order)
                    for n, (b, order) in enumerate(zip(boards, CASTLING_ORDERS, strict=True), 1)
                )
            )
            state = daemon.hub.state(4)
            assert state is not None
            last_pgn, variant = state.pgn, state.variant
    expected = [
        (start, [m.uci() for m in _game(start).mainline_moves()]) for start in sorted(LINES)
    ]
    for number in range(1, 5):
        games = [g for g in _journal_games(tmp_path / "journal.db", number) if g[0] != 0]
        assert games == expected, f"board {number} ({CASTLING_ORDERS[number - 1]})"
    assert variant == "chess960"
    game = chess.pgn.read_game(io.StringIO(last_pgn))
    assert game is not None
    last = sorted(LINES)[-1]
    assert game.headers["Variant"] == "Chess960"
    assert game.headers["SetUp"] == "1"
    assert game.headers["FEN"] == chess.Board.from_chess960_pos(last).fen()
    assert f"Chess960 start position {last}" in last_pgn
    assert [m.uci() for m in game.mainline_moves()] == expected[-1][1]
