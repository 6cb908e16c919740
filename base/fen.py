"""FEN text of python-chess boards, read off the bitboards (python-chess asks each square).

The same text as ``BaseBoard.board_fen()`` and ``Board.fen()``, in a fraction of the time:
a placement is written for every sensed change and a FEN for every move, so at hundreds of
boards these are among the daemon's commonest calls (docs/performance.md).
"""

from __future__ import annotations

import chess

__all__ = ["board_fen", "board_from_fen", "position_fen"]

_SYMBOLS = tuple((piece_type, chess.piece_symbol(piece_type)) for piece_type in chess.PIECE_TYPES)


_KINDS = {
    symbol: (piece_type, color)
    for piece_type, lower in _SYMBOLS
    for symbol, color in ((lower, chess.BLACK), (lower.upper(), chess.WHITE))
}


def board_from_fen(fen: str) -> chess.BaseBoard:
    """``chess.BaseBoard(fen)``, the bitboards set at once (python-chess sets each square).

    A FEN as :func:`board_fen` writes it is read here; anything else (promotion marks,
    spaces, errors) goes to python-chess, which reads it or raises ``ValueError``.
    """
    masks = [0] * 7  # by piece type, 1..6
    colors = [0, 0]  # by color
    ranks = fen.split("/")
    if len(ranks) != 8:
        return chess.BaseBoard(fen)
    for rank, text in zip(range(7, -1, -1), ranks, strict=True):
        file, digit = 0, False
        for char in text:
            kind = _KINDS.get(char)
            if kind is not None and file < 8:
                bit = 1 << (rank * 8 + file)
                masks[kind[0]] |= bit
                colors[kind[1]] |= bit
                file, digit = file + 1, False
            elif "1" <= char <= "8" and not digit:
                file, digit = file + int(char), True
            else:
                return chess.BaseBoard(fen)
        if file != 8:
            return chess.BaseBoard(fen)
    board = chess.BaseBoard.empty()
    board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings = masks[1:]
    board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK] = colors[1], colors[0]
    board.occupied = colors[0] | colors[1]
    return board


def board_fen(board: chess.BaseBoard) -> str:
    """``board.board_fen()``, read off the piece bitboards (python-chess asks every square)."""
    cells = ["1"] * 64
    for piece_type, symbol in _SYMBOLS:
        for square in chess.scan_forward(board.pieces_mask(piece_type, chess.BLACK)):
            cells[square ^ 56] = symbol
        for square in chess.scan_forward(board.pieces_mask(piece_type, chess.WHITE)):
            cells[square ^ 56] = symbol.upper()
    ranks = "/".join("".join(cells[start : start + 8]) for start in range(0, 64, 8))
    for run in range(8, 1, -1):
        ranks = ranks.replace("1" * run, str(run))
    return ranks


def position_fen(board: chess.Board) -> str:
    """``board.fen()``: the placement, the side to move, castling rights (X-FEN, as
    python-chess writes them), the en-passant square only when a capture there is legal,
    and the move counters."""
    ep = board.ep_square if board.ep_square is not None and board.has_legal_en_passant() else None
    return " ".join(
        (
            board_fen(board),
            "w" if board.turn == chess.WHITE else "b",
            board.castling_xfen(),
            chess.SQUARE_NAMES[ep] if ep is not None else "-",
            str(board.halfmove_clock),
            str(board.fullmove_number),
        )
    )
