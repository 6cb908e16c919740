"""The gap search: the legal sequences from the game's position to the board's placement."""

from __future__ import annotations

from pathlib import Path

import chess
import chess.pgn
import pytest

from daemon.game.gap import search_gap


def _games(games_dir: Path) -> list[chess.pgn.Game]:
    games = []
    for path in sorted(games_dir.glob("*.pgn")):
        with path.open() as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                games.append(game)
    return games


def _gap(game: chess.pgn.Game, start: int, plies: int) -> tuple[chess.Board, chess.Board]:
    moves = list(game.mainline_moves())
    board = game.board()
    for move in moves[:start]:
        board.push(move)
    after = board.copy()
    for move in moves[start : start + plies]:
        after.push(move)
    return board, after


@pytest.mark.parametrize(("start", "plies"), [(10, 1), (10, 2), (10, 3), (14, 4), (20, 6)])
def test_the_sequence_played_is_among_the_shortest_found(
    games_dir: Path, start: int, plies: int
) -> None:
    long_enough = [g for g in _games(games_dir) if len(list(g.mainline_moves())) >= start + plies]
    assert long_enough
    for game in long_enough:
        board, after = _gap(game, start, plies)
        found = search_gap(board, after, to_move=after.turn, max_lines=64)
        played = tuple(after.move_stack[start:])
        assert found.complete
        assert played in found.lines, f"{game.headers['White']}: {played} not found"
        assert all(len(line) == plies for line in found.lines)
        assert len(board.move_stack) == start  # the game is left as it was


def test_one_move_is_one_line_and_castling_is_found() -> None:
    board = chess.Board("r1bqk2r/1ppnbppp/p1p5/4p3/4P3/5N2/PPPP1PPP/RNBQR1K1 w kq - 2 8")
    after = board.copy()
    for uci in ("d2d4", "e5d4", "d1d4", "e8g8"):
        after.push_uci(uci)
    found = search_gap(board, after, to_move=chess.WHITE)
    assert [[m.uci() for m in line] for line in found.lines] == [["d2d4", "e5d4", "d1d4", "e8g8"]]


def test_move_orders_that_transpose_are_all_candidates() -> None:
    board = chess.Board()
    after = chess.Board()
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6"):
        after.push_uci(uci)
    found = search_gap(board, after, to_move=chess.WHITE)
    assert len(found.lines) == 4  # each side's two moves in either order


def test_the_running_side_fixes_the_parity() -> None:
    board = chess.Board()
    after = chess.Board()
    after.push_uci("g1f3")
    # One ply leaves Black to move; White to move needs an even number of plies, and none
    # reaches Nf3 (a knight changes the colour of its square each move). Four plies show
    # it; the default eight end at the node limit, after seconds of search.
    white = search_gap(board, after, to_move=chess.WHITE, max_plies=4)
    assert white.lines == ()
    assert white.complete
    assert len(search_gap(board, after, to_move=chess.BLACK).lines) == 1


def test_a_placement_no_legal_sequence_reaches_gives_nothing() -> None:
    board = chess.Board()
    after = chess.BaseBoard()
    after.remove_piece_at(chess.E1)  # a king gone
    found = search_gap(board, after, max_plies=4)
    assert found.lines == ()
    assert found.complete


def test_the_node_limit_stops_the_search() -> None:
    far = chess.BaseBoard("r1bqkb1r/pppppppp/2n2n2/8/8/2N2N2/PPPPPPPP/R1BQKB1R")
    found = search_gap(chess.Board(), far, max_plies=8, node_limit=50)
    assert not found.complete
    assert len(search_gap(chess.Board(), far).lines) == 4
