"""The hall screen (/hall) against a real broadcast server fed by hand.

A few boards large with clocks a hall reads from five metres, cycling through the round
when more boards are chosen than fit, a section or a list of boards chosen in the address,
and no one at the screen: it comes back by itself after the server was away.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import expect

from broadcast.feed.hub import Hub
from broadcast.web.server import BroadcastServer
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import screenshot, wait_for_pieces
from tests.browser.servers import NoArbiter, board_state, free_port

pytestmark = [pytest.mark.browser, LOOP]

#: 5 m away, a character needs about 25 mm; a 55-inch full-HD screen has 0.63 mm pixels.
READABLE_PX = 40


@pytest_asyncio.fixture(loop_scope="session")
async def server() -> AsyncIterator[BroadcastServer]:
    """Boards 1-6 of the Open and 41-42 of the U12, on a fixed free port."""
    hub = Hub()
    for number in range(1, 7):
        hub.publish_board(board_state(number, ("e4",) if number == 1 else ()))
    for number in (41, 42):
        hub.publish_board(board_state(number, section="U12", round=f"2.{number}"))
    async with BroadcastServer(hub, NoArbiter(), port=free_port()) as started:
        yield started


async def test_the_hall_cycles_through_the_boards_and_reads_from_afar(
    server: BroadcastServer, pages: Pages, tmp_path: Path
) -> None:
    base = f"http://127.0.0.1:{server.port}"
    # a screen a minute, on the page's own clock: fast-forwarded, not waited for
    page = await pages.open(
        f"{base}/hall?section=Open&per=4&every=60", width=1920, height=1080, clock=True
    )
    grid = page.locator("#hall-boards")
    await expect(grid).to_have_attribute("data-boards", "1,2,3,4")
    await expect(page.locator("#hall-page")).to_have_text("1 / 2")
    await wait_for_pieces(page, '.hall-card[data-board="1"]', {"e2": None, "e4": "white pawn"})
    clock = page.locator('.hall-card[data-board="1"] .clock.running')
    await expect(clock).to_be_visible()
    height = await clock.evaluate("(node) => parseFloat(getComputedStyle(node).fontSize)")
    assert height >= READABLE_PX, f"a clock {height} px high is not read from five metres"
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1920
    board = await page.locator('.hall-card[data-board="1"] cg-board').bounding_box()
    assert board is not None
    assert board["width"] >= 400, "boards are shown large"
    await screenshot(page, tmp_path / "hall.png")
    await page.clock.fast_forward(45_000)  # the default 20 s would have turned it by now
    assert await grid.get_attribute("data-boards") == "1,2,3,4", "turned before its minute"
    await page.clock.fast_forward(15_000)
    await expect(grid).to_have_attribute("data-boards", "5,6")  # then the rest, by itself
    await expect(page.locator("#hall-page")).to_have_text("2 / 2")
    await page.clock.fast_forward(60_000)
    await expect(grid).to_have_attribute("data-boards", "1,2,3,4")

    every = await pages.open(f"{base}/hall?per=4", width=1280, height=720, clock=True)
    await expect(every.locator("#hall-boards")).to_have_attribute("data-boards", "1,2,3,4")
    await expect(every.locator("#hall-title")).to_have_text("Open · Round 3")
    await every.clock.fast_forward(20_000)  # the default period
    await expect(every.locator("#hall-boards")).to_have_attribute("data-boards", "5,6,41,42")
    await expect(every.locator("#hall-title")).to_have_text("Open · Round 3 / U12 · Round 2")
    await every.clock.fast_forward(20_000)
    await expect(every.locator("#hall-boards")).to_have_attribute("data-boards", "1,2,3,4")
    await expect(every.locator("#hall-title")).to_have_text("Open · Round 3")

    chosen = await pages.open(f"{base}/hall?boards=42,3", width=1280, height=720)
    await expect(chosen.locator("#hall-boards")).to_have_attribute("data-boards", "3,42")
    u12 = await pages.open(f"{base}/hall?section=U12", width=1280, height=720)
    await expect(u12.locator("#hall-boards")).to_have_attribute("data-boards", "41,42")
    await expect(u12.locator("#hall-title")).to_have_text("U12 · Round 2")
    await pages.close()


async def test_the_hall_comes_back_by_itself(server: BroadcastServer, pages: Pages) -> None:
    page = await pages.open(f"http://127.0.0.1:{server.port}/hall?boards=2", width=1280, height=720)
    await expect(page.locator("body")).to_have_attribute("data-connection", "open")
    pages.tolerate("WebSocket connection to")  # refused while the server is away
    await server.close()
    await expect(page.locator("body")).not_to_have_attribute("data-connection", "open")
    server.hub.publish_board(board_state(2, ("d4", "Nf6")))  # played meanwhile
    await server.start()
    await wait_for_pieces(
        page, '.hall-card[data-board="2"]', {"d4": "white pawn", "f6": "black knight"}
    )
    await expect(page.locator("body")).to_have_attribute("data-connection", "open")
    await pages.close()


#: For each card: the px its content lacks (cut at its bottom or the screen's), the
#: bottom of its lowest clock and the screen's height.
CUT = """
() => [...document.querySelectorAll(".hall-card")].map((card) => {
  const clocks = [...card.querySelectorAll(".clock")].map((c) => c.getBoundingClientRect().bottom);
  return {board: card.dataset.board, cut: card.scrollHeight - card.clientHeight,
          clock: Math.max(...clocks), card: card.getBoundingClientRect().bottom,
          screen: window.innerHeight};
})
"""


@pytest.mark.parametrize(("width", "height"), [(1080, 1920), (360, 780)])
async def test_a_portrait_hall_screen_shows_every_clock_whole(
    server: BroadcastServer, pages: Pages, tmp_path: Path, width: int, height: int
) -> None:
    """A screen hung upright (and a phone): names, ratings and clocks wrap onto more
    lines than on a wide screen; the boards are made smaller, no clock is cut."""
    page = await pages.open(
        f"http://127.0.0.1:{server.port}/hall?section=Open&per=4&every=600",
        width=width,
        height=height,
    )
    await expect(page.locator("#hall-boards")).to_have_attribute("data-boards", "1,2,3,4")
    await expect(page.locator('.hall-card[data-board="4"] .clock.running')).to_be_visible()
    await screenshot(page, tmp_path / f"hall-{width}x{height}.png")
    for card in await page.evaluate(CUT):
        assert card["cut"] <= 0, f"board {card['board']}: {card['cut']} px of its card cut"
        assert card["clock"] <= card["card"] + 0.5, f"board {card['board']}: a clock cut"
        assert card["card"] <= card["screen"], f"board {card['board']} below the screen"
    clock = page.locator('.hall-card[data-board="1"] .clock').first
    size = await clock.evaluate("(node) => parseFloat(getComputedStyle(node).fontSize)")
    if width > 1000:
        assert size >= READABLE_PX, f"a clock {size} px high is not read from five metres"
    await pages.close()


async def test_the_boards_start_under_the_title_without_a_band(
    server: BroadcastServer, pages: Pages
) -> None:
    """Issue 33, item 8: boards that fill the width leave the spare height below them."""
    base = f"http://127.0.0.1:{server.port}"
    page = await pages.open(f"{base}/hall?section=Open&per=4&every=600", width=1920, height=1080)
    await expect(page.locator("#hall-boards")).to_have_attribute("data-boards", "1,2,3,4")
    await wait_for_pieces(page, '.hall-card[data-board="1"]', {"e4": "white pawn"})
    head = await page.locator(".hall-head").bounding_box()
    card = await page.locator('.hall-card[data-board="1"]').bounding_box()
    assert head is not None
    assert card is not None
    band = card["y"] - (head["y"] + head["height"])
    assert band < 40, f"{band:.0f} px empty between the title and the boards"
    await pages.close()
