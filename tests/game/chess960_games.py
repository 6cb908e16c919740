"""Longer Chess960 games, castled early, for the recovery tests (board memory, restarts)."""

from __future__ import annotations

import chess
import chess.pgn

__all__ = ["GAMES", "REPEATING", "chess960_game"]

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

#: The same games with a knight going and coming back first: the placement after ply 6 is
#: that after ply 2 (one placement twice in the log); both sides castle at plies 9 and 10.
REPEATING = {
    672: "Ne3 Ne6 Nf3 Nf6 Ng1 Ng8 " + GAMES[672].removeprefix("Ne3 Ne6 "),
    194: "Nb3 Nb6 Nc5 Nc4 Nb3 Nb6 " + GAMES[194].removeprefix("Nb3 Nb6 "),
}


def chess960_game(number: int, lines: dict[int, str] = GAMES) -> chess.pgn.Game:
    """The line of start position ``number`` (from ``lines``) as a PGN game (Variant,
    SetUp, FEN)."""
    board = chess.Board.from_chess960_pos(number)
    game = chess.pgn.Game()
    game.setup(board)
    node: chess.pgn.GameNode = game
    for san in lines[number].split():
        node = node.add_variation(board.parse_san(san))
        board.push(node.move)
    return game
