"""The engine's evaluation in the viewer, against the real daemon and the real Stockfish.

A game played on an emulated e-board: the game view shows the bar beside the board and
the line "+0.34 d22 Nf3 …" for the position on the board, hides both when stepping back
to an earlier position and when the engine is killed, and shows them again once the
daemon has started the engine again. The line's words are checked in the browser too.
"""

from __future__ import annotations

import io
import os
import re
import signal
from pathlib import Path
from typing import Any

import chess.pgn
import pytest
from playwright.async_api import Page, expect

from broadcast.feed.commands import ConfirmResult, SetResult
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import screenshot
from tests.daemon.support import BoardSpec, running_daemon, wait_for, write_config

pytestmark = [pytest.mark.browser, LOOP]

GAME = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 *"
ANALYSIS = "\n[analysis]\nenabled = true\ndepth = 12\n"
#: "+0.34 d12 Nf3 Nc6 …" or "#3 d12 Qh5#": a score, the depth, the best line.
LINE = re.compile(r"^([+-]?\d+\.\d\d|#-?\d+) d\d+( \S+)+$")

WORDS = """
async () => {
  const e = await import("/evaluation.js");
  const fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
  const mated = "7k/5QQ1/8/8/8/8/8/K7 b - - 0 1";
  return {
    text: [
      e.evaluationText({fen, cp: 34, mate: null, depth: 22, line: ["Nf3", "Nc6", "Bb5"]}),
      e.evaluationText({fen, cp: -120, mate: null, depth: 9, line: []}),
      e.evaluationText({fen, cp: 0, mate: null, depth: 1, line: ["e4"]}),
      e.evaluationText({fen, cp: null, mate: 3, depth: 30, line: ["Qh5"]}),
      e.evaluationText({fen, cp: null, mate: -2, depth: 30, line: ["Qh4"]}),
      e.evaluationText({fen: mated, cp: null, mate: 0, depth: 0, line: []}),
      e.evaluationText({board: 1, fen: "", cp: null, mate: null, depth: 0, line: []}),
    ],
    share: [
      e.whiteShare({cp: 0}), e.whiteShare({cp: 800}) > 0.9, e.whiteShare({cp: -100}) < 0.5,
      e.whiteShare({mate: 2}), e.whiteShare({mate: -1}), e.whiteShare({mate: 0, fen: mated}),
    ],
  };
}
"""


async def black_share(page: Page) -> float:
    """The bar's black part, as a share of its height."""
    share: float = await page.evaluate(
        """() => {
          const bar = document.querySelector("#detail .eval-bar").getBoundingClientRect();
          const black = document.querySelector("#detail .eval-black").getBoundingClientRect();
          return black.height / bar.height;
        }"""
    )
    return share


async def forfeit_without_evaluation(daemon: Any, pages: Pages) -> None:
    """A board without an e-board: its start position gets no evaluation (board 1's
    did: board 2's state had come first); set to a double forfeit, the game view shows
    no bar and no line."""
    public = daemon.server.public_hub
    assert not any(e.board == 2 for e in public.evaluations())
    assert (await daemon.service.execute(SetResult(board=2, result="--"))).ok
    assert (await daemon.service.execute(ConfirmResult(board=2))).ok
    page = await pages.open(f"http://127.0.0.1:{daemon.server.port}/#board-2")
    dialog = page.locator("#detail")
    await expect(dialog.locator(".detail-head .result")).to_have_text("double forfeit")
    await expect(dialog).to_have_attribute("data-evaluation", "none")
    await expect(dialog.locator(".eval-bar")).to_be_hidden()


async def test_the_game_view_shows_the_engines_evaluation(tmp_path: Path, pages: Pages) -> None:
    game = chess.pgn.read_game(io.StringIO(GAME))
    assert game is not None
    final = game.end().board().fen()
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=8) as board:
        config = write_config(
            tmp_path,
            [
                BoardSpec(1, str(board.path), "Carlsen, Magnus", "Caruana, Fabiano"),
                BoardSpec(2, None, "Absent, Anna", "Absent, Boris"),  # no e-board
            ],
            extra=ANALYSIS,
        )
        async with running_daemon(config) as daemon:
            await wait_for(daemon.sessions[1].online.is_set, 10, "board 1 online")
            await board.play(game, speed=25)
            public = daemon.server.public_hub
            await wait_for(lambda: public.state(1).fen == final, 30, "the game in public")  # type: ignore[union-attr]
            page = await pages.open(f"http://127.0.0.1:{daemon.server.port}/#board-1")
            dialog = page.locator("#detail")
            line, bar = dialog.locator(".eval-line"), dialog.locator(".eval-bar")
            await expect(dialog).to_have_attribute("data-evaluation", "current", timeout=60_000)
            await expect(bar).to_be_visible()
            await expect(line).to_have_text(LINE)
            shown = public.evaluations()[0]
            assert shown.fen == final
            score = await line.text_content()
            assert score is not None
            assert score.startswith(f"{shown.cp / 100:+.2f}" if shown.cp is not None else "#")
            assert " ".join(shown.line[:3]) in score
            share = await black_share(page)
            if shown.cp is not None and shown.cp > 50:
                assert share < 0.5
            await screenshot(page, tmp_path / "game-evaluation.png")

            await page.keyboard.press("Home")  # an earlier position: not the one evaluated
            await expect(line).to_be_hidden()
            await expect(bar).to_be_hidden()
            await page.keyboard.press("End")
            await expect(line).to_have_text(LINE)

            killed = daemon.analysis.analyst.engine.pid  # type: ignore[union-attr]
            assert killed is not None
            os.kill(killed, signal.SIGKILL)  # the engine crashes: the bar goes
            await expect(dialog).to_have_attribute("data-evaluation", "none", timeout=30_000)
            await expect(bar).to_be_hidden()
            await expect(line).to_be_hidden()
            await expect(dialog).to_have_attribute("data-evaluation", "current", timeout=60_000)
            await expect(bar).to_be_visible()  # started again by the daemon
            assert daemon.analysis.analyst.engine.pid not in (None, killed)  # type: ignore[union-attr]

            await forfeit_without_evaluation(daemon, pages)
            words = await page.evaluate(WORDS)
            assert words["text"] == [
                "+0.34 d22 Nf3 Nc6 Bb5",
                "-1.20 d9",
                "0.00 d1 e4",
                "#3 d30 Qh5",
                "#-2 d30 Qh4",
                "1-0",
                "",
            ]
            assert words["share"] == [0.5, True, True, 1, 0, 1]
            await pages.close()
