"""Every round and the standings through a relay, in Chromium: as spectators of the daemon see them.

A daemon (an emulated e-board on board 1, the example TRF in round 4 with a ``202`` record
naming WIN, BH-C1 and SB) publishes to a real mosquitto; a relay serves the pages. After
round 4's results and the next round, the relay's page lists round 4 with its results,
opens its game and steps through it, and shows the standings with the TRF's tie-breaks
as columns, in that order. Standings that reach a relay only after the page looked are
shown all the same.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path

import chess.pgn
import pytest
from playwright.async_api import expect

from broadcast.feed.commands import NextRound
from broadcast.feed.hub import Hub
from broadcast.relay.rounds import RelayRounds
from broadcast.relay.server import Relay
from broadcast.web.http import Answer
from broadcast.web.server import BroadcastServer
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.broadcast.feed_client import http_get
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import screenshot
from tests.browser.servers import NoArbiter, board_state
from tests.browser.test_spectators import (
    GAME,
    SPEED,
    _event,
    assert_fits,
    fetched,
    finish_round,
    step_through,
)
from tests.daemon.support import running_daemon, wait_for
from tests.mosquitto import Mosquitto
from tests.relay.support import mqtt_table, relay_settings, running_relay

pytestmark = [pytest.mark.browser, LOOP]


def _relayed_event(folder: Path, port: str, broker: Mosquitto) -> Path:
    """test_spectators' event, on the broker, its TRF naming the tie-breaks (record 202)."""
    path = _event(folder, port)
    trf = folder / "open.trf"
    text = trf.read_bytes().replace(b"XXR 7", b"202 WIN BH/C1 SB\r\nXXR 7", 1)
    assert b"202 WIN" in text
    trf.write_bytes(text)
    path.write_text(path.read_text() + mqtt_table(broker, "hall-a"))
    return path


def _has_round_4(relay: Relay) -> bool:
    """The relay keeps round 4 and the standings of round 5 (what the daemon published)."""
    kept = [kept.round for kept in relay.view.rounds.archive.rounds(until=math.inf)]
    answer = relay.view.rounds.answer("/standings.json", {})
    assert answer is not None
    return kept == [4] and [s["round"] for s in json.loads(answer.body)["sections"]] == [5]


async def test_rounds_and_standings_through_a_relay(
    tmp_path: Path, pages: Pages, mosquitto: Mosquitto
) -> None:
    game = chess.pgn.read_game(io.StringIO(GAME))
    assert game is not None
    async with EmulatedBoard(clock=ClockSettings.from_text("90+30"), seed=3) as board:
        config = _relayed_event(tmp_path, str(board.path), mosquitto)
        relay_config = relay_settings(mosquitto, "r1")
        async with running_relay(relay_config) as relay, running_daemon(config) as daemon:
            await wait_for(lambda: daemon.sessions[1].online.is_set(), 10, "board 1 online")
            await board.play(game, speed=SPEED, plies=8)
            await wait_for(lambda: len(daemon.hub.state(1).moves) == 8, 20, "8 plies")  # type: ignore[union-attr]
            await finish_round(daemon)
            assert (await daemon.service.execute(NextRound())).ok
            await wait_for(lambda: _has_round_4(relay), 30, "round 4 on the relay")

            page = await pages.open(f"http://127.0.0.1:{relay.server.port}/")
            await page.locator('nav.views a[data-view="rounds"]').click()
            round4 = page.locator('#rounds details.round[data-round="4"]')
            await expect(round4).to_be_visible()
            await round4.locator("summary").click()
            row = round4.locator('tr.game[data-board="1"]')
            await expect(row.locator("td.result")).to_have_text("0-1")
            await expect(round4.locator('tr.game[data-board="3"] td.result')).to_have_text("½-½")
            await screenshot(page, tmp_path / "relay-rounds.png", full_page=True)
            await row.click()
            dialog = page.locator("#detail")
            await expect(dialog).to_have_attribute("data-round", "4")
            await expect(dialog.locator("td.ply")).to_have_count(8)
            await step_through(page)
            await expect(page).to_have_url(re.compile(r"/#round-4-board-1$"))
            await screenshot(page, tmp_path / "relay-past-game.png")
            await page.keyboard.press("Escape")

            await page.locator('nav.views a[data-view="standings"]').click()
            table = page.locator("#standings table.standings")
            await expect(table.locator("tbody tr")).to_have_count(13)
            await expect(table.locator("th.tb")).to_have_text(["WIN", "BH-C1", "SB"])
            await expect(table.locator('tr[data-rank="1"] td.points')).to_have_text("3½")
            # rank 1 won rounds 1, 3 and 4 (round 4: 0-1 with Black on board 1)
            win = table.locator('tr[data-rank="1"] td[data-tiebreak="WIN"]')
            await expect(win).to_have_text("3")
            await screenshot(page, tmp_path / "relay-standings.png", full_page=True)
            round4_pgn = await fetched(page, "/round/4.pgn")
            assert round4_pgn.count("[Event ") == 5
            daemon_answer = await http_get(daemon.server.port, "/standings.json")
            assert json.loads(await fetched(page, "/standings.json")) == json.loads(
                daemon_answer.body
            )
            await pages.close()


