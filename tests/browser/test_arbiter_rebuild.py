"""The arbiter page's "Rebuild from memory", beside "Accept position" (issue 32, item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import expect

from broadcast.feed.commands import ArbiterCommand, CommandReply, RebuildFromMemory
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardStatus
from broadcast.web.server import BroadcastServer
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import screenshot
from tests.browser.servers import board_state

pytestmark = [pytest.mark.browser, LOOP]

TOKEN = "sesame"


class Recorder:
    """A daemon's command handler that reads a board's memory: it keeps what it was sent."""

    def __init__(self) -> None:
        self.commands: list[ArbiterCommand] = []

    async def execute(self, command: ArbiterCommand) -> CommandReply:
        self.commands.append(command)
        if isinstance(command, RebuildFromMemory):
            return CommandReply(ok=True, details={"reading": command.board})
        return CommandReply(ok=False, reason="not here")


async def test_a_board_out_of_sync_offers_a_rebuild_from_its_memory(
    pages: Pages, tmp_path: Path
) -> None:
    hub = Hub()
    hub.publish_board(board_state(1))
    hub.publish_board(board_state(2, ("e4", "e5"), status=BoardStatus.OUT_OF_SYNC))
    handler = Recorder()
    async with BroadcastServer(hub, handler, arbiter_token=TOKEN) as server:
        page = await pages.open(f"http://127.0.0.1:{server.port}/arbiter")
        await page.fill("#token", TOKEN)
        await page.click("#login button[type=submit]")
        live, out = page.locator('tr[data-board="1"]'), page.locator('tr[data-board="2"]')
        rebuild = out.get_by_role("button", name="Rebuild from memory")
        await expect(rebuild).to_be_enabled()
        await expect(out.get_by_role("button", name="Accept position")).to_be_enabled()
        buttons = await out.locator(".controls button").all_text_contents()
        assert buttons[-2:] == ["Rebuild from memory", "Accept position"], "side by side"
        await expect(live.get_by_role("button", name="Rebuild from memory")).to_be_disabled()
        await screenshot(page, tmp_path / "arbiter-rebuild.png", full_page=True)

        await rebuild.click()
        await expect(out.locator(".reply")).to_have_text("ok: reading the board's memory again")
        assert handler.commands == [RebuildFromMemory(board=2)]
        await expect(page.locator("#replies li").first).to_contain_text(
            "Board 2: rebuild from memory: ok"
        )
        hub.publish_board(board_state(2, ("e4", "e5", "Nf3")))  # healed: in sync again
        await expect(rebuild).to_be_disabled()
        await pages.close()
