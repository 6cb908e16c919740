"""The prize race under the standings, in Chromium, from a running daemon.

Round 4 of ``config/tournament-example.trf`` with ``config/prizes.toml``'s prize list,
before any game of round 4 ends (worked out by hand in tests/prizes/test_routes.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import expect

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
