"""The arbiter page against the real daemon: alerts, acknowledgements, results, tokens."""

from __future__ import annotations

import io
import re
from pathlib import Path

import chess
import chess.pgn
import pytest
from playwright.async_api import Page, expect

from daemon.commands.run import arbiter_address
from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import screenshot
from tests.daemon.recovery_support import play_part
from tests.daemon.support import BoardSpec, running_daemon, wait_for, write_config

pytestmark = [pytest.mark.browser, LOOP]

TOKEN = "arbiter-secret"  # write_config's default


async def sign_in(page: Page, token: str) -> None:
    """Type the token into the sign-in form and send it."""
    await expect(page.locator("#login")).to_be_visible()
    await page.fill("#token", token)
    await page.click("#login button[type=submit]")


async def test_an_alert_is_acknowledged_from_the_arbiter_page(tmp_path: Path, pages: Pages) -> None:
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=7) as board:
        config = write_config(tmp_path, [BoardSpec(1, str(board.path))])
        async with running_daemon(config) as daemon:
            await wait_for(lambda: daemon.sessions[1].online.is_set(), 10, "board 1 online")
            page = await pages.open(f"http://127.0.0.1:{daemon.server.port}/arbiter")
            await sign_in(page, TOKEN)
            await expect(page.locator("#console")).to_be_visible()
            await expect(page.locator('tr[data-board="1"] .status')).to_have_text("live")

            board.unplug()  # the USB cable: the daemon raises board_offline
            item = page.locator('li.alert[data-kind="board_offline"]')
            await expect(item).to_be_visible()
            await expect(item.locator(".board")).to_have_text("Board 1")
            await expect(item.locator(".action")).to_contain_text("Board 1")
            await expect(page.locator('tr[data-board="1"] .status')).to_have_text("board offline")
            alert_id = int(await item.get_attribute("data-id") or "0")
            engine = daemon.core.engine
            assert alert_id in {alert.id for alert in engine.open_alerts}
            await screenshot(page, tmp_path / "arbiter-alert.png")

            await item.get_by_role("button", name="Acknowledge").click()
            await expect(item).to_have_class("alert acknowledged")  # seen, still open
            await expect(item.locator(".acked")).to_have_text("acknowledged")
            await expect(item.locator(".reply")).to_have_text("ok")
            await expect(item.get_by_role("button", name="Acknowledge")).to_have_count(0)
            await expect(item.locator(".history")).to_contain_text("acknowledged by arbiter")
            await expect(page.locator("#alert-count")).to_have_text("1 open (1 acknowledged)")
            await wait_for(
                lambda: alert_id in {a.id for a in engine.open_alerts if a.acknowledged},
                5,
                "acknowledged",
            )
            await expect(page.locator("#replies li").first).to_contain_text(
                f"Acknowledge alert {alert_id} (board_offline, board 1): ok"
            )
            await page.get_by_role("button", name="Set clocks").click()  # board 1 is away
            refused = page.locator("#set-clocks-reply")
            await expect(refused).to_have_class("reply error")
            await expect(refused).to_contain_text("board 1: ")
            await expect(page.locator("#replies li.error").first).to_contain_text("Set clocks: ")
            await screenshot(page, tmp_path / "arbiter-acknowledged.png", full_page=True)

            await board.replug()  # back online: the alert resolves by itself
            await expect(page.locator("#alerts li.alert")).to_have_count(0)
            await expect(page.locator("#no-alerts")).to_be_visible()
            await expect(page.locator("#alert-count")).to_have_text("")
            await expect(page.locator("#resolved-count")).to_have_text("1")
            await page.locator("#resolved-panel summary").click()
            resolved = page.locator(f'#resolved-alerts li.alert[data-id="{alert_id}"]')
            await expect(resolved).to_have_class("alert acknowledged resolved")
            await expect(resolved.locator(".resolved-mark")).to_have_text("resolved")
            await expect(resolved.locator(".history")).to_contain_text(
                "resolved by dgtcast: the e-board answers again after"
            )
            assert engine.open_alerts == []
            await screenshot(page, tmp_path / "arbiter-resolved.png", full_page=True)
            await pages.close()