class CountedRoutes:
    """A relay's standings route, counting the pages' looks."""

    def __init__(self, rounds: RelayRounds) -> None:
        self.rounds = rounds
        self.looks = 0

    def answer(self, path: str, query: Mapping[str, list[str]]) -> Answer | None:
        if path == "/standings.json":
            self.looks += 1
        return self.rounds.answer(path, query)


def _standings(points: float, codes: tuple[str, ...] = ("BH-C1", "BH", "SB")) -> bytes:
    row = {
        "place": 1,
        "start_rank": 1,
        "name": "Okafor, Daniel",
        "title": "FM",
        "federation": "AUS",
        "rating": 2315,
        "fide_id": None,
        "points": points,
        "tiebreaks": list(range(1, len(codes) + 1)),
        "games": 4,
    }
    data = {
        "section": "Open",
        "round": 4,
        "after_round": 3,
        "complete": False,
        "tiebreaks": list(codes),
        "standings": [row],
        "pairings": [],
    }
    return json.dumps(data).encode()


async def test_standings_that_reach_a_relay_after_the_result_are_shown(pages: Pages) -> None:
    # The page looks at the standings 0.8 s after a result; a relay may get them over the
    # broker later than that. Here they change only after the page's look: the page looks
    # once more by itself (3 s later, fast-forwarded on the page's clock) and shows them.
    hub = Hub()
    hub.publish_board(board_state(1, ("e4",), round="4.1"))
    rounds = RelayRounds()
    rounds.receive_message(["Open", "standings"], _standings(2.5))
    counted = CountedRoutes(rounds)
    async with BroadcastServer(
        hub, NoArbiter(), port=0, extra_routes=lambda _: [counted]
    ) as server:
        page = await pages.open(f"http://127.0.0.1:{server.port}/", clock=True)
        await page.locator('nav.views a[data-view="standings"]').click()
        points = page.locator('#standings tr[data-rank="1"] td.points')
        await expect(points).to_have_text("2½")
        looks = counted.looks
        hub.publish_board(board_state(1, ("e4",), round="4.1", result="0-1", result_final=True))
        # the page's look after the result, answered with 2½ (the count and the answer are
        # one call); a response awaited instead may be an earlier look's
        await wait_for(lambda: counted.looks > looks, 15, "the look after the result")
        rounds.receive_message(["Open", "standings"], _standings(3.5))
        await page.clock.fast_forward(3_000)  # the page's second look
        await expect(points).to_have_text("3½", timeout=15_000)
        await pages.close()


async def test_a_phone_shows_the_first_three_tie_breaks(pages: Pages, tmp_path: Path) -> None:
    rounds = RelayRounds()
    codes = ("BH-C1", "BH", "SB", "WIN", "BPG", "ARO")
    rounds.receive_message(["Open", "standings"], _standings(2.5, codes))
    async with BroadcastServer(
        Hub(), NoArbiter(), port=0, extra_routes=lambda _: [rounds]
    ) as server:
        base = f"http://127.0.0.1:{server.port}/"
        page = await pages.open(base, width=1280)
        await page.locator('nav.views a[data-view="standings"]').click()
        await expect(page.locator("#standings th.tb")).to_have_text(list(codes))
        for width in (360, 390):
            phone = await pages.open(base, width=width, height=780, mobile=True)
            await phone.locator('nav.views a[data-view="standings"]').click()
            await expect(phone.locator("#standings th.tb:visible")).to_have_text(list(codes[:3]))
            row = phone.locator('#standings tr[data-rank="1"]')
            await expect(row.locator("td.tb:visible")).to_have_text(["1", "2", "3"])
            await assert_fits(phone, width, "six tie-breaks")
            await screenshot(phone, tmp_path / f"phone-{width}-tiebreaks.png")
        await pages.close()  # before the server stops
