"""How hands castle, in standard chess and in Chess960 (pure).

Castling moves two pieces, and people do it in several orders (docs/protocol.md §12.1):

* ``king``: the king to its square, then the rook (FIDE Laws 3.8.2 ask for this order);
* ``rook``: the rook first, then the king;
* ``both``: both pieces lifted, then put down (king or rook first);
* ``via_rook``: the king is put on its own rook's square first, the Chess960 way of
  showing castling on screens, then the king and the rook go to their squares.

In Chess960 the king ends on g1/c1 and the rook on f1/d1 (or the same on rank 8) wherever
they started; either may already stand there, and the king's square may be the rook's
start square. An order that would put a piece on a square still occupied by the other
one falls back to ``both``. python-chess writes a Chess960 castling move king-to-rook
(``e1h1``); a standard board writes king-to-target (``e1g1``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import chess

__all__ = ["CASTLING_ORDERS", "CastlingOrder", "Hop", "castling_hops", "castling_squares"]

CastlingOrder = Literal["king", "rook", "both", "via_rook"]
#: Every order hands castle in.
CASTLING_ORDERS: tuple[CastlingOrder, ...] = ("king", "rook", "both", "via_rook")


@dataclass(frozen=True, slots=True, kw_only=True)
class Hop:
    """One hand action of a castling: lift the piece on ``square``, or put it there."""

    lift: bool
    square: chess.Square
    piece: chess.Piece


def castling_squares(
    board: chess.Board, move: chess.Move
) -> tuple[chess.Square, chess.Square, chess.Square]:
    """(king target, rook origin, rook target) of a castling move on ``board``."""
    rank = chess.square_rank(move.from_square)
    short = board.is_kingside_castling(move)
    rook_from = move.to_square if board.chess960 else chess.square(7 if short else 0, rank)
    king_to = chess.square(6 if short else 2, rank)
    rook_to = chess.square(5 if short else 3, rank)
    return king_to, rook_from, rook_to


def castling_hops(
    board: chess.Board, move: chess.Move, order: CastlingOrder, *, king_first: bool = True
) -> list[Hop]:
    """The hand actions that castle ``move`` in ``order``.

    Args:
        king_first: with ``both``, which piece is put down first.
    """
    color = board.turn
    king = chess.Piece(chess.KING, color)
    rook = chess.Piece(chess.ROOK, color)
    king_from = move.from_square
    king_to, rook_from, rook_to = castling_squares(board, move)
    if order == "king" and king_to not in (rook_from, king_from):
        return _moved(king, king_from, king_to) + _moved(rook, rook_from, rook_to)
    if order == "rook" and rook_to not in (king_from, rook_from):
        return _moved(rook, rook_from, rook_to) + _moved(king, king_from, king_to)
    lifts = [
        Hop(lift=True, square=king_from, piece=king),
        Hop(lift=True, square=rook_from, piece=rook),
    ]
    if order == "via_rook":
        via = [Hop(lift=False, square=rook_from, piece=king)]
        if rook_from != king_to:
            via += [Hop(lift=True, square=rook_from, piece=king)]
            via += [Hop(lift=False, square=king_to, piece=king)]
        return [*lifts, *via, Hop(lift=False, square=rook_to, piece=rook)]
    places = [
        Hop(lift=False, square=king_to, piece=king),
        Hop(lift=False, square=rook_to, piece=rook),
    ]
    return lifts + (places if king_first else places[::-1])


def _moved(piece: chess.Piece, origin: chess.Square, target: chess.Square) -> list[Hop]:
    if origin == target:
        return []  # Chess960: this piece already stands where castling puts it
    return [Hop(lift=True, square=origin, piece=piece), Hop(lift=False, square=target, piece=piece)]
