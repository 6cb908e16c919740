"""The arbiter page's "Next round" against the real daemon and a real TRF.

Refused while results are unconfirmed (the reply lists the boards), done once they are
confirmed: the board rows show round 5's players, and the TRF holds round 4's results.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.async_api import expect

from broadcast.feed.commands import ConfirmResult, SetResult
from daemon.pairing import Tournament
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import screenshot
from tests.browser.test_arbiter_page import TOKEN, sign_in
from tests.daemon.support import running_daemon
from tests.shared_data import ROOT

pytestmark = [pytest.mark.browser, LOOP]

#: Round 5 of config/tournament-example.trf: nobody meets an earlier opponent; 5 gets the bye.
ROUND5 = "7\n1 10\n2 6\n3 4\n8 7\n9 12\n11 13\n5 0\n"


def _event(folder: Path) -> Path:
    shutil.copy(ROOT / "config" / "tournament-example.trf", folder / "open.trf")
    shutil.copy(ROOT / "config" / "round4-pairings.txt", folder / "round4.txt")
    (folder / "round5.txt").write_text(ROUND5)
    path = folder / "open.toml"
    path.write_text(
        '[event]\nname = "Riverside Autumn Open 2026"\nround = 4\ntime_control = "5400+30"\n\n'
        f'[server]\narbiter_token = "{TOKEN}"\n\n[storage]\npath = "journal.db"\n\n'
        '[pairing]\ntrf = "open.trf"\npairings = "round{round}.txt"\n\n[[boards]]\nnumber = 1\n'
    )
    return path


async def test_next_round_from_the_arbiter_page(tmp_path: Path, pages: Pages) -> None:
    async with running_daemon(_event(tmp_path)) as daemon:
        page = await pages.open(f"http://127.0.0.1:{daemon.server.port}/arbiter")
        await sign_in(page, TOKEN)
        row = page.locator('tr[data-board="1"]')
        await expect(row).to_contain_text("Lindqvist, Maja")
        await expect(page.locator("#next-round-section")).to_be_hidden()  # one section

        for board, result in ((1, "0-1"), (2, "1-0"), (3, "1/2-1/2"), (4, "1-0"), (5, "0-1")):
            assert (await daemon.service.execute(SetResult(board=board, result=result))).ok
        await page.get_by_role("button", name="Next round").click()
        reply = page.locator("#next-round-reply")
        await expect(reply).to_have_class("reply error")
        await expect(reply).to_contain_text("results not confirmed: board 1: 0-1 not confirmed")
        await expect(row).to_contain_text("Lindqvist, Maja")

        for board in range(1, 6):
            assert (await daemon.service.execute(ConfirmResult(board=board))).ok
        await page.get_by_role("button", name="Next round").click()
        await expect(reply).to_have_text("ok: round 5")
        await expect(row).to_contain_text("Okafor, Daniel")
        await expect(row).to_contain_text("Ferreira, Beatriz")
        await expect(page.locator('tr[data-board="6"]')).to_contain_text("Brennan, Oscar")
        await screenshot(page, tmp_path / "arbiter-next-round.png", full_page=True)
        await pages.close()
    after = Tournament.from_trf(tmp_path / "open.trf")
    entry = after.player(2).entry(4)
    assert entry is not None
    assert (entry.opponent, entry.colour, entry.code) == (1, "w", "0")
    bye = after.player(5).entry(5)
    assert bye is not None
    assert (bye.opponent, bye.code) == (0, "U")
