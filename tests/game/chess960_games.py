"""Longer Chess960 games, castled early, for the recovery tests (board memory, restarts)."""

from __future__ import annotations

import chess
import chess.pgn

__all__ = ["GAMES", "chess960_game"]

#: Chess960 start position → its line (SAN); both sides castle at plies 5 and 6.
GAMES = {
    672: (  # BBQRKNNR: king and rook both move, short castling
        "Ne3 Ne6 Nf3 Nf6 O-O O-O d4 d5 c4 c6 Qc2 Qc7 cxd5 cxd5 Nxd5 Nxd5 Qxc7 Ndxc7"
        " e4 Nb5 Bd3 Nd6 e5 Nf5 Bxf5 g6"
    ),
    194: (  # BQNRKBNR: the rook stays on d1, long castling
        "Nb3 Nb6 d4 d5 O-O-O O-O-O e3 e6 Bd3 Bd6 Nf3 Nf6 h3 h6 Rhe1 Rhe8 a3 a6"
    ),
}


def chess960_game(number: int) -> chess.pgn.Game:
    """The line of start position ``number`` as a PGN game (Variant, SetUp, FEN)."""
    board = chess.Board.from_chess960_pos(number)
    game = chess.pgn.Game()
    game.setup(board)
    node: chess.pgn.GameNode = game
    for san in GAMES[number].split():
        node = node.add_variation(board.parse_san(san))
        board.push(node.move)
    return game
