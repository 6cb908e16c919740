"""Which position of the game does the board show? Whole-placement matching (§12.2).

Single sensor changes are never read as moves (docs/protocol.md §12.1: pieces are slid
across squares, captures arrive in either order). Instead the whole placement is compared
with the positions reachable from the game, cheapest and most likely first:

1. the current position (nothing happened, a piece adjusted or put back);
2. one legal move ahead;
3. two plies ahead (the opponent replied before the first move was seen);
4. a sibling of the last move: another move from the position before it (a rook slid
   through d8 on its way to e8, castling rook first: the last move was only a stage);
5. an earlier position of the game (a takeback; with repetitions the latest such ply).

Forward matches come before takebacks, so a repeated position is read as progress;
except while the board is already going back (a takeback under way): then a further
step back is preferred to a two-ply continuation that happens to give the same placement
(after 2. Nf3 Nc6, both knights going home is a takeback, not 3. Ng1 Nb8).
Candidate moves are generated only from and to the squares whose contents differ, which
keeps a lifted piece (which matches nothing) cheap. Castling moves are always candidates:
in Chess960 the king or the rook may not move at all (king on g1 castling short with the
rook on h1), and python-chess writes the move king-to-rook (``g1h1``), a square whose
contents may not change either. Equality is python-chess ``BaseBoard``
equality, computed on the eight bitboards (:func:`placement_key`).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import chess

__all__ = [
    "CENTRE",
    "ROTATED_START",
    "START",
    "Match",
    "MatchKind",
    "PlacementKey",
    "changed_squares",
    "find_match",
    "placement_key",
    "rotated",
]

PlacementKey = tuple[int, int, int, int, int, int, int, int]
"""The eight bitboards of a placement: white, black, then pawns … kings."""

#: The four centre squares of the result gesture (docs/protocol.md §9.1).
CENTRE = chess.BB_D4 | chess.BB_D5 | chess.BB_E4 | chess.BB_E5


def placement_key(board: chess.BaseBoard) -> PlacementKey:
    """A hashable value equal for two boards exactly when their placements are equal."""
    return (
        board.occupied_co[chess.WHITE],
        board.occupied_co[chess.BLACK],
        board.pawns,
        board.knights,
        board.bishops,
        board.rooks,
        board.queens,
        board.kings,
    )


def changed_squares(one: PlacementKey, other: PlacementKey) -> chess.Bitboard:
    """The squares whose piece (or emptiness) differs between two placements."""
    mask = 0
    for mine, theirs in zip(one, other, strict=True):
        mask |= mine ^ theirs
    return mask


def rotated(board: chess.BaseBoard) -> chess.BaseBoard:
    """The placement seen from the other side: square ``s`` becomes ``s ^ 63`` (§5.2)."""
    return board.transform(lambda bb: chess.flip_vertical(chess.flip_horizontal(bb)))


#: The start position, and the same placement as a board turned by 180° reports it.
START = placement_key(chess.BaseBoard())
ROTATED_START = placement_key(rotated(chess.BaseBoard()))


class MatchKind(enum.Enum):
    """How the placement relates to the game."""

    CURRENT = "current"
    FORWARD = "forward"
    CORRECTION = "correction"
    TAKEBACK = "takeback"


@dataclass(frozen=True, slots=True, kw_only=True)
class Match:
    """A position of the game the placement equals.

    Attributes:
        kind: how it was found.
        back: plies of the game to withdraw first (1 for a correction, k for a takeback).
        moves: moves to play after withdrawing (one or two forward, one for a correction).
    """

    kind: MatchKind
    back: int = 0
    moves: tuple[chess.Move, ...] = ()


CURRENT = Match(kind=MatchKind.CURRENT)


def find_match(
    board: chess.Board,
    target: PlacementKey,
    history: Sequence[PlacementKey],
    *,
    backwards: bool = False,
) -> Match | None:
    """The position of the game that ``target`` shows, or None if it shows none.

    Args:
        board: the game so far (its move stack is used, and restored, for siblings).
        target: the sensed placement, already in real board coordinates.
        history: the placement key of each position of ``board``'s move stack, root
            first, the current position last.
        backwards: a takeback is under way: earlier positions come before two plies.
    """
    current = placement_key(board)
    if target == current:
        return CURRENT
    changed = changed_squares(current, target)
    one = _one_ply(board, target, changed)
    if one is not None:
        return Match(kind=MatchKind.FORWARD, moves=one)
    earlier = _takeback(history, target) if backwards else None
    if earlier is not None:
        return earlier
    two = _two_plies(board, target, changed)
    if two is not None:
        return Match(kind=MatchKind.FORWARD, moves=two)
    sibling = _sibling(board, target)
    if sibling is not None:
        return Match(kind=MatchKind.CORRECTION, back=1, moves=(sibling,))
    return _takeback(history, target)


def _takeback(history: Sequence[PlacementKey], target: PlacementKey) -> Match | None:
    ply = _earlier_ply(history, target)
    if ply is None:
        return None
    return Match(kind=MatchKind.TAKEBACK, back=len(history) - 1 - ply)


def _candidates(
    board: chess.Board, from_mask: chess.Bitboard, to_mask: chess.Bitboard
) -> Iterator[chess.Move]:
    """Legal moves from and to the masks, then every other legal castling move (castling
    moves the king or the rook, or both, on the mover's back rank: none if no square of
    it is in ``from_mask``)."""
    yield from board.generate_legal_moves(from_mask=from_mask, to_mask=to_mask)
    if not from_mask & (chess.BB_RANK_1 if board.turn == chess.WHITE else chess.BB_RANK_8):
        return
    for move in board.generate_castling_moves():
        inside = chess.BB_SQUARES[move.from_square] & from_mask
        if not (inside and chess.BB_SQUARES[move.to_square] & to_mask):
            yield move


def _one_ply(
    board: chess.Board, target: PlacementKey, changed: chess.Bitboard
) -> tuple[chess.Move] | None:
    """A legal move from ``board`` to ``target``: it starts and ends on changed squares
    (castling: any legal castling).

    A move leaves the mover's piece on the square it goes to and its own square empty,
    castling the king on the g- or c-file: one that ``target`` does not show so is not
    tried. Nor is any when ``target`` shows the mover with another number of pieces
    (a piece lifted), or the opponent with more or with two fewer (a move takes one).
    """
    mover = 0 if board.turn == chess.WHITE else 1
    mine, theirs = target[mover], target[1 - mover]
    if mine.bit_count() != board.occupied_co[board.turn].bit_count():
        return None
    if not 0 <= board.occupied_co[not board.turn].bit_count() - theirs.bit_count() <= 1:
        return None
    empty = ~(mine | theirs)
    for move in _candidates(board, changed, changed):
        if board.is_castling(move):
            file = 6 if move.to_square > move.from_square else 2
            king = chess.square(file, chess.square_rank(move.from_square))
            if not chess.BB_SQUARES[king] & mine & target[7]:
                continue
        elif not (
            chess.BB_SQUARES[move.to_square] & mine and chess.BB_SQUARES[move.from_square] & empty
        ):
            continue
        board.push(move)
        found = placement_key(board) == target
        board.pop()
        if found:
            return (move,)
    return None


def _two_plies(
    board: chess.Board, target: PlacementKey, changed: chess.Bitboard
) -> tuple[chess.Move, chess.Move] | None:
    """Two legal moves to ``target``: the mover's, then the opponent's reply.

    Both sides' pieces must have changed. The first move starts on a changed square and
    ends on one, or on a square where the opponent's reply captured it.
    """
    mover = 0 if board.turn == chess.WHITE else 1
    if target[mover] == board.occupied_co[board.turn]:
        return None
    if target[1 - mover] == board.occupied_co[not board.turn]:
        return None
    landing = changed | target[1 - mover]
    for first in _candidates(board, changed, landing):
        board.push(first)
        reply = _one_ply(board, target, changed_squares(placement_key(board), target))
        board.pop()
        if reply is not None:
            return (first, reply[0])
    return None


def _sibling(board: chess.Board, target: PlacementKey) -> chess.Move | None:
    """Another move from the position before the last move that gives ``target``."""
    if not board.move_stack:
        return None
    last = board.pop()
    try:
        found = _one_ply(board, target, changed_squares(placement_key(board), target))
    finally:
        board.push(last)
    if found is None or found[0] == last:
        return None
    return found[0]


def _earlier_ply(history: Sequence[PlacementKey], target: PlacementKey) -> int | None:
    """The latest earlier ply (index into ``history``) whose placement is ``target``."""
    for index in range(len(history) - 2, -1, -1):
        if history[index] == target:
            return index
    return None
