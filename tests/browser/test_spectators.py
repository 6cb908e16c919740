"""The spectators' side against the real daemon, an emulated e-board and a real TRF.

A game played on the e-board is stepped through in the game view (keys, clicks, flip),
with the players' titles and federations from the TRF and the game's PGN; results set and
confirmed show in the standings; after the next round the finished round stays browsable,
also after the daemon restarts; every view fits a phone 360 and 390 px wide.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import chess.pgn
import pytest
from playwright.async_api import Page, expect

from broadcast.feed.commands import ConfirmResult, NextRound, SetResult
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import clock_text, screenshot, wait_for_pieces
from tests.daemon.support import running_daemon, wait_for
from tests.shared_data import ROOT

pytestmark = [pytest.mark.browser, LOOP]

SPEED = 25.0
GAME = "1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 4. O-O Nxe4 *"
#: 33 characters: the whole name field of a TRF player line (columns 15-47).
LONG = "Lindqvist-Oxenstierna, Maja Greta"
#: Round 4's results of config/round4-pairings.txt, boards 1-5 (board 1: 2 v 1).
RESULTS = ((1, "0-1"), (2, "1-0"), (3, "1/2-1/2"), (4, "1-0"), (5, "0-1"))
#: Round 5 of config/tournament-example.trf: nobody meets an earlier opponent; 5 gets the bye.
ROUND5 = "7\n1 10\n2 6\n3 4\n8 7\n9 12\n11 13\n5 0\n"


def _event(folder: Path, port: str) -> Path:
    """The example event in round 4, board 1 on the emulated e-board, a 33-letter name."""
    trf = (ROOT / "config" / "tournament-example.trf").read_text()
    assert len(LONG) == 33
    (folder / "open.trf").write_text(trf.replace("Lindqvist, Maja".ljust(33), LONG))
    shutil.copy(ROOT / "config" / "round4-pairings.txt", folder / "round4.txt")
    (folder / "round5.txt").write_text(ROUND5)
    path = folder / "open.toml"
    path.write_text(
        '[event]\nname = "Riverside Autumn Open 2026"\nround = 4\ntime_control = "5400+30"\n\n'
        '[server]\narbiter_token = "a-long-arbiter-secret"\n\n[storage]\npath = "journal.db"\n\n'
        '[pairing]\ntrf = "open.trf"\npairings = "round{round}.txt"\n\n'
        f'[[boards]]\nnumber = 1\nport = "{port}"\n'
    )
    return path


def spent_text(seconds: float) -> str:
    """The time spent on a move as the move list shows it (game.js spentText)."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    return f"{whole // 60}m{whole % 60:02}s"


async def fetched(page: Page, url: str) -> str:
    """The body the page's server answers for ``url``."""
    text: str = await page.evaluate("(url) => fetch(url).then((r) => r.text())", url)
    return text


async def assert_fits(page: Page, width: int, what: str) -> None:
    """No sideways scrolling: nothing on the page is wider than the phone."""
    wide = await page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{what}: the page is {wide} px wide on a {width} px phone"


async def assert_table_whole(page: Page, what: str) -> None:
    """The standings' headers are shown whole ("BH-C1", not "BH-…") and each row's
    cells are cells: one line under the row, not a step under the player's name."""
    found = await page.evaluate(
        """() => {
          const table = document.querySelector("#standings table.standings");
          const cut = [...table.querySelectorAll("th")]
            .filter((th) => th.clientWidth > 0 && th.scrollWidth > th.clientWidth)
            .map((th) => th.textContent);
          const steps = [...table.rows].filter((row) => new Set([...row.cells]
            .filter((cell) => cell.clientWidth > 0)
            .map((cell) => Math.round(cell.getBoundingClientRect().bottom))).size > 1)
            .map((row) => row.rowIndex);
          return {cut, steps};
        }"""
    )
    assert not found["cut"], f"{what}: headers cut: {found['cut']}"
    assert not found["steps"], f"{what}: rows whose cells end apart: {found['steps']}"


async def step_through(page: Page) -> None:
    """Home, →, a click on 4. O-O, End; the pieces as they stood at each."""
    dialog = page.locator("#detail")
    await page.keyboard.press("Home")
    await wait_for_pieces(page, "#detail", {"e2": "white pawn", "e4": None, "g1": "white knight"})
    await expect(dialog).to_have_attribute("data-following", "false")
    await page.keyboard.press("ArrowRight")
    await wait_for_pieces(page, "#detail", {"e2": None, "e4": "white pawn"})
    await expect(dialog.locator("td.ply.current .san")).to_have_text("e4")
    await dialog.locator('td.ply[data-ply="7"]').click()
    castled = {"g1": "white king", "f1": "white rook", "e1": None, "h1": None, "e4": "white pawn"}
    await wait_for_pieces(page, "#detail", castled)
    await page.keyboard.press("End")
    await wait_for_pieces(page, "#detail", {"e4": "black knight", "f6": None})
    await expect(dialog).to_have_attribute("data-following", "true")


async def check_game_view(page: Page, state: Any, tmp_path: Path) -> None:
    dialog = page.locator("#detail")
    await expect(dialog).to_be_visible()
    await expect(dialog.locator("td.ply")).to_have_count(8)
    first = dialog.locator("td.ply").first
    await expect(first.locator(".san")).to_have_text("e4")
    await expect(first.locator(".clk")).to_have_text(clock_text(state.moves[0].clock))
    emt = state.moves[1].emt
    assert emt is not None
    await expect(dialog.locator('td.ply[data-ply="2"] .emt')).to_have_text(spent_text(emt))
    white = dialog.locator(".player.white")
    await expect(white.locator(".name")).to_have_text(LONG)
    await expect(white.locator(".title")).to_have_text("WIM")
    await expect(white.locator(".fed")).to_have_text("SWE")
    await expect(dialog.locator(".player.black .title")).to_have_text("FM")
    await expect(dialog.locator(".player.black .elo")).to_have_text("2315")
    await step_through(page)
    await page.keyboard.press("f")
    await expect(dialog.locator(".cg-wrap")).to_have_class(re.compile(r"orientation-black"))
    first_row = dialog.locator(".detail-view > .player").first
    await expect(first_row).to_have_attribute("data-color", "white")
    pgn = await fetched(page, await dialog.locator("a.pgn").get_attribute("href") or "")
    assert f'[White "{LONG}"]' in pgn
    assert "Nxe4" in pgn
    await screenshot(page, tmp_path / "game-view.png")
    await page.keyboard.press("f")


async def looked_again(page: Page, daemon: Any) -> None:
    """Once the page has every event the daemon published, fast-forward its clock past the
    0.8 s it waits after a result or a round to fetch the standings and rounds again."""
    seq = str(daemon.server.public_hub.seq)
    await expect(page.locator("body")).to_have_attribute("data-seq", seq)
    await page.clock.fast_forward(800)


async def finish_round(daemon: Any) -> None:
    for board, result in RESULTS:
        assert (await daemon.service.execute(SetResult(board=board, result=result))).ok
        assert (await daemon.service.execute(ConfirmResult(board=board))).ok


async def check_standings(page: Page, daemon: Any, tmp_path: Path) -> None:
    """The standings before round 4's results, then updated as they are confirmed."""
    await page.locator('nav.views a[data-view="standings"]').click()
    table = page.locator("#standings table.standings")
    await expect(table.locator("tbody tr")).to_have_count(13)
    await expect(table.locator('tr[data-rank="2"] td.points')).to_have_text("3")
    await expect(table.locator('tr[data-rank="1"] td.points')).to_have_text("2½")
    heading = page.locator("#standings h2")
    await expect(heading).to_have_text("Standings · after round 3")
    assert (await daemon.service.execute(SetResult(board=2, result="1-0"))).ok
    assert (await daemon.service.execute(ConfirmResult(board=2))).ok
    await looked_again(page, daemon)
    await expect(heading).to_have_text("Standings · after round 3 · round 4: 1 of 5 results")
    await finish_round(daemon)
    await looked_again(page, daemon)
    await expect(heading).to_have_text("Standings · after round 4")
    top = table.locator("tbody tr").first
    await expect(top.locator("td.player .name")).to_have_text("Okafor, Daniel")
    await expect(top.locator("td.points")).to_have_text("3½")  # 2.5 and a win over board 1
    await expect(table.locator('tr[data-rank="2"] td.points')).to_have_text("3")
    pairings = page.locator("#standings table.pairings")
    await expect(pairings.locator("tr").first.locator("td.result")).to_have_text("0-1")
    await assert_table_whole(page, "standings")
    await screenshot(page, tmp_path / "standings.png", full_page=True)


async def check_past_round(page: Page, tmp_path: Path) -> None:
    await page.locator('nav.views a[data-view="rounds"]').click()
    round4 = page.locator('#rounds details.round[data-round="4"]')
    await expect(round4).to_be_visible()
    await expect(page.locator('#rounds details.round[data-round="5"]')).to_be_visible()
    await expect(round4).to_have_js_property("open", False)
    await round4.locator("summary").click()
    row = round4.locator('tr.game[data-board="1"]')
    await expect(row.locator("td.result")).to_have_text("0-1")
    await screenshot(page, tmp_path / "rounds.png", full_page=True)
    await row.click()
    dialog = page.locator("#detail")
    await expect(dialog).to_have_attribute("data-round", "4")
    await expect(dialog.locator("td.ply")).to_have_count(8)
    await expect(dialog.locator(".ending")).to_have_text("resignation")
    await step_through(page)
    await expect(page).to_have_url(re.compile(r"/#round-4-board-1$"))
    await screenshot(page, tmp_path / "past-game.png")
    await page.keyboard.press("Escape")
    await expect(dialog).to_be_hidden()


async def check_phones(pages: Pages, base: str, tmp_path: Path) -> None:
    """One phone page, 390 px wide, then narrowed to 360: laid out again, not loaded again."""
    page = await pages.open(f"{base}/", width=390, height=780, mobile=True)
    for width in (390, 360):
        await page.set_viewport_size({"width": width, "height": 780})
        await page.locator('nav.views a[data-view="boards"]').click()
        await expect(page.locator(".card").first).to_be_visible()
        await assert_fits(page, width, "the boards")
        for view in ("rounds", "standings"):
            await page.locator(f'nav.views a[data-view="{view}"]').click()
            await expect(page.locator(f"#{view} table").first).to_be_visible()
            await assert_fits(page, width, view)
            if view == "standings":
                await assert_table_whole(page, f"standings on a {width} px phone")
            await screenshot(page, tmp_path / f"phone-{width}-{view}.png", full_page=True)
        await page.goto(f"{base}/#round-4-board-1")
        await expect(page.locator("#detail td.ply")).to_have_count(8)
        await wait_for_pieces(page, "#detail", {"e4": "black knight", "g1": "white king"})
        await assert_fits(page, width, "a past game")
        await screenshot(page, tmp_path / f"phone-{width}-game.png")
        await page.keyboard.press("Escape")
        await expect(page.locator("#detail")).to_be_hidden()


async def test_games_rounds_and_standings_for_spectators(tmp_path: Path, pages: Pages) -> None:
    game = chess.pgn.read_game(io.StringIO(GAME))
    assert game is not None
    async with EmulatedBoard(clock=ClockSettings.from_text("90+30"), seed=3) as board:
        config = _event(tmp_path, str(board.path))
        async with running_daemon(config) as daemon:
            base = f"http://127.0.0.1:{daemon.server.port}"
            await wait_for(lambda: daemon.sessions[1].online.is_set(), 10, "board 1 online")
            await board.play(game, speed=SPEED, plies=8)
            await wait_for(lambda: len(daemon.hub.state(1).moves) == 8, 20, "8 plies")  # type: ignore[union-attr]
            page = await pages.open(f"{base}/#board-1", clock=True)
            await check_game_view(page, daemon.hub.state(1), tmp_path)
            await page.keyboard.press("Escape")
            await expect(page.locator("#detail")).to_be_hidden()
            await expect(page).to_have_url(f"{base}/")  # the address no longer names it

            await check_standings(page, daemon, tmp_path)
            # the round being played is shown open; once finished it folds like any past
            # round (the page drew it open: that was not the reader's choice)
            await page.locator('nav.views a[data-view="rounds"]').click()
            playing = page.locator('#rounds details.round[data-round="4"]')
            await expect(playing).to_have_js_property("open", True)
            assert (await daemon.service.execute(NextRound())).ok
            await looked_again(page, daemon)
            await check_past_round(page, tmp_path)
            round4 = await fetched(page, "/round/4.pgn")
            assert round4.count("[Event ") == 5
            assert '[Round "4.1"]' in round4
            await check_phones(pages, base, tmp_path)
            await pages.close()

        async with running_daemon(config) as daemon:  # the journal rebuilds round 4
            page = await pages.open(f"http://127.0.0.1:{daemon.server.port}/#round-4-board-1")
            await expect(page.locator("#detail td.ply")).to_have_count(8)
            rounds = json.loads(await fetched(page, "/rounds.json"))
            (section,) = rounds["sections"]
            (kept,) = section["rounds"]
            assert kept["round"] == 4
            assert [(g["board"], g["result"]) for g in kept["games"]] == list(RESULTS)
            await pages.close()
