"""Which placements start a game: the standard start position, or any Chess960 one.

A game starts when the board shows a start position, set up either way round (a board
turned by 180° reports every square as ``square ^ 63``, docs/protocol.md §5.2). In
standard chess that is the one start position. In Chess960 it is any of the 960:
pawns on the second and seventh ranks, the pieces behind them with the bishops on
squares of both colours and the king between the rooks, Black mirroring White
(python-chess ``BaseBoard.chess960_pos``, Scharnagl numbering 0-959; 518 is the standard
position). The DGT board marks such a start in its memory as EE_FOURROWS, the standard
one as EE_BEGINPOS(_ROT) (§6).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from daemon.game.line import GameLine
from daemon.game.matching import ROTATED_START, START, PlacementKey, placement_key, rotated
from daemon.game.rules import continued_from

__all__ = ["STANDARD_NUMBER", "StartPosition", "find_start", "set_up_game", "starts_new_game"]

_FOUR_ROWS = chess.BB_RANK_1 | chess.BB_RANK_2 | chess.BB_RANK_7 | chess.BB_RANK_8
#: The Chess960 number of the standard start position.
STANDARD_NUMBER = 518


@dataclass(frozen=True, slots=True, kw_only=True)
class StartPosition:
    """A start position the board shows.

    Attributes:
        rotated: the board stands turned by 180°.
        number: the Chess960 start position (0-959), None in standard chess.
    """

    rotated: bool
    number: int | None = None

    def board(self) -> chess.Board:
        """The game's first position (a Chess960 board for a Chess960 start)."""
        if self.number is None:
            return chess.Board()
        return chess.Board.from_chess960_pos(self.number)

    @property
    def key(self) -> PlacementKey:
        """The placement in real board coordinates."""
        return placement_key(self.board())


def find_start(
    raw: chess.BaseBoard, raw_key: PlacementKey, *, chess960: bool
) -> StartPosition | None:
    """The start position ``raw`` (as the sensors report it) shows, or None.

    Args:
        raw_key: ``placement_key(raw)``, which the caller has at hand.
        chess960: any Chess960 start position counts, not only the standard one.
    """
    if not chess960:
        if raw_key == START:
            return StartPosition(rotated=False)
        if raw_key == ROTATED_START:
            return StartPosition(rotated=True)
        return None
    if raw.occupied != _FOUR_ROWS:
        return None
    number = raw.chess960_pos()
    if number is not None:
        return StartPosition(rotated=False, number=number)
    number = rotated(raw).chess960_pos()
    if number is not None:
        return StartPosition(rotated=True, number=number)
    return None


def starts_new_game(start: StartPosition, game: GameLine, *, rotated: bool, after: int) -> bool:
    """Whether ``start``, seen during ``game`` (on a board ``rotated`` or not), starts a new one.

    It does unless it is the game's own start, the same way round, seen again within
    ``after`` plies: that is a takeback to it.
    """
    return start.rotated != rotated or start.key not in game.keys or game.ply >= after


def set_up_game(
    placement: chess.BaseBoard, *, chess960: bool, turn: chess.Color | None
) -> chess.Board | None:
    """The game a set-up position starts when the arbiter accepts it before any game.

    ``turn`` is to move (White when None); castling rights only where king and rook
    stand at home. None when no game can start from the placement.
    """
    game = chess.Board(chess960=chess960)
    return continued_from(placement, game, chess.WHITE if turn is None else turn)
