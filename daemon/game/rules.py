"""Results the board can decide: the kings gesture, a flag fall, the end of the game.

Pure functions of a placement or a position (FIDE Laws, docs/alerts.md, "The Laws it follows";
docs/protocol.md §9.1).
"""

from __future__ import annotations

import chess

from base.colors import Color
from daemon.game.matching import CENTRE

__all__ = [
    "LIGHT_CENTRE",
    "color_name",
    "continued_from",
    "flag_result",
    "fullmove_after",
    "game_outcome",
    "result_of_kings",
    "win_for",
]

#: The light centre squares d5 and e4 (d4 and e5 are dark).
LIGHT_CENTRE = chess.BB_D5 | chess.BB_E4


def color_name(color: chess.Color) -> Color:
    """``"white"`` or ``"black"``."""
    return "white" if color == chess.WHITE else "black"


def win_for(color: chess.Color) -> str:
    """The PGN result of a win for ``color``."""
    return "1-0" if color == chess.WHITE else "0-1"


def result_of_kings(board: chess.BaseBoard) -> str | None:
    """The result both kings signal from the centre squares, or None (§9.1).

    Both on light squares (d5 + e4) = 1-0, both on dark (d4 + e5) = 0-1, one light and
    one dark = 1/2-1/2. The two kings then stand side by side, which no legal position
    allows, so the gesture can never be mistaken for a position of the game.
    """
    kings = board.kings
    if chess.popcount(kings) != 2 or kings & ~CENTRE:
        return None
    if board.king(chess.WHITE) is None or board.king(chess.BLACK) is None:
        return None
    light = chess.popcount(kings & LIGHT_CENTRE)
    if light == 2:
        return "1-0"
    if light == 0:
        return "0-1"
    return "1/2-1/2"


def flag_result(board: chess.Board, flagged: chess.Color) -> str:
    """FIDE Laws 6.9: the player out of time loses, unless the opponent cannot mate.

    ``has_insufficient_material`` returning True safely means a draw; False may still be
    a dead position the arbiter has to judge, hence flag results are provisional.
    """
    if board.has_insufficient_material(not flagged):
        return "1/2-1/2"
    return win_for(not flagged)


def game_outcome(board: chess.Board) -> tuple[str, str] | None:
    """(result, termination) when the rules end the game without a claim, else None.

    Checkmate (5.1.1), stalemate (5.2.1), dead position by insufficient material (5.2.2),
    fivefold repetition (9.6.1) and the 75-move rule (9.6.2).
    """
    outcome = board.outcome(claim_draw=False)
    if outcome is None:
        return None
    return outcome.result(), outcome.termination.name.lower().replace("_", " ")


#: Boards no game can go on from: a king missing or doubled, the side not to move in
#: check, a pawn on its last rank (python-chess ``Board.status``).
_UNPLAYABLE = (
    chess.STATUS_NO_WHITE_KING
    | chess.STATUS_NO_BLACK_KING
    | chess.STATUS_TOO_MANY_KINGS
    | chess.STATUS_OPPOSITE_CHECK
    | chess.STATUS_PAWNS_ON_BACKRANK
)


def continued_from(
    placement: chess.BaseBoard, game: chess.Board, turn: chess.Color
) -> chess.Board | None:
    """The position ``placement`` gives as a continuation of ``game``, ``turn`` to move.

    For an arbiter accepting the board as it stands (FIDE Laws 7.5: an illegal move that
    was not claimed stands). Castling rights are those ``game`` still had where king and
    rook still stand at home; en passant survives only for an unchanged side to move;
    the move number goes on. None when no game can go on from the board.
    """
    board = chess.Board(None, chess960=game.chess960)
    board.set_piece_map(placement.piece_map())
    board.turn = turn
    board.castling_rights = game.castling_rights
    board.castling_rights = board.clean_castling_rights()
    if turn == game.turn and game.ep_square is not None:
        board.ep_square = game.ep_square
        if not board.has_legal_en_passant():
            board.ep_square = None
    board.fullmove_number = game.fullmove_number
    if game.turn == chess.BLACK and turn == chess.WHITE:
        board.fullmove_number += 1
    if board.status() & _UNPLAYABLE:
        return None
    return board


def fullmove_after(board: chess.Board, plies: int) -> int:
    """The move number ``plies`` plies after ``board``."""
    return (board.ply() + plies) // 2 + 1