async def test_confirming_results_resolves_the_alerts_of_the_games(
    tmp_path: Path, pages: Pages
) -> None:
    mate = chess.pgn.read_game(io.StringIO("1. f3 e5 2. g4 Qh4# 0-1"))
    draw = chess.pgn.read_game(io.StringIO("1. e4 e5 2. Nf3 Nc6 1/2-1/2"))
    assert mate is not None
    assert draw is not None
    clock = ClockSettings.from_text("3+2")
    async with EmulatedBoard(clock=clock, seed=5) as one, EmulatedBoard(clock=clock, seed=6) as two:
        config = write_config(tmp_path, [BoardSpec(1, str(one.path)), BoardSpec(2, str(two.path))])
        async with running_daemon(config) as daemon:
            for number in (1, 2):
                await wait_for(daemon.sessions[number].online.is_set, 10, f"board {number} up")
            page = await pages.open(f"http://127.0.0.1:{daemon.server.port}/arbiter")
            await sign_in(page, TOKEN)
            await one.play(mate, speed=20)
            await two.play(draw, speed=20, signal_result=True)  # the kings on the centre
            over = page.locator('#alerts li.alert[data-kind="game_over"]')
            signalled = page.locator('#alerts li.alert[data-kind="result_signalled"]')
            await expect(over).to_be_visible(timeout=20_000)
            await expect(signalled).to_be_visible(timeout=20_000)
            await expect(page.locator("#alert-count")).to_have_text("2 open")
            await over.get_by_role("button", name="Acknowledge").click()
            await expect(page.locator("#alert-count")).to_have_text("2 open (1 acknowledged)")
            await expect(over).to_have_class("alert acknowledged")  # seen: still open
            await screenshot(page, tmp_path / "arbiter-decisions.png", full_page=True)

            for number, result in ((1, "0-1"), (2, "1/2-1/2")):  # the decisions
                row = page.locator(f'tr[data-board="{number}"]')
                await row.get_by_role("button", name="Confirm").click()
                await expect(row.locator(".final")).to_have_text("final")
                kind = "game_over" if number == 1 else "result_signalled"
                item = page.locator(f'#resolved-alerts li.alert[data-kind="{kind}"]')
                await expect(item.locator(".history")).to_contain_text(
                    f"resolved by arbiter: an arbiter confirmed the result {result}"
                )
            await expect(page.locator("#alerts li.alert")).to_have_count(0)
            await expect(page.locator("#no-alerts")).to_be_visible()
            await expect(page.locator("#alert-count")).to_have_text("")
            await page.locator("#resolved-panel summary").click()
            await expect(page.locator("#resolved-alerts li.alert")).to_have_count(2)
            assert daemon.core.engine.open_alerts == []
            await screenshot(page, tmp_path / "arbiter-confirmed.png", full_page=True)
            await pages.close()


async def test_a_manual_result_reaches_the_hub_and_the_viewer(tmp_path: Path, pages: Pages) -> None:
    specs = [BoardSpec(1, None), BoardSpec(2, None, white="Rubinstein, Akiba")]
    config = write_config(tmp_path, specs, results="provisional")  # the viewer marks it
    async with running_daemon(config) as daemon:
        base = f"http://127.0.0.1:{daemon.server.port}"
        viewer = await pages.open(f"{base}/")
        arbiter = await pages.open(f"{base}/arbiter")
        await sign_in(arbiter, TOKEN)
        row = arbiter.locator('tr[data-board="2"]')

        def result_of(board: int) -> str | None:
            state = daemon.hub.state(board)
            return None if state is None else state.result

        await expect(row.locator(".status")).to_have_text("no e-board")
        await expect(row.get_by_role("button", name="Confirm")).to_be_disabled()
        await expect(row.get_by_role("button", name="Accept position")).to_be_disabled()

        await row.locator("select.result-choice").select_option("1/2-1/2")
        await row.get_by_role("button", name="Set result").click()
        await expect(row.locator(".reply")).to_have_text("ok")
        await wait_for(lambda: result_of(2) == "1/2-1/2", 5, "the result in the hub")
        shown = viewer.locator('.card[data-board="2"] .result')
        await expect(shown).to_have_attribute("data-result", "1/2-1/2")
        await expect(shown).to_have_text("½-½")
        await expect(shown).to_have_class("result provisional")
        await expect(row.locator(".final")).to_have_text("provisional")

        await row.get_by_role("button", name="Confirm").click()
        await expect(shown).to_have_class("result")  # final now
        await expect(row.locator(".final")).to_have_text("final")
        state = daemon.hub.state(2)
        assert state is not None
        assert state.result_final

        await arbiter.get_by_role("button", name="Set clocks").click()
        await expect(arbiter.locator("#set-clocks-reply")).to_have_text(
            "ok: clocks set on no board"
        )
        await arbiter.reload()  # the token is kept for the tab: no sign-in again
        await expect(arbiter.locator("#console")).to_be_visible()
        await expect(row.locator(".result")).to_have_attribute("data-result", "1/2-1/2")
        await screenshot(viewer, tmp_path / "viewer-result.png")
        await screenshot(arbiter, tmp_path / "arbiter-result.png", full_page=True)

        intruder = await pages.open(f"{base}/arbiter")
        await sign_in(intruder, "not-the-token")
        await expect(intruder.locator("#login-error")).to_have_text("bad token")
        await expect(intruder.locator("#console")).to_be_hidden()
        stored = await intruder.evaluate("sessionStorage.getItem('dgtcast.arbiterToken')")
        assert stored is None
        await screenshot(intruder, tmp_path / "arbiter-bad-token.png")
        await pages.close()


