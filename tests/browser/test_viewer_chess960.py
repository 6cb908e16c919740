"""The viewer shows a Chess960 board: the variant beside the round, the castled position."""

from __future__ import annotations

from collections.abc import AsyncIterator

import chess
import pytest
import pytest_asyncio
from playwright.async_api import expect

from broadcast.feed.hub import Hub
from broadcast.feed.messages import MoveInfo
from broadcast.web.server import BroadcastServer
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import wait_for_pieces
from tests.browser.servers import NoArbiter, board_state, free_port

pytestmark = [pytest.mark.browser, LOOP]

#: Chess960 position 3 (BQNNRKRB): both sides castle short at once, king and rook swap.
START = chess.Board.from_chess960_pos(3)


def _castled() -> tuple[chess.Board, tuple[MoveInfo, ...]]:
    board = START.copy()
    moves = []
    for san in ("O-O", "O-O"):
        move = board.parse_san(san)
        moves.append(MoveInfo(san=san, uci=move.uci(), clock=170.0))
        board.push(move)
    return board, tuple(moves)


@pytest_asyncio.fixture(loop_scope="session")
async def server() -> AsyncIterator[BroadcastServer]:
    board, moves = _castled()
    hub = Hub()
    state = board_state(
        1,
        section="Freestyle",
        fen=board.fen(),
        moves=moves,
        last_move=moves[-1].uci,
        variant="chess960",
    )
    hub.publish_board(state)
    started = BroadcastServer(hub, NoArbiter(), port=free_port())
    async with started:
        yield started


async def test_a_chess960_board_is_named_and_drawn(server: BroadcastServer, pages: Pages) -> None:
    page = await pages.open(f"http://127.0.0.1:{server.port}/")
    await expect(page.locator("section.round-section h2")).to_have_text(
        "Freestyle · Round 3 · Chess960"
    )
    card = 'article.card[data-board="1"]'
    expected = {"f1": "white rook", "g1": "white king", "a1": "white bishop"}
    await wait_for_pieces(page, card, {**expected, "f8": "black rook", "g8": "black king"})
