"""Round PGN assembly, checked by reading the output back with python-chess."""

from __future__ import annotations

import io
from pathlib import Path

import chess.pgn
import pytest

from broadcast.feed.messages import BoardState
from broadcast.feed.pgn import format_clock, game_pgn, round_pgn


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0:00:00"),
        (59.4, "0:00:59"),
        (59.9, "0:01:00"),
        (5400, "1:30:00"),
        (5399.6, "1:30:00"),  # issue 13: both writers once disagreed here
        (5399.9999, "1:30:00"),
        (36061, "10:01:01"),
        (-3, "0:00:00"),
    ],
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


def test_a_board_without_pgn_adds_nothing_to_the_round() -> None:
    played = BoardState(board=2, pgn='[White "A"]\n\n1. e4 *')
    assert game_pgn(BoardState(board=1)) == ""
    assert round_pgn([BoardState(board=1), played]) == game_pgn(played)
