"""Boards without an e-board, standings' numbers, an accepted position (issue 33, item 8).

A board without e-board has no moves to show: once its result is in, the viewer's card
and the hall show the result, not an untouched start position under "1-0".
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import chess
import chess.pgn
import pytest
import pytest_asyncio
from playwright.async_api import expect

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardStatus, MoveInfo
from broadcast.web.server import BroadcastServer
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import screenshot, wait_for_pieces
from tests.browser.servers import NoArbiter, board_state, free_port

pytestmark = [pytest.mark.browser, LOOP]


def _manual(number: int, result: str, *, final: bool = True, section: str = "U12") -> object:
    return board_state(
        number,
        section=section,
        round=f"{2 if section == 'U12' else 3}.{number}",
        status=BoardStatus.MANUAL,
        white_clock=None,
        black_clock=None,
        running=None,
        clock_at=None,
        result=result,
        result_final=final,
    )


@pytest_asyncio.fixture(loop_scope="session")
async def server() -> AsyncIterator[BroadcastServer]:
    """The Open: board 1 an e-board under way, board 2 without one (1-0); the U12 without
    e-boards: 41 1-0, 42 no result, 43 -+ provisional."""
    hub = Hub()
    hub.publish_board(board_state(1, ("e4",)))
    hub.publish_board(_manual(2, "1-0", section="Open"))  # type: ignore[arg-type]
    for number, result, final in ((41, "1-0", True), (42, "*", False), (43, "-+", False)):
        hub.publish_board(_manual(number, result, final=final))  # type: ignore[arg-type]
    async with BroadcastServer(hub, NoArbiter(), port=free_port()) as started:
        yield started


async def test_a_board_without_eboard_shows_its_result_not_a_start_position(
    server: BroadcastServer, pages: Pages, tmp_path: Path
) -> None:
    base = f"http://127.0.0.1:{server.port}"
    page = await pages.open(f"{base}/")  # the U12 has no e-board: every board a card
    cards = {n: page.locator(f'article.card[data-board="{n}"]') for n in (1, 41, 42, 43)}
    await expect(cards[41].locator(".result-card")).to_be_visible()
    await expect(cards[41].locator(".result-card .card-result")).to_have_text("1-0")
    await expect(cards[41].locator(".cg-host")).to_be_hidden()
    await expect(cards[43].locator(".result-card .card-result")).to_have_text("0-1 forfeit")
    await expect(cards[43].locator(".result-card .card-note")).to_contain_text("provisional")
    for number in (1, 42):  # a game under way, and a board still waiting for its result
        await expect(cards[number].locator(".result-card")).to_be_hidden()
        await expect(cards[number].locator(".cg-host")).to_be_visible()
    await screenshot(page, tmp_path / "result-cards.png", full_page=True)

    hall = await pages.open(f"{base}/hall?boards=1,2", width=1920, height=1080)
    card = hall.locator('.hall-card[data-board="2"]')
    await expect(card.locator(".result-card .card-result")).to_have_text("1-0")
    await expect(hall.locator('.hall-card[data-board="1"] .result-card')).to_be_hidden()
    await screenshot(hall, tmp_path / "hall-result-card.png")
    await pages.close()


POINTS = """
async () => {
  const panels = await import("/panels.js");
  return [2, 1.5, 0.5, 10.75, 4.25, 0, 7.3, -1.5, null].map(panels.pointsText);
}
"""


async def test_points_and_tiebreaks_are_written_alike(
    server: BroadcastServer, pages: Pages
) -> None:
    """Issue 33, item 8: never ``1½`` in one column and ``1.5`` in the next."""
    page = await pages.open(f"http://127.0.0.1:{server.port}/")
    assert await page.evaluate(POINTS) == ["2", "1½", "½", "10¾", "4¼", "0", "7.3", "-1½", ""]
    await pages.close()


ACCEPTED = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 24"


def _accepted_state(number: int, sans: tuple[str, ...]) -> object:
    """Board ``number`` going on from a position an arbiter accepted at move 24."""
    position = chess.Board(ACCEPTED)
    moves = []
    for san in sans:
        move = position.parse_san(san)
        moves.append(MoveInfo(san=san, uci=move.uci(), clock=5000.0))
        position.push(move)
    game = chess.pgn.Game()
    game.setup(chess.Board(ACCEPTED))
    game.headers["Round"] = f"3.{number}"
    node: chess.pgn.GameNode = game
    for san in sans:
        node = node.add_variation(node.board().parse_san(san))
    return board_state(
        number,
        fen=position.fen(),
        moves=tuple(moves),
        last_move=moves[-1].uci,
        pgn=str(game) + "\n",
    )


async def test_the_game_view_numbers_moves_from_an_accepted_position(
    server: BroadcastServer, pages: Pages
) -> None:
    """Issue 33, item 8: opened before the arbiter accepted the board's position, the game
    view numbered the moves from 1 and drew them from the start position."""
    hub = server.hub
    hub.publish_board(board_state(5, ("e4", "e5")))
    page = await pages.open(f"http://127.0.0.1:{server.port}/#board-5")
    dialog = page.locator("#detail")
    await expect(dialog.locator("table.moves th")).to_have_text(["1."])
    hub.publish_board(_accepted_state(5, ("Bc4", "Nf6", "Ng5")))  # type: ignore[arg-type]
    await expect(dialog.locator("td.ply .san")).to_have_text(["Bc4", "Nf6", "Ng5"])
    await expect(dialog.locator("table.moves th")).to_have_text(["24.", "25."])
    await wait_for_pieces(page, "#detail", {"c4": "white bishop", "g5": "white knight"})
    await pages.close()


async def test_boards_without_eboard_beside_live_ones_are_a_table(
    server: BroadcastServer, pages: Pages, tmp_path: Path
) -> None:
    """Issue 33, item 9: e-boards on the top boards only; the viewer and the hall lead
    with those, the others are a compact table of pairings and results."""
    base = f"http://127.0.0.1:{server.port}"
    page = await pages.open(f"{base}/")
    open_section = page.locator("section.round-section").first
    await expect(open_section.locator("article.card[data-board='1']")).to_be_visible()
    await expect(open_section.locator("article.card[data-board='2']")).to_have_count(0)
    row = open_section.locator("table.listed-boards tr.listed[data-board='2']")
    await expect(row.locator("td")).to_have_text(["2", "White 2", "1-0", "Black 2"])
    await screenshot(page, tmp_path / "listed-boards.png", full_page=True)

    hall = await pages.open(f"{base}/hall?section=Open", width=1920, height=1080, clock=True)
    grid = hall.locator("#hall-boards")
    await expect(grid).to_have_attribute("data-boards", "1")
    await hall.clock.fast_forward(20_000)
    await expect(grid).to_have_attribute("data-boards", "2")  # the table's screen, by itself
    await expect(grid.locator("tr.listed[data-board='2'] td.result")).to_have_text("1-0")
    await expect(hall.locator("#hall-page")).to_have_text("2 / 2")
    await screenshot(hall, tmp_path / "hall-listed.png")
    await pages.close()
