"""When nothing remembers the gap: the legal move sequences that lead to the board (pure).

A board that was out of reach and cannot say what happened meanwhile (it lost power, its
log was overwritten, another board replaced it) shows a placement some plies ahead of the
game. The sequences of legal moves from the game's position to that placement are
searched, shortest first, up to ``max_plies``; the side whose clock runs must be the side
to move after them (the parity of the gap). The shortest length with any sequence wins:
players do not undo their moves within a gap (every longer sequence adds moves that
cancel out, such as a knight going out and back).

The search is a depth-first walk with a lower bound per side: every piece standing on a
square of the placement where the game has none of it must arrive by a move of its own
side (castling moves two pieces at once), and every piece a side has lost must be taken
by a move of the other. Moves that cannot keep within the bound are never tried, so a gap
of eight plies costs milliseconds when each move brings a piece home, and more the more
moves go back and forth; ``node_limit`` bounds the work (``complete`` False when hit).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from daemon.game.matching import PlacementKey, placement_key

__all__ = ["MAX_GAP", "GapSearch", "plies_between", "search_gap"]

#: The longest gap searched, in plies.
MAX_GAP = 8

#: Positions :func:`plies_between` visits at most (about a second of one core).
COUNT_NODES = 40_000

_ALL_PIECES = [(piece_type, color) for color in chess.COLORS for piece_type in chess.PIECE_TYPES]


@dataclass(frozen=True, slots=True, kw_only=True)
class GapSearch:
    """The sequences found.

    Attributes:
        lines: every legal sequence of the shortest length that reaches the placement
            (at most ``max_lines``), each a tuple of moves from the game's position.
        complete: False when the node limit stopped the search (``lines`` may miss some).
    """

    lines: tuple[tuple[chess.Move, ...], ...]
    complete: bool


def search_gap(
    board: chess.Board,
    target: chess.BaseBoard,
    *,
    to_move: chess.Color | None = None,
    max_plies: int = MAX_GAP,
    max_lines: int = 24,
    node_limit: int = 400_000,
) -> GapSearch:
    """The shortest legal sequences from ``board`` to the placement ``target``.

    Args:
        board: the game's position (its move stack is kept as it is).
        target: the placement on the board, in real coordinates.
        to_move: the side whose clock runs (the side to move after the gap); None = any.
        max_plies: the longest gap tried.
        max_lines: stop collecting after this many sequences.
        node_limit: positions visited at most, over every length.
    """
    walk = _Walk(board.copy(), target, max_lines=max_lines, node_limit=node_limit)
    for plies in range(1, max_plies + 1):
        after = board.turn if plies % 2 == 0 else not board.turn
        if to_move is not None and after != to_move:
            continue
        walk.search(plies)
        if walk.lines or walk.exhausted:
            break
    return GapSearch(lines=tuple(walk.lines), complete=not walk.exhausted)


def plies_between(board: chess.Board, target: chess.BaseBoard, to_move: chess.Color) -> int | None:
    """How many plies lead from ``board`` to ``target`` with ``to_move`` to move: the
    shortest legal sequence's length; None when none of at most ``max_plies`` is found
    (an illegal move, knocked pieces, a longer gap): the plies cannot be counted."""
    found = search_gap(board, target, to_move=to_move, max_lines=1, node_limit=COUNT_NODES)
    return len(found.lines[0]) if found.lines else None


class _Walk:
    def __init__(
        self, board: chess.Board, target: chess.BaseBoard, *, max_lines: int, node_limit: int
    ) -> None:
        self.board = board
        self.key: PlacementKey = placement_key(target)
        self.target = target
        self.lines: list[tuple[chess.Move, ...]] = []
        self.max_lines = max_lines
        self.nodes_left = node_limit
        self.exhausted = False
        self._line: list[chess.Move] = []
        self._counts = {pc: len(target.pieces(*pc)) for pc in _ALL_PIECES}
        self._dead: set[tuple[object, ...]] = set()  # states with no sequence below

    def search(self, plies: int) -> None:
        self._dfs(plies)

    def _dfs(self, left: int) -> bool:
        """Walk ``left`` more plies; True if a sequence was found below."""
        if self.exhausted or len(self.lines) >= self.max_lines:
            return True
        self.nodes_left -= 1
        if self.nodes_left < 0:
            self.exhausted = True
            return True
        board = self.board
        if left == 0:
            if placement_key(board) == self.key:
                self.lines.append(tuple(self._line))
                return True
            return False
        state = (placement_key(board), board.turn, board.castling_rights, board.ep_square, left)
        if state in self._dead:
            return False
        mask = self._useful(left)
        found = False
        if mask is not None:
            for move in list(board.generate_legal_moves(to_mask=mask)):
                board.push(move)
                self._line.append(move)
                found = self._dfs(left - 1) or found
                self._line.pop()
                board.pop()
        if not found:
            self._dead.add(state)
        return found

    def _needed(self, color: chess.Color) -> chess.Bitboard:
        """Squares where the placement wants a piece of ``color`` the board lacks."""
        board, mask = self.board, 0
        for piece_type in chess.PIECE_TYPES:
            wanted = self.target.pieces_mask(piece_type, color)
            mask |= wanted & ~board.pieces_mask(piece_type, color)
        return mask

    def _useful(self, left: int) -> chess.Bitboard | None:
        """Where the side to move may move to within the bound; None: the bound is broken.

        Each side must bring home every piece missing on its square (castling brings
        two) and take every piece the other side has lost, within its moves of ``left``.
        A side with no move to spare must make one that does what is needed.
        """
        board = self.board
        mask: chess.Bitboard | None = None
        for color, moves in ((board.turn, (left + 1) // 2), (not board.turn, left // 2)):
            needed = self._needed(color)
            arrivals = chess.popcount(needed)
            if board.has_castling_rights(color):
                arrivals = max(0, arrivals - 1)
            captures = self._lost(not color)
            if max(arrivals, captures) > moves:
                return None
            if color != board.turn:
                continue
            mask = chess.BB_ALL
            if arrivals == moves:
                # python-chess names a castling move by its rook's square in to_mask
                mask &= needed | (board.castling_rights & board.occupied_co[color])
            if captures == moves:
                ep = chess.BB_SQUARES[board.ep_square] if board.ep_square is not None else 0
                mask &= board.occupied_co[not color] | ep
        return mask

    def _lost(self, color: chess.Color) -> int:
        """Pieces of ``color`` the placement has fewer of than the board (to be taken)."""
        board = self.board
        have = chess.popcount(board.occupied_co[color])
        want = sum(self._counts[(piece_type, color)] for piece_type in chess.PIECE_TYPES)
        return max(0, have - want)
