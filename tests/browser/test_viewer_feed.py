"""The viewer against a real broadcast server fed by hand: its model, reconnects, phones."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Page, WebSocket, expect

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState, BoardStatus
from broadcast.web.server import BroadcastServer
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import clock_seconds, screenshot, wait_for_pieces
from tests.browser.servers import NoArbiter, board_state, free_port

pytestmark = [pytest.mark.browser, LOOP]


@pytest_asyncio.fixture(loop_scope="session")
async def server() -> AsyncIterator[BroadcastServer]:
    """A broadcast server on a fixed free port, with boards 1 to 4 in its hub."""
    hub = Hub()
    for number in range(1, 5):
        hub.publish_board(board_state(number))
    started = BroadcastServer(hub, NoArbiter(), port=free_port())
    async with started:
        yield started


MODEL_SCENARIO = """
async () => {
  const m = await import("/model.js");
  const start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
  const e4 = {san: "e4", uci: "e2e4", clock: 5398, emt: 2};
  const e5 = {san: "e5", uci: "e7e5", clock: 5390, emt: 10};
  const c5 = {san: "c5", uci: "c7c5", clock: 5391, emt: 9};
  const board = {board: 1, moves: [], fen: start, last_move: null, white_clock: 5400,
                 black_clock: 5400, running: "white", clock_at: 1000, status: "online",
                 result: "*", result_final: false};
  const feed = new m.FeedState();
  const out = {};
  const act = (event) => feed.receive(event, 0).action;
  out.snapshot = feed.receive({type: "snapshot", seq: 5, server_time: 1010, delay: 0,
                               boards: [board]}, 1000).action;
  out.offset = feed.offset;
  out.stale = act({type: "status", seq: 5, board: 1, status: "offline"});
  out.move = act({type: "move", seq: 6, board: 1, ply: 0, moves: [e4],
                  fen: "after e4", last_move: "e2e4"});
  out.gap = act({type: "status", seq: 8, board: 1, status: "offline"});
  out.wrongPly = act({type: "move", seq: 7, board: 1, ply: 3, moves: [e5], fen: "x",
                      last_move: "e7e5"});
  out.unknownBoard = act({type: "clock", seq: 7, board: 9, white_clock: 1,
                          black_clock: 1, running: null, clock_at: 1});
  out.e5 = act({type: "move", seq: 7, board: 1, ply: 1, moves: [e5], fen: "after e5",
                last_move: "e7e5"});
  out.correction = act({type: "correction", seq: 8, board: 1, ply: 1, moves: [c5],
                        fen: "after c5", last_move: "c7c5"});
  out.sans = feed.boards.get(1).moves.map((move) => move.san);
  out.takeback = act({type: "takeback", seq: 9, board: 1, ply: 1, fen: "after e4",
                      last_move: "e2e4"});
  out.afterTakeback = [feed.boards.get(1).moves.length, feed.boards.get(1).last_move];
  out.result = act({type: "result", seq: 10, board: 1, result: "1-0", result_final: true});
  out.newBoard = act({type: "board", seq: 11, board: 2, state: {...board, board: 2}});
  out.seq = feed.seq;
  out.boards = [...feed.boards.keys()];
  out.pong = (feed.receivePong(2000, 1000, 1002), feed.offset);
  feed.receive({type: "snapshot", seq: 12, server_time: 5000, delay: 3, boards: []}, 1000);
  out.afterPong = [feed.offset, feed.delay, feed.seq, feed.boards.size];
  const clocks = {white_clock: 100, black_clock: 50, running: "white", clock_at: 1000};
  out.running = m.shownClocks(clocks, 1010, 0);
  out.delayed = m.shownClocks(clocks, 1010, 4);
  out.early = m.shownClocks(clocks, 990, 0);
  out.flag = m.shownClocks(clocks, 2000, 0);
  out.stopped = m.shownClocks({...clocks, running: null}, 1010, 0);
  out.none = m.shownClocks({white_clock: null, black_clock: null, running: null,
                            clock_at: null}, 1010, 0);
  out.formats = [3723, 600, 59.5, 9, 0.2, 0, null].map(m.formatClock);
  out.setUp = m.numberedMoves({moves: [c5, e4, e5],
                               fen: "8/8/8/8/8/8/8/8 w - - 0 13"}).map(
    (row) => [row.number, row.white && row.white.san, row.black && row.black.san]);
  out.results = ["1-0", "1/2-1/2", "+-", "-+", "--", "*"].map(m.resultText);
  out.squares = [m.lastMoveSquares("e7e8q"), m.lastMoveSquares(null)];
  out.urls = [m.socketUrl({protocol: "https:", host: "h:1"}, "/ws", 7),
              m.socketUrl({protocol: "http:", host: "h"}, "/ws", null)];
  return out;
}
"""


async def test_the_feed_model_applies_events_in_order(
    server: BroadcastServer, pages: Pages
) -> None:
    page = await pages.open(f"http://127.0.0.1:{server.port}/")
    out = await page.evaluate(MODEL_SCENARIO)
    assert out["snapshot"] == "snapshot"
    assert out["offset"] == 10
    assert out["stale"] == "stale"
    assert out["move"] == "changed"
    assert out["gap"] == "gap"
    assert out["wrongPly"] == "resync"
    assert out["unknownBoard"] == "resync"
    assert out["e5"] == "changed"
    assert out["correction"] == "changed"
    assert out["sans"] == ["e4", "c5"]
    assert out["takeback"] == "changed"
    assert out["afterTakeback"] == [1, "e2e4"]
    assert out["result"] == "changed"
    assert out["newBoard"] == "changed"
    assert out["seq"] == 11
    assert out["boards"] == [1, 2]
    assert out["pong"] == 999
    assert out["afterPong"] == [999, 3, 12, 0], "a pong's offset beats a snapshot's"
    assert out["running"] == {"white": 90, "black": 50}
    assert out["delayed"] == {"white": 94, "black": 50}
    assert out["early"] == {"white": 100, "black": 50}
    assert out["flag"] == {"white": 0, "black": 50}
    assert out["stopped"] == {"white": 100, "black": 50}
    assert out["none"] == {"white": None, "black": None}
    assert out["formats"] == ["1:02:03", "10:00", "1:00", "0:09", "0:01", "0:00", "–"]
    assert out["setUp"] == [[11, None, "c5"], [12, "e4", "e5"]]
    assert out["results"] == ["1-0", "½-½", "1-0 forfeit", "0-1 forfeit", "double forfeit", ""]
    assert out["squares"] == [["e7", "e8"], []]
    assert out["urls"] == ["wss://h:1/ws?since=7", "ws://h/ws"]


async def test_the_viewer_reconnects_and_resumes_after_its_last_seq(
    server: BroadcastServer, pages: Pages
) -> None:
    hub = server.hub
    page = await pages.open(None)
    sockets: list[WebSocket] = []
    frames: dict[str, list[str]] = {}

    def opened(ws: WebSocket) -> None:
        sockets.append(ws)
        received = frames.setdefault(ws.url, [])
        ws.on("framereceived", lambda payload: received.append(str(payload)))

    page.on("websocket", opened)
    await page.goto(f"http://127.0.0.1:{server.port}/")
    body = page.locator("body")
    await expect(body).to_have_attribute("data-seq", str(hub.seq))
    await expect(body).to_have_attribute("data-connection", "open")
    seen = hub.seq

    pages.tolerate("WebSocket connection to")  # refused while the server is away
    pages.tolerate("net::ERR_CONNECTION_REFUSED")  # and so is a fetch the page makes then
    await server.close()
    hub.publish_board(board_state(1, ("e4",)))  # played while the viewer is cut off
    hub.publish_board(board_state(3, ("d4", "Nf6")))
    await server.start()

    await wait_for_pieces(page, '.card[data-board="1"]', {"e2": None, "e4": "white pawn"})
    await wait_for_pieces(page, '.card[data-board="3"]', {"d4": "white pawn", "f6": "black knight"})
    await expect(body).to_have_attribute("data-seq", str(hub.seq))
    base = f"ws://127.0.0.1:{server.port}/ws"
    assert sockets[0].url == base
    assert sockets[-1].url == f"{base}?since={seen}"
    assert frames[sockets[-1].url][0].startswith('{"type":"resumed"')
    await pages.close()


#: A game long enough to fill a move list (a Ruy Lopez, 40 plies).
LONG_GAME = (
    "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7",
    "Re1", "b5", "Bb3", "d6", "c3", "O-O", "h3", "Nb8", "d4", "Nbd7",
    "Nbd2", "Bb7", "Bc2", "Re8", "Nf1", "Bf8", "Ng3", "g6", "a4", "c5",
    "d5", "c4", "Bg5", "h6", "Be3", "Nc5", "Qd2", "h5", "Bg5", "Be7",
)  # fmt: skip


def _crowded(board_number: int, clock_at: float) -> BoardState:
    """A board whose card takes all the room it can: long names and ratings, a long game,
    every status, result and kind of clock (hours, seconds, none, low, running)."""
    status, result, final, white_clock, black_clock, running = [
        (BoardStatus.CATCHING_UP, "1/2-1/2", False, 35999.0, 9.0, "black"),
        (BoardStatus.ONLINE, "*", False, 5400.0, 600.0, "black"),
        (BoardStatus.OUT_OF_SYNC, "1-0", True, None, None, None),
        (BoardStatus.OFFLINE, "0-1", False, 7.5, 36000.0, "white"),
    ][board_number - 1]
    sans = LONG_GAME if board_number != 2 else ("e4", "c5", "Nf3")
    return board_state(
        board_number,
        sans,
        white="Nepomniachtchi-Abdusattorov, Ian Alexandrovich Maximilian",
        black="Wojtaszek-Vachier-Lagrave, Radosław Maxime Bartholomew",
        white_elo=2799,
        black_elo=2801,
        status=status,
        result=result,
        result_final=final,
        white_clock=white_clock,
        black_clock=black_clock,
        running=running,
        clock_at=clock_at,
        recovered_plies=12,
        battery=7,
    )


async def _drawn(page: Page, cards: int) -> None:
    """Wait until the page has settled: its fonts loaded, and every card's board drawn at
    the size its card gives it (chessground sizes it after the layout, to whole pixels a
    square)."""
    await page.evaluate("document.fonts.ready.then(() => true)")
    await page.wait_for_function(
        """(cards) => {
          const grounds = [...document.querySelectorAll(".card cg-container")];
          return grounds.length === cards && grounds.every((ground) => {
            const host = ground.closest(".cg-host").getBoundingClientRect();
            const width = ground.getBoundingClientRect().width;  // whole pixels a square
            return width <= host.width + 0.5 && host.width - width < 8;
          });
        }""",
        arg=cards,
    )


async def _wide(page: Page, phone: int) -> list[str]:
    """What reaches past the right edge of the phone, for the failure message: elements,
    and text wider than its element (a phone's browser zooms out to show a page wider
    than the screen, so the window is wider too)."""
    found: list[str] = await page.evaluate(
        """(phone) => [`window ${window.innerWidth} px, zoom ${window.visualViewport.scale}`,
            ...[...document.querySelectorAll("body *")]
            .filter((e) => e.getBoundingClientRect().right > phone
                           || e.scrollWidth > e.clientWidth + 1)
            .slice(0, 8)
            .map((e) => `${e.tagName.toLowerCase()}.${e.className} ${e.textContent.slice(0, 30)}`
                        + ` → ${e.getBoundingClientRect().right.toFixed(2)} px,`
                        + ` content ${e.scrollWidth} of ${e.clientWidth} px`)]""",
        phone,
    )
    return found


@pytest.mark.parametrize("phone", [390, 320])
async def test_the_viewer_fits_a_phone(
    server: BroadcastServer, pages: Pages, tmp_path: Path, phone: int
) -> None:
    clock_at = time.time() - 65.0
    for number in range(1, 5):
        server.hub.publish_board(_crowded(number, clock_at))
    page = await pages.open(
        f"http://127.0.0.1:{server.port}/", width=phone, height=844, mobile=True
    )
    await expect(page.locator(".card")).to_have_count(4)
    await _drawn(page, 4)
    width = await page.evaluate("document.documentElement.scrollWidth")
    wide = await _wide(page, phone)
    # scrollWidth is whole pixels: an edge a fraction of a pixel past the screen (widths
    # in device pixels at a scale of 2) makes it one more, and nobody scrolls for that
    assert width <= phone + 1, f"the page is {width} px wide on a {phone} px phone: {wide}"
    for card in await page.locator(".card").all():
        box = await card.bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= phone
        inner = await card.evaluate("(card) => card.scrollWidth <= card.clientWidth")
        assert inner, "a card's content is wider than the card"
    running = page.locator('.card[data-board="2"] .clock.running')
    await expect(running).to_have_attribute("data-color", "black")
    shown = clock_seconds(await running.inner_text())
    expected = 600.0 - (time.time() - clock_at)  # docs/broadcast.md, "Showing clocks"
    assert expected - 2 <= shown <= expected + 2
    await screenshot(page, tmp_path / f"phone-{phone}.png")

    await page.locator('.card[data-board="2"]').tap()
    dialog = page.locator("#detail")
    await expect(dialog).to_be_visible()
    await expect(dialog.locator("td.ply .san")).to_have_text(["e4", "c5", "Nf3"])
    board_box = await dialog.locator(".board-box").bounding_box()
    moves_box = await dialog.locator(".moves-box").bounding_box()
    assert board_box is not None
    assert moves_box is not None
    assert board_box["x"] >= 0
    assert board_box["x"] + board_box["width"] <= phone
    assert moves_box["y"] >= board_box["y"] + board_box["height"], "moves go below the board"
    await screenshot(page, tmp_path / f"phone-{phone}-board.png")
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= phone, f"the enlarged board is {width} px wide on a {phone} px phone"
    await pages.close()
