"""The arbiter page against a broadcast server fed by hand: reconnects and refusals."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Page, expect

from broadcast.feed.alerts import Alert, AlertKind
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardStatus
from broadcast.web.server import BroadcastServer
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import screenshot
from tests.browser.servers import NoArbiter, board_state, free_port

pytestmark = [pytest.mark.browser, LOOP]

TOKEN = "sesame"


@pytest_asyncio.fixture(loop_scope="session")
async def server() -> AsyncIterator[BroadcastServer]:
    """A server on a fixed free port with boards 1 and 2, arbiters welcome, no daemon."""
    hub = Hub()
    for number in (1, 2):
        hub.publish_board(board_state(number))
    started = BroadcastServer(hub, NoArbiter(), port=free_port(), arbiter_token=TOKEN)
    async with started:
        yield started


def alert(alert_id: int, kind: str, board: int) -> Alert:
    """An open alert raised now."""
    now = time.time()
    action = f"Board {board}: look at the board."
    return Alert(
        id=alert_id,
        kind=AlertKind(kind),
        board=board,
        at=now,
        details={"since": now},
        action=action,
    )


async def sign_in(page: Page, token: str) -> None:
    """Type the token into the sign-in form and send it."""
    await page.fill("#token", token)
    await page.click("#login button[type=submit]")


async def test_the_page_reconnects_signs_in_again_and_catches_up(
    server: BroadcastServer, pages: Pages, tmp_path: Path
) -> None:
    hub = server.hub
    hub.publish_alert(alert(1, "board_offline", 1))
    page = await pages.open(f"http://127.0.0.1:{server.port}/arbiter")
    await sign_in(page, TOKEN)
    first = page.locator('li.alert[data-id="1"]')
    await expect(first).to_be_visible()
    hub.publish_alert(alert(2, "out_of_sync", 2))
    await expect(page.locator('li.alert[data-id="2"]')).to_be_visible()
    ids = await page.locator("li.alert").evaluate_all("items => items.map(i => i.dataset.id)")
    assert ids == ["2", "1"], "newest first"
    await expect(page.locator("#alert-count")).to_have_text("2 open")

    await first.get_by_role("button", name="Acknowledge").click()
    await expect(first.locator(".reply")).to_have_text("no daemon here to AckAlert")
    await expect(first.locator(".reply")).to_have_class("reply error")
    await expect(first).not_to_have_class(re.compile("acknowledged"))

    pages.tolerate("WebSocket connection to")  # refused while the server is away
    await server.close()
    offline, synced = hub.alert(1), hub.alert(2)
    assert offline is not None
    assert synced is not None
    hub.publish_alert(offline.acknowledge(time.time()))  # another arbiter, meanwhile
    hub.publish_alert(synced.resolve(time.time(), "the pieces match the game again"))
    hub.publish_board(board_state(2, status=BoardStatus.OUT_OF_SYNC))
    await server.start()

    await expect(first).to_have_class("alert acknowledged")  # seen, and still open
    await expect(first.locator(".acked")).to_have_text("acknowledged")
    await expect(first.locator(".reply")).to_have_count(0)  # the refusal is stale now
    await expect(page.locator("#alert-count")).to_have_text("1 open (1 acknowledged)")
    await expect(page.locator('#alerts li.alert[data-id="2"]')).to_have_count(0)
    await page.locator("#resolved-panel summary").click()
    resolved = page.locator('#resolved-alerts li.alert[data-id="2"]')
    await expect(resolved).to_have_class("alert resolved")
    await expect(resolved.locator(".history")).to_contain_text(
        "resolved by dgtcast: the pieces match the game again"
    )
    await expect(page.locator("#resolved-count")).to_have_text("1")
    row = page.locator('tr[data-board="2"]')
    await expect(row.locator(".status")).to_have_text("out of sync")
    accept = row.get_by_role("button", name="Accept position")
    await expect(accept).to_be_enabled()
    await accept.click()
    await expect(row.locator(".reply")).to_have_text("no daemon here to AcceptPosition")
    await expect(page.locator("#console")).to_be_visible()
    await expect(page.locator("#connection")).to_have_text("connected")
    await screenshot(page, tmp_path / "arbiter-reconnected.png", full_page=True)
    await pages.close()


async def test_a_server_without_token_turns_arbiters_away(pages: Pages) -> None:
    async with BroadcastServer(Hub(), NoArbiter()) as server:
        page = await pages.open(f"http://127.0.0.1:{server.port}/arbiter")
        await sign_in(page, "anything")
        await expect(page.locator("#login-error")).to_have_text("arbiter channel disabled")
        await expect(page.locator("#console")).to_be_hidden()
        await expect(page.locator("#connection")).to_have_text("not connected")
        await pages.close()


async def test_alert_details_are_words(server: BroadcastServer, pages: Pages) -> None:
    """Issue 33, item 5: no ``board online: true`` on the page."""
    now = time.time()
    late = Alert(
        id=31,
        kind=AlertKind.LATE_ARRIVAL,
        board=1,
        at=now,
        details={"stage": "warning", "color": "white", "board_online": True},
        action="Board 1: White has not moved.",
    )
    flag = Alert(
        id=32,
        kind=AlertKind.FLAG_FALL,
        board=2,
        at=now,
        details={"color": "black", "result": "1-0", "provisional": True, "check": False},
        action="Board 2: Black's flag fell.",
    )
    server.hub.publish_alert(late)
    server.hub.publish_alert(flag)
    page = await pages.open(f"http://127.0.0.1:{server.port}/arbiter")
    await sign_in(page, TOKEN)
    await expect(page.locator('li.alert[data-id="31"] .details')).to_have_text(
        "stage: warning · color: White · the e-board answers"
    )
    await expect(page.locator('li.alert[data-id="32"] .details')).to_have_text(
        "color: Black · result: 1-0 · provisional · check: no"
    )
    await pages.close()
