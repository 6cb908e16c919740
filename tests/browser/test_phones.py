"""Every page fits a phone 360 and 390 px wide in every state, with the longest texts.

Names of 33 characters (a TRF's whole name field), six-figure Elo-less boards with
three-digit numbers, "double forfeit" marked provisional, "board offline", clocks over
an hour: the boards, a game open, the rounds, the standings, the hall screen and the
arbiter page, at both widths. No page may scroll sideways, whatever is on screen.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Page, expect

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardStatus, Evaluation
from broadcast.web.server import BroadcastServer
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import screenshot, wait_for_pieces
from tests.browser.servers import NoArbiter, board_state
from tests.browser.test_arbiter_page import sign_in

pytestmark = [pytest.mark.browser, LOOP]

LONG_WHITE = "Wolfeschlegelsteinhausen, Hubert"
LONG_BLACK = "Oxenstierna-Lindqvist, Maja Greta"
STATES = [
    {"result": "--", "result_final": False, "status": BoardStatus.OFFLINE},
    {"result": "+-", "result_final": True, "status": BoardStatus.OUT_OF_SYNC},
    {"result": "1/2-1/2", "result_final": False, "status": BoardStatus.CATCHING_UP},
    {"result": "*", "status": BoardStatus.WAITING},
]
TOKEN = "a-long-arbiter-secret"
MOVES = ("e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6")
#: The engine's longest line as the viewer shows it, and a mate.
LINE = ("Bg5", "e6", "f4", "Qb6", "Qd2", "Qxb2", "Rb1", "Qa3", "e5", "h6", "Bh4", "dxe5")


@pytest_asyncio.fixture(loop_scope="session")
async def server() -> AsyncIterator[BroadcastServer]:
    hub = Hub()
    for index, changes in enumerate(STATES):
        number = 148 + index
        hub.publish_board(
            board_state(
                number,
                MOVES,
                section="Championship Reserves Under 2000",
                round=f"11.{number}",
                white=LONG_WHITE,
                black=LONG_BLACK,
                white_elo=2999,
                black_elo=2999,
                white_clock=5399.0,
                black_clock=5399.0,
                **changes,
            )
        )
    public = Hub()  # the evaluations' hub: never the arbiter channel's
    async with BroadcastServer(
        hub, NoArbiter(), port=0, arbiter_token=TOKEN, public_hub=public
    ) as started:
        for number in range(148, 148 + len(STATES)):
            fen = public.state(number).fen  # type: ignore[union-attr]
            mate = -12 if number == 149 else None
            cp = None if mate else -1234
            evaluation = Evaluation(board=number, fen=fen, cp=cp, mate=mate, depth=42, line=LINE)
            public.publish_evaluation(evaluation)
        yield started


async def assert_fits(page: Page, width: int, what: str) -> None:
    wide = await page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{what}: the page is {wide} px wide on a {width} px phone"
    over = await page.evaluate(
        """(width) => {
          const clipped = (node) => {  // cut off by an ancestor that ends inside the screen
            for (let up = node.parentElement; up !== null; up = up.parentElement) {
              if (getComputedStyle(up).overflowX !== "visible"
                  && up.getBoundingClientRect().right <= width + 0.5) return true;
            }
            return false;
          };
          return [...document.querySelectorAll("body *")]
            .filter((node) => node.getClientRects().length > 0)
            .filter((node) => node.getBoundingClientRect().right > width + 0.5)
            .filter((node) => !clipped(node))
            .map((node) => node.tagName + "." + node.className).slice(0, 5);
        }""",
        width,
    )
    assert not over, f"{what}: drawn beyond {width} px: {over}"
    sideways = await page.evaluate(
        """() => [...document.querySelectorAll("body, body *")]
            .filter((node) => ["auto", "scroll"].includes(getComputedStyle(node).overflowX))
            .filter((node) => node.scrollWidth > node.clientWidth + 1)
            .map((node) => node.tagName + "#" + node.id + "." + node.className)"""
    )
    assert not sideways, f"{what}: these scroll sideways: {sideways}"


#: The phones' widths: the viewer and the arbiter page are loaded at the first and
#: narrowed to the next (laid out again, not loaded again).
PHONES = (390, 360)


async def check_viewer(page: Page, width: int, tmp_path: Path) -> None:
    """The boards, each game open and at its start, the rounds and the standings."""
    await page.locator('nav.views a[data-view="boards"]').click()
    await expect(page.locator(".card")).to_have_count(len(STATES))
    await expect(page.locator('.card[data-board="148"] .result')).to_have_text("double forfeit")
    await assert_fits(page, width, "the boards")
    await screenshot(page, tmp_path / f"phone-{width}.png", full_page=True)
    for number in range(148, 148 + len(STATES)):
        await page.locator(f'.card[data-board="{number}"]').click()
        dialog = page.locator("#detail")
        await expect(dialog).to_have_attribute("data-board", str(number))
        await expect(dialog.locator("td.ply")).to_have_count(len(MOVES))
        await expect(dialog.locator(".eval-line")).to_contain_text(" d42 Bg5 e6")
        await assert_fits(page, width, f"board {number} open")
        await page.keyboard.press("Home")
        await wait_for_pieces(page, "#detail", {"e2": "white pawn", "g1": "white knight"})
        await expect(dialog.locator(".eval-line")).to_be_hidden()
        await assert_fits(page, width, f"board {number} at its start")
        if number == 148:
            await screenshot(page, tmp_path / f"phone-{width}-game.png")
        await page.keyboard.press("Escape")
        await expect(dialog).to_be_hidden()
    for view in ("rounds", "standings"):
        await page.locator(f'nav.views a[data-view="{view}"]').click()
        await expect(page.locator(f"#{view}")).to_be_visible()
        await assert_fits(page, width, view)
        if view == "rounds":
            shown = page.locator('#rounds tr.game[data-board="148"] td.result')
            await expect(shown).to_have_text("double forfeit")
            cut = await shown.evaluate("(cell) => cell.scrollWidth - cell.clientWidth")
            assert cut <= 0, f"the rounds' result 'double forfeit ?' is cut by {cut} px"


async def test_every_view_fits_a_phone(
    server: BroadcastServer, pages: Pages, tmp_path: Path
) -> None:
    base = f"http://127.0.0.1:{server.port}"
    page = await pages.open(f"{base}/", width=PHONES[0], height=800, mobile=True)
    for width in PHONES:
        await page.set_viewport_size({"width": width, "height": 800})
        await check_viewer(page, width, tmp_path)

    for width in PHONES:  # the hall fits its boards per screen to the screen it loads on
        hall = await pages.open(f"{base}/hall", width=width, height=800, mobile=True)
        await expect(hall.locator(".hall-card")).to_have_count(len(STATES))
        await assert_fits(hall, width, "the hall screen")
    arbiter = await pages.open(f"{base}/arbiter", width=PHONES[0], height=800, mobile=True)
    for width in PHONES:
        await arbiter.set_viewport_size({"width": width, "height": 800})
        await expect(arbiter.locator("#login")).to_be_visible()
        await assert_fits(arbiter, width, "the arbiter's sign-in")
    await sign_in(arbiter, TOKEN)
    for width in PHONES:
        await arbiter.set_viewport_size({"width": width, "height": 800})
        await expect(arbiter.locator('tr[data-board="148"]')).to_contain_text(LONG_WHITE)
        await assert_fits(arbiter, width, "the arbiter page")
        await screenshot(arbiter, tmp_path / f"phone-{width}-arbiter.png", full_page=True)
    await pages.close()
