"""The prize race under the standings, in Chromium, from a running daemon.

Round 4 of ``config/tournament-example.trf`` with ``config/prizes.toml``'s prize list,
before any game of round 4 ends (worked out by hand in tests/prizes/test_routes.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.async_api import expect

from broadcast.feed.commands import ConfirmResult, SetResult
from tests.browser.conftest import LOOP, Pages
from tests.daemon.support import running_daemon
from tests.prizes.test_routes import _config

pytestmark = [pytest.mark.browser, LOOP]


async def test_the_standings_show_each_groups_race(tmp_path: Path, pages: Pages) -> None:
    async with running_daemon(_config(tmp_path)) as daemon:
        page = await pages.open(f"{daemon.address}/#standings")
        race = page.locator("#standings .prize-race")
        await expect(race.locator("h3")).to_have_text("Prizes if the event ended now")
        open_ = race.locator('table.prizes[data-group="Open"] tr')
        await expect(open_).to_have_count(5)
        rows = [await row.locator("td").all_inner_texts() for row in await open_.all()]
        assert [row[:3] for row in rows] == [
            ["1", "Lindqvist, Maja", "3"],
            ["2", "Okafor, Daniel", "2½"],
            ["3-5", "Brennan, Oscar", "2"],
            ["3-5", "Moreau, Claire", "2"],
            ["3-5", "Haddad, Samir", "2"],
        ]
        assert [row[3] for row in rows] == [
            "$500.00 + trophy",
            "$350.00",
            "$181.25 pooled",
            "$181.25 pooled",
            "$181.25 pooled",
        ]
        under18 = race.locator('table.prizes[data-group="Under 18"] tr')
        await expect(under18.first.locator("td.prize")).to_have_text("$75.00")
        girls = race.locator('table.prizes[data-group="Girls"] tr')
        await expect(girls).to_have_count(1)
        await expect(girls.locator("td.prize")).to_have_text("trophy")
        await pages.close()
    assert pages.problems == []


async def test_the_hall_shows_the_race_between_rounds(tmp_path: Path, pages: Pages) -> None:
    async with running_daemon(_config(tmp_path)) as daemon:
        page = await pages.open(f"{daemon.address}/hall", clock=True)  # 20 s a screen
        screen = page.locator("#hall-page")
        await expect(page.locator(".hall-card").first).to_be_visible()
        # while boards play the cycle is their two pages (4 + 1 boards), no race
        await expect(screen).to_have_text(re.compile(r"^[12] / 2$"))
        await expect(page.locator(".hall-prizes")).to_have_count(0)
        for board in range(1, 6):  # round 4's five games end; the bye needs nothing
            assert (await daemon.service.execute(SetResult(board=board, result="1-0"))).ok
            assert (await daemon.service.execute(ConfirmResult(board=board))).ok
        await expect(screen).to_have_text(re.compile(r" / 3$"))
        for _ in range(3):  # on the page's clock, to the last screen: the race
            if await screen.text_content() == "3 / 3":
                break
            await page.clock.fast_forward(20_000)
        await expect(screen).to_have_text("3 / 3")
        panel = page.locator(".hall-prizes")
        await expect(panel).to_be_visible()
        await expect(page.locator("#hall-title")).to_have_text("Prizes if the event ended now")
        async with httpx.AsyncClient(base_url=daemon.address) as client:
            (race,) = (await client.get("/prizes.json")).json()["sections"]
        groups = [group["name"] for group in race["groups"]]
        await expect(panel.locator("table.prizes")).to_have_count(len(groups))
        shown = await panel.locator("table.prizes").evaluate_all(
            "(tables) => tables.map((table) => table.dataset.group)"
        )
        assert shown == groups
        first = race["cash"][0]
        row = panel.locator(
            f'table.prizes[data-group="{first["group"]}"] tr[data-rank="{first["start_rank"]}"]'
        )
        await expect(row.locator("td.player")).to_have_text(first["name"])
        await page.clock.fast_forward(20_000)
        await expect(page.locator(".hall-card").first).to_be_visible()  # it turns on
        await pages.close()
    assert pages.problems == []
