"""Round PGN assembly, checked by reading the output back with python-chess."""

from __future__ import annotations

import io
from pathlib import Path

import chess.pgn
import pytest

from broadcast.messages import BoardState, MoveInfo
from broadcast.pgn import format_clock, game_pgn, round_pgn


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0:00:00"), (59.9, "0:00:59"), (5400, "1:30:00"), (36061, "10:01:01"), (-3, "0:00:00")],
)
def test_format_clock(seconds: float, text: str) -> None:
    assert format_clock(seconds) == text


def _real_games(games_dir: Path) -> list[chess.pgn.Game]:
    games = []
    for path in sorted(games_dir.glob("*.pgn")):
        with path.open(encoding="utf-8") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                games.append(game)
    assert games
    return games


def _state_from(game: chess.pgn.Game, board: int) -> BoardState:
    """A state without PGN text: the moves of ``game`` with made-up clocks."""
    moves = []
    board_ = game.board()
    for ply, move in enumerate(game.mainline_moves()):
        moves.append(MoveInfo(san=board_.san(move), uci=move.uci(), clock=7200 - 61.5 * ply))
        board_.push(move)
    return BoardState(
        board=board,
        round="4",
        white=game.headers["White"],
        black=game.headers["Black"],
        white_elo=2700,
        moves=tuple(moves),
        result=game.headers["Result"],
    )


def test_built_pgn_reads_back_as_the_same_game(games_dir: Path) -> None:
    for board, game in enumerate(_real_games(games_dir), start=1):
        state = _state_from(game, board)
        text = game_pgn(state)
        assert all(len(line) <= 80 for line in text.splitlines())
        back = chess.pgn.read_game(io.StringIO(text))
        assert back is not None
        assert not back.errors
        assert list(back.mainline_moves()) == list(game.mainline_moves())
        clocks = [node.clock() for node in back.mainline()]
        assert clocks == [float(int(m.clock or 0)) for m in state.moves]
        headers = back.headers
        assert (headers["Round"], headers["White"], headers["Result"]) == (
            f"4.{board}",
            game.headers["White"],
            game.headers["Result"],
        )
        assert headers["WhiteElo"] == "2700"
        assert "BlackElo" not in headers


def test_round_pgn_orders_by_section_then_board(games_dir: Path) -> None:
    games = _real_games(games_dir)
    placed = [("B", 1), ("A", 2), ("A", 1), ("B", 7)]
    states = []
    for (section, board), game in zip(placed, games, strict=False):
        text = str(game).replace('[Round "', f'[Board "{section}{board}"]\n[Round "', 1)
        states.append(BoardState(board=board, section=section, pgn=text + "\n\n\n"))
    text = round_pgn(states)
    handle = io.StringIO(text)
    order = []
    while (read := chess.pgn.read_game(handle)) is not None:
        order.append(read.headers["Board"])
    assert order == ["A1", "A2", "B1", "B7"]
    assert "\n\n\n" not in text  # one blank line between games


def test_given_pgn_is_served_as_is() -> None:
    state = BoardState(board=1, pgn='[White "A"]\n\n1. e4 *')
    assert game_pgn(state) == '[White "A"]\n\n1. e4 *\n'


def test_quotes_in_names_are_escaped_and_black_after_comment_is_numbered() -> None:
    moves = (
        MoveInfo(san="e4", uci="e2e4", clock=60.0),
        MoveInfo(san="e5", uci="e7e5", clock=None),
        MoveInfo(san="Nf3", uci="g1f3", clock=None),
        MoveInfo(san="Nc6", uci="b8c6", clock=None),
    )
    text = game_pgn(BoardState(board=2, white='Ann "The Rook"', moves=moves))
    assert '[White "Ann \\"The Rook\\""]' in text
    assert "1. e4 {[%clk 0:01:00]} 1... e5 2. Nf3 Nc6 *" in text
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    assert game.headers["White"] == 'Ann \\"The Rook\\"'  # python-chess keeps the escapes
    assert [m.uci() for m in game.mainline_moves()] == [m.uci for m in moves]
