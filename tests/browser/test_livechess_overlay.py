"""A page from another origin uses the LiveChess API in headless Chromium: the example
overlay of docs/examples/, served by a server of its own, reads the e-boards over HTTP
(CORS) and follows their feeds over the websocket."""

from __future__ import annotations

import http
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import expect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardStatus
from broadcast.livechess.server import LiveChessServer, LiveChessSettings
from tests.browser.conftest import LOOP, Pages
from tests.livechess.client import board_state

pytestmark = [pytest.mark.browser, LOOP]

OVERLAY = Path(__file__).resolve().parents[2] / "docs" / "examples" / "livechess-overlay.html"


def _page(connection: ServerConnection, request: Request) -> Response:
    if request.path.split("?")[0] != "/overlay.html":
        return connection.respond(http.HTTPStatus.NOT_FOUND, "no such page\n")
    headers = Headers([("Content-Type", "text/html; charset=utf-8")])
    return Response(200, "OK", headers, OVERLAY.read_bytes())


async def _nothing(connection: ServerConnection) -> None:
    await connection.close()


@pytest_asyncio.fixture(loop_scope="session")
async def api() -> AsyncIterator[LiveChessServer]:
    hub = Hub()
    hub.publish_board(board_state(1, [], serial="23946"))
    hub.publish_board(board_state(2, ["d4"], serial="07425"))
    async with LiveChessServer(hub, LiveChessSettings(port=0)) as server:
        yield server


@pytest_asyncio.fixture(loop_scope="session")
async def site() -> AsyncIterator[Server]:
    async with serve(_nothing, "127.0.0.1", 0, process_request=_page) as server:
        yield server


async def test_an_overlay_from_another_origin_follows_the_boards(
    pages: Pages, api: LiveChessServer, site: Server
) -> None:
    site_port = site.sockets[0].getsockname()[1]
    assert site_port != api.port  # another origin
    url = f"http://127.0.0.1:{site_port}/overlay.html?api=127.0.0.1:{api.port}"
    page = await pages.open(url, clock=True)
    boards = page.locator(".board")
    await expect(boards).to_have_count(2)
    await expect(page.locator("#status")).to_have_text("live")
    first, second = boards.nth(0), boards.nth(1)
    await expect(first.locator(".serial")).to_have_text("23946")
    await expect(second.locator(".moves")).to_have_text("1. d4")
    clocked: dict[str, Any] = {"white_clock": 5399.0, "black_clock": 5400.0, "running": "black"}
    api.hub.publish_board(
        board_state(1, ["e4", "e5", "Nf3"], serial="23946", clock_at=1.0, **clocked)
    )
    await expect(first.locator(".moves")).to_have_text("1. e4 e5 2. Nf3")
    await expect(first.locator(".clock.white")).to_have_text("1:29:59")
    await expect(first.locator(".clock.black")).to_have_class("clock black running")
    api.hub.publish_board(board_state(1, ["e4", "e5", "Nc3"], serial="23946"))
    await expect(first.locator(".moves")).to_have_text("1. e4 e5 2. Nc3")  # a correction
    api.hub.publish_board(board_state(2, ["d4"], serial="07425", status=BoardStatus.OFFLINE))
    await page.clock.fast_forward(5_000)  # the overlay asks for the e-boards every 5 s
    await expect(second.locator(".state")).to_have_text("NOTRESPONDING")
