"""The viewer page against the real daemon: a move played on an emulated e-board."""

from __future__ import annotations

import io
from pathlib import Path

import chess.pgn
import pytest
from playwright.async_api import Page, expect

from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import (
    clock_text,
    last_move_squares,
    running_clock,
    screenshot,
    wait_for_pieces,
)
from tests.daemon.support import BoardSpec, running_daemon, wait_for, write_config

pytestmark = [pytest.mark.browser, LOOP]

SPEED = 25.0
#: Appended to the configuration: these keys belong to its last ``[[boards]]`` table.
LAST_BOARD_ELO = "white_elo = 2105\nblack_elo = 1987\n"

CHANGED_TEXT = """
([root, text]) => {
  const clock = document.querySelector(root + " .clock.running");
  return clock !== null && clock.textContent !== text;
}
"""


async def assert_clock_counts_down(page: Page, root: str) -> None:
    """The running clock under ``root`` shows less time later, with no feed event between.

    A feed event in between (the daemon may send a clock reading) spoils one try; the
    count-down is then watched again.
    """
    for _ in range(4):
        before = await running_clock(page, root)
        assert before is not None, f"no clock runs in {root}"
        color, seconds, seq = before
        await page.wait_for_function(CHANGED_TEXT, arg=[root, clock_text(seconds)])
        after = await running_clock(page, root)
        if after is None or after[2] != seq:
            continue
        assert after[0] == color
        assert after[1] < seconds, f"{color}'s clock went from {seconds} s to {after[1]} s"
        return
    pytest.fail("the feed kept sending events: the count-down was never seen alone")


async def test_a_move_on_the_eboard_appears_and_the_clock_runs(
    tmp_path: Path, pages: Pages
) -> None:
    game = chess.pgn.read_game(io.StringIO("1. e4 e5 2. Nf3 *"))
    assert game is not None
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=5) as board:
        specs = [
            BoardSpec(1, str(board.path)),
            BoardSpec(2, None, white="Lasker, Emanuel", black="Tarrasch, Siegbert"),
        ]
        config = write_config(tmp_path, specs, extra=LAST_BOARD_ELO)
        async with running_daemon(config) as daemon:
            await wait_for(lambda: daemon.sessions[1].online.is_set(), 10, "board 1 online")
            page = await pages.open(f"http://127.0.0.1:{daemon.server.port}/")
            card = '.card[data-board="1"]'
            await wait_for_pieces(page, card, {"e2": "white pawn", "e4": None})
            # a board without e-board beside a live one: a row of the table under the boards
            manual = page.locator('table.listed-boards tr.listed[data-board="2"]')
            await expect(manual.locator("td.white")).to_have_text("Lasker, Emanuel")
            await expect(manual.locator("td.result")).to_have_text("")
            await expect(page.locator('.card[data-board="2"]')).to_have_count(0)

            await board.play(game, speed=SPEED, plies=1)  # 1. e4, then White's lever
            await wait_for_pieces(page, card, {"e2": None, "e4": "white pawn"})
            assert await last_move_squares(page, card) == {"e2", "e4"}
            await expect(page.locator(f"{card} .latest-move")).to_have_text("1. e4")
            await expect(page.locator(f'{card} .clock.running[data-color="black"]')).to_be_visible()
            await assert_clock_counts_down(page, card)
            await screenshot(page, tmp_path / "viewer.png")

            await page.click(card)
            dialog = page.locator("#detail")
            await expect(dialog).to_be_visible()
            first = dialog.locator("td.ply").first
            await expect(first.locator(".san")).to_have_text("e4")
            state = daemon.hub.state(1)
            assert state is not None
            assert state.moves[0].clock is not None
            await expect(first.locator(".clk")).to_have_text(clock_text(state.moves[0].clock))
            await wait_for_pieces(page, "#detail", {"e2": None, "e4": "white pawn"})
            await assert_clock_counts_down(page, "#detail")
            await screenshot(page, tmp_path / "viewer-board.png")
            await page.keyboard.press("Escape")
            await expect(dialog).to_be_hidden()
            await pages.close()