async def test_the_arbiter_chooses_the_line_played_during_a_gap(
    tmp_path: Path, pages: Pages
) -> None:
    game = chess.pgn.Game()
    node: chess.pgn.GameNode = game
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f1c4"):
        node = node.add_variation(chess.Move.from_uci(uci))
    clock = ClockSettings.from_text("3+2")
    async with EmulatedBoard(clock=clock, seed=9, memory_size=48) as board:  # a wrapped memory
        config = write_config(tmp_path, [BoardSpec(1, str(board.path))])
        async with running_daemon(config) as daemon:
            await wait_for(lambda: daemon.sessions[1].online.is_set(), 10, "board 1 online")
            page = await pages.open(f"http://127.0.0.1:{daemon.server.port}/arbiter")
            await sign_in(page, TOKEN)
            tracker = daemon.core.games[1].tracker
            assert tracker is not None
            await play_part(board, game, 0, 1, speed=10)
            await wait_for(lambda: tracker.ply == 1, 20, "1. e4")
            board.unplug(keep_power=True)
            await wait_for(lambda: not daemon.sessions[1].online.is_set(), 10, "offline")
            await play_part(board, game, 1, 5, speed=10)  # e5 Nf3 Nc6 Bc4: four move orders
            await board.replug()
            item = page.locator('li.alert[data-kind="gap_ambiguous"]')
            await expect(item).to_be_visible(timeout=30_000)
            await expect(item.locator("button.choose-line")).to_have_count(4)
            await screenshot(page, tmp_path / "arbiter-gap.png", full_page=True)
            await item.get_by_role("button", name="e5 Nf3 Nc6 Bc4").click()
            await wait_for(lambda: tracker.ply == 5, 10, "the line chosen")
            await page.locator("#resolved-panel summary").click()  # the arbiter decided
            chosen = page.locator('#resolved-alerts li.alert[data-kind="gap_ambiguous"]')
            await expect(chosen.locator(".history")).to_contain_text(
                "resolved by arbiter: an arbiter chose line"
            )
            moves = [m.uci for m in daemon.core.games[1].record.moves]
            assert moves == ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]
            row = page.locator('tr[data-board="1"]')
            await expect(row.locator(".recovered")).to_have_text("4 plies recovered")
            await pages.close()


async def test_the_arbiter_page_shows_the_battery_of_wireless_boards(
    tmp_path: Path, pages: Pages
) -> None:
    low = BoardIdentity.from_serial("23946").bluetooth(15)
    async with (
        EmulatedBoard(identity=low, seed=1) as one,
        EmulatedBoard(identity=BoardIdentity.from_serial("07425"), seed=2) as two,
    ):
        config = write_config(tmp_path, [BoardSpec(1, str(one.path)), BoardSpec(2, str(two.path))])
        async with running_daemon(config) as daemon:
            # Asked at once when a board connects: no need to wait the minute.
            await wait_for(lambda: _battery(daemon, 1) == 15, 20, "board 1's battery")
            page = await pages.open(f"http://127.0.0.1:{daemon.server.port}/arbiter")
            await sign_in(page, TOKEN)
            first = page.locator('tr[data-board="1"] .battery')
            await expect(first).to_have_text("battery 15%")
            await expect(first).to_have_class(re.compile(r"\blow\b"))
            await expect(page.locator('tr[data-board="2"] .status')).to_have_text(re.compile("."))
            await expect(page.locator('tr[data-board="2"] .battery')).to_have_text("")  # USB
            await screenshot(page, tmp_path / "arbiter-battery.png", full_page=True)
            await pages.close()


def _battery(daemon: Daemon, board: int) -> int | None:
    state = daemon.hub.state(board)
    return None if state is None else state.battery


async def test_the_printed_address_signs_in_without_a_configured_token(
    tmp_path: Path, pages: Pages
) -> None:
    config = write_config(tmp_path, [BoardSpec(1, None)], token=None)  # loopback
    async with running_daemon(config) as daemon:
        base = f"http://127.0.0.1:{daemon.server.port}"
        page = await pages.open(arbiter_address(base, daemon))  # as `dgtcast run` prints it
        await expect(page.locator("#console")).to_be_visible()
        await expect(page.locator('tr[data-board="1"]')).to_be_visible()
        assert page.url == f"{base}/arbiter"  # the token left the address bar
        await page.reload()  # kept for the tab, like a typed token
        await expect(page.locator("#console")).to_be_visible()
        await pages.close()
