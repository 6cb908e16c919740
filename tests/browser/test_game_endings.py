"""How a game ended, in the game view, against the real daemon and an emulated e-board.

A flag falls on the e-board and the arbiter confirms the result: the daemon's PGN has no
Termination for it, and the game view says "time forfeit" (the loser's clock at 0),
not "resignation"; neither it nor the board's card calls the finished game "live".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import expect

from broadcast.feed.commands import ConfirmResult
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import screenshot
from tests.daemon.support import BoardSpec, read_game, running_daemon, wait_for, write_config

pytestmark = [pytest.mark.browser, LOOP]

SPEED = 25.0


async def test_a_flag_fall_is_a_time_forfeit(tmp_path: Path, pages: Pages, games_dir: Path) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)  # 1. e4 c6 2. d4 ...
    four_seconds = ClockSettings(base_seconds=4, increment_seconds=2)
    async with EmulatedBoard(clock=four_seconds, seed=1) as board:
        config = write_config(tmp_path, [BoardSpec(1, str(board.path))], default_time="3s")
        async with running_daemon(config) as daemon:
            await wait_for(daemon.sessions[1].online.is_set, 10, "board 1 online")
            await board.play(game, speed=SPEED, plies=3)  # then Black's clock runs out:
            await board.pass_time(10)  # its time passes at once, its flag falls
            await wait_for(lambda: daemon.hub.state(1).result == "1-0", 20, "the flag")  # type: ignore[union-attr]
            assert (await daemon.service.execute(ConfirmResult(board=1))).ok
            base = f"http://127.0.0.1:{daemon.server.port}"
            page = await pages.open(f"{base}/#board-1")
            dialog = page.locator("#detail")
            await expect(dialog.locator(".detail-head .result")).to_have_text("1-0")
            await expect(dialog.locator(".ending")).to_have_text("time forfeit")
            # the e-board still answers, but the game is over: not "live"
            await expect(dialog.locator(".detail-head .status")).to_be_hidden()
            await page.keyboard.press("Escape")
            card = page.locator('.card[data-board="1"]')
            await expect(card.locator(".result")).to_have_text("1-0")
            await expect(card.locator(".status")).to_be_hidden()
            await screenshot(page, tmp_path / "flag-fall.png")
            await pages.close()
