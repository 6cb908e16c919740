"""What the browser tests read off the pages: pieces by square, clocks, replies."""

from __future__ import annotations

import math
import os
from pathlib import Path

from playwright.async_api import Page

__all__ = [
    "PIECES_BY_SQUARE",
    "clock_seconds",
    "clock_text",
    "last_move_squares",
    "pieces_on",
    "running_clock",
    "screenshot",
    "wait_for_pieces",
]

#: Screenshots are for people (and docs/images/): taken only when asked, since encoding a
#: page as PNG costs Chromium CPU that a test run shares with the rest of the suite.
SCREENSHOTS = os.environ.get("DGTCAST_SCREENSHOTS", "") not in ("", "0")

#: Square → "white pawn", from where each chessground ``piece`` element is drawn inside
#: its board (White at the bottom): the square under the piece's centre.
PIECES_BY_SQUARE = """
([root, tag]) => {
  const board = document.querySelector(root + " cg-board");
  if (board === null) return null;
  const box = board.getBoundingClientRect();
  const found = {};
  for (const node of board.querySelectorAll(tag)) {
    const r = node.getBoundingClientRect();
    const file = Math.floor(((r.left + r.width / 2) - box.left) / (box.width / 8));
    const rank = 8 - Math.floor(((r.top + r.height / 2) - box.top) / (box.height / 8));
    const name = "abcdefgh"[file] + rank;
    found[name] = node.className.split(" ").filter(c => c === "white" || c === "black"
      || ["pawn", "knight", "bishop", "rook", "queen", "king", "last-move"].includes(c)).join(" ");
  }
  return found;
}
"""


async def pieces_on(page: Page, root: str) -> dict[str, str]:
    """Every piece drawn in the board under ``root`` (a CSS selector), by square."""
    found: dict[str, str] | None = await page.evaluate(PIECES_BY_SQUARE, [root, "piece"])
    assert found is not None, f"no board under {root}"
    return found


async def last_move_squares(page: Page, root: str) -> set[str]:
    """The squares highlighted as the last move in the board under ``root``."""
    found: dict[str, str] | None = await page.evaluate(PIECES_BY_SQUARE, [root, "square.last-move"])
    assert found is not None, f"no board under {root}"
    return set(found)


async def wait_for_pieces(page: Page, root: str, expected: dict[str, str | None]) -> None:
    """Wait until each square of ``expected`` holds that piece (None: empty)."""
    script = f"""
    (expected) => {{
      const found = ({PIECES_BY_SQUARE})([{root!r}, "piece"]);
      return found !== null && Object.entries(expected).every(
        ([square, piece]) => (found[square] ?? null) === piece);
    }}
    """
    await page.wait_for_function(script, arg=expected)


def clock_text(seconds: float) -> str:
    """A time as the pages show it: m:ss, h:mm:ss from an hour on, rounded up."""
    whole = max(0, math.ceil(seconds - 0.001))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02}:{rest % 60:02}" if hours else f"{rest // 60}:{rest % 60:02}"


def clock_seconds(text: str) -> int:
    """``"2:59"`` → 179, ``"1:02:03"`` → 3723."""
    total = 0
    for part in text.strip().split(":"):
        total = total * 60 + int(part)
    return total


async def running_clock(page: Page, root: str) -> tuple[str, int, str] | None:
    """The colour and seconds of the running clock under ``root``, with the feed's
    ``seq`` read at the same instant; None while no clock runs there."""
    found: dict[str, str] | None = await page.evaluate(
        """(root) => {
          const clock = document.querySelector(root + " .clock.running");
          if (clock === null) return null;
          return {color: clock.dataset.color, text: clock.textContent,
                  seq: document.body.dataset.seq};
        }""",
        root,
    )
    if found is None:
        return None
    return found["color"], clock_seconds(found["text"]), found["seq"]


async def screenshot(page: Page, path: Path, *, full_page: bool = False) -> None:
    """Save the page as ``path`` when ``DGTCAST_SCREENSHOTS=1`` (docs/viewer.md)."""
    if SCREENSHOTS:
        await page.screenshot(path=path, full_page=full_page)
