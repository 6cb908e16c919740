"""Helpers of the emulator tests: games read or drawn, what a driver would sense."""

from __future__ import annotations

from pathlib import Path

import chess
import chess.pgn
from hypothesis import strategies as st

from drivers.dgt.events import BoardDump, Event, FieldUpdated
from drivers.emulator.physical import piece_of, square_of

__all__ = ["placement", "random_games", "read_game", "sensors"]


def read_game(path: Path, index: int = 0) -> chess.pgn.Game:
    """Game ``index`` of a PGN file."""
    with path.open() as handle:
        for _ in range(index):
            chess.pgn.skip_game(handle)
        game = chess.pgn.read_game(handle)
    assert game is not None
    return game


def sensors(events: list[Event]) -> list[int]:
    """The fields a driver would believe in: the first dump plus every update after it."""
    fields: list[int] = []
    for event in events:
        if isinstance(event, BoardDump) and not fields:
            fields = list(event.squares)
        elif isinstance(event, FieldUpdated) and fields:
            fields[event.field] = event.piece
    return fields


def placement(fields: list[int], *, rotated: bool = False) -> chess.BaseBoard:
    """The placement 64 DGT field codes show (a board turned by 180° when ``rotated``)."""
    board = chess.BaseBoard(None)
    for field, code in enumerate(fields):
        piece = piece_of(code)
        if piece is not None:
            board.set_piece_at(square_of(field, rotated=rotated), piece)
    return board


@st.composite
def random_games(draw: st.DrawFn, *, min_plies: int = 1, max_plies: int = 40) -> list[chess.Move]:
    """A legal game of random moves (fewer plies when it ends sooner)."""
    board = chess.Board()
    moves = []
    for _ in range(draw(st.integers(min_value=min_plies, max_value=max_plies))):
        legal = sorted(board.legal_moves, key=lambda m: m.uci())
        if not legal:
            break
        move = draw(st.sampled_from(legal))
        moves.append(move)
        board.push(move)
    return moves
