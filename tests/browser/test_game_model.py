"""The game view's pure module (broadcast/static/game.js) in the browser, against python-chess.

The page computes every position of a game from its plies' UCI moves and SAN (no chess
library in the browser); each must be the position python-chess reaches: en passant,
promotions, castling either way, Chess960 castling (the king "takes" its own rook).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import chess
import pytest
import pytest_asyncio

from broadcast.feed.hub import Hub
from broadcast.web.server import BroadcastServer
from tests.browser.conftest import LOOP, Pages
from tests.browser.servers import NoArbiter, board_state

pytestmark = [pytest.mark.browser, LOOP]

STANDARD = "e4 d5 e5 f5 exf6 Nc6 fxg7 Be6 gxh8=Q Qd7 Nf3 O-O-O Be2 a6 O-O"
CHESS960 = ("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1", "O-O O-O-O")
BLACK_FIRST = ("4k3/8/8/8/8/8/4P3/4K3 b - - 0 30", "Kd7 e4 Kc6")

SCENARIO = """
async (games) => {
  const g = await import("/game.js");
  const out = {};
  out.positions = games.map(([fen, moves]) => g.placements(fen, g.plies(moves, fen)));
  const numbered = g.plies(games[2][1], games[2][0]);
  out.numbered = numbered.map((p) => [p.ply, p.number, p.color, p.san]);
  out.rows = g.moveRows(numbered).map(
    (r) => [r.number, r.white && r.white.san, r.black && r.black.san]);
  out.spent = [0.4, 12, 65, 3725, null, -1].map(g.spentText);
  out.endings = [
    g.endingText("1-0", "normal", "Qxf7#"), g.endingText("0-1", "time forfeit", "Kd2"),
    g.endingText("1/2-1/2", "normal", "Kd2"), g.endingText("1-0", "", "Rd1"),
    g.endingText("+-", "", ""), g.endingText("--", "", ""), g.endingText("*", "", ""),
    g.endingText("0-1", "rules infraction", "e4"),
    g.endingText("0-1", "", "Qa5+", 0), g.endingText("1-0", "", "Rd1", 12.5),
    g.endingText("1-0", "normal", "Rd8#", 0),
  ];
  out.losers = [
    g.loserClock("0-1", {white_clock: 0, black_clock: 181}, {}),
    g.loserClock("1-0", {}, {WhiteClock: "0:00:00", BlackClock: "1:02:03"}),
    g.loserClock("1/2-1/2", {white_clock: 0}, {}), g.loserClock("1-0", {}, {}),
  ];
  out.tags = g.pgnTags(
    '[White "Ann \\\\"The Rook\\\\""]\\n[FEN "8/8 w - - 0 1"]\\n\\n1. e4 [x "y"] *');
  out.hashes = [
    g.gameHash({board: 3, round: null}), g.gameHash({board: 3, round: 2, section: ""}),
    g.gameHash({board: 41, round: 2, section: "U 12"}),
  ];
  out.parsed = [...out.hashes, "#board-x", "#round-2-board-3@%E0"].map(g.parseGameHash);
  return out;
}
"""


def _moves(fen: str, sans: str, *, chess960: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """The plies as the feed sends them, and python-chess's placement after each."""
    board = chess.Board(fen, chess960=chess960)
    moves: list[dict[str, Any]] = []
    placements = [board.board_fen()]
    for san in sans.split():
        move = board.parse_san(san)
        moves.append({"san": board.san(move), "uci": move.uci(), "clock": None, "emt": None})
        board.push(move)
        placements.append(board.board_fen())
    return moves, placements


@pytest_asyncio.fixture(loop_scope="session")
async def server() -> AsyncIterator[BroadcastServer]:
    hub = Hub()
    hub.publish_board(board_state(1))
    async with BroadcastServer(hub, NoArbiter(), port=0) as started:
        yield started


async def test_positions_words_and_addresses_of_a_game(
    server: BroadcastServer, pages: Pages
) -> None:
    cases = [
        (chess.STARTING_FEN, STANDARD, False),
        (CHESS960[0], CHESS960[1], True),
        (BLACK_FIRST[0], BLACK_FIRST[1], False),
    ]
    games: list[list[Any]] = []
    expected = []
    for fen, sans, chess960 in cases:
        moves, placements = _moves(fen, sans, chess960=chess960)
        games.append([fen, moves])
        expected.append(placements)
    assert games[1][1][0]["uci"] == "e1g1", "Chess960 castling: the king onto its rook"
    page = await pages.open(f"http://127.0.0.1:{server.port}/")
    out = await page.evaluate(SCENARIO, games)
    assert out["positions"] == expected
    assert out["numbered"] == [
        [1, 30, "black", "Kd7"],
        [2, 31, "white", "e4"],
        [3, 31, "black", "Kc6"],
    ]
    assert out["rows"] == [[30, None, "Kd7"], [31, "e4", "Kc6"]]
    assert out["spent"] == ["0s", "12s", "1m05s", "1h02m", "", ""]
    assert out["endings"] == [
        "checkmate",
        "time forfeit",
        "draw",
        "resignation",
        "White wins by forfeit",
        "double forfeit",
        "",
        "rules infraction",
        "time forfeit",  # the loser's clock at 0 without a Termination tag
        "resignation",
        "checkmate",
    ]
    assert out["losers"] == [0, 3723, None, None]
    assert out["tags"] == {"White": 'Ann "The Rook"', "FEN": "8/8 w - - 0 1"}
    assert out["hashes"] == ["#board-3", "#round-2-board-3", "#round-2-board-41@U%2012"]
    assert out["parsed"] == [
        {"board": 3, "round": None, "section": None},
        {"board": 3, "round": 2, "section": None},
        {"board": 41, "round": 2, "section": "U 12"},
        None,
        None,
    ]
    await pages.close()
