"""Fixtures of the browser tests: Debian's Chromium, headless, driven by Playwright.

Never ``playwright install``: the tests use ``/usr/bin/chromium`` (``make system``).
Every page opened through :class:`Pages` is watched: an uncaught script error, a console
error, an HTTP error answer or a request leaving the test's own server (a font, a CDN)
fails the test.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import pytest_asyncio
from playwright.async_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Request,
    Response,
    async_playwright,
)
from playwright.async_api import Error as PlaywrightError

__all__ = ["CHROMIUM", "LAUNCH_ARGS", "LOOP", "Pages"]

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Browser tests share the browser, so they run on the session's event loop:
#: ``pytestmark = [pytest.mark.browser, LOOP]`` in each module.
LOOP = pytest.mark.asyncio(loop_scope="session")
#: Milliseconds Playwright waits for anything on a page.
PAGE_TIMEOUT = 10_000


class Pages:
    """Opens pages in fresh browser contexts and records what goes wrong on them.

    Args:
        browser: the running browser.
    """

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.problems: list[str] = []
        self.tolerated: list[str] = []
        self._contexts: list[BrowserContext] = []

    async def open(
        self,
        url: str | None,
        *,
        width: int = 1280,
        height: int = 900,
        mobile: bool = False,
        clock: bool = False,
    ) -> Page:
        """A new page (own cookies and sessionStorage) showing ``url`` (None: blank).

        With ``clock``, the page's timers and ``Date`` run on Playwright's clock, installed
        before the page loads: time flows as usual, and ``page.clock.fast_forward(ms)``
        fires at once what a page does after a while (a hall's next screen, a second
        look), instead of the test waiting for it.
        """
        context = await self.browser.new_context(
            viewport={"width": width, "height": height},
            is_mobile=mobile,
            has_touch=mobile,
            device_scale_factor=2 if mobile else 1,
        )
        self._contexts.append(context)
        context.set_default_timeout(PAGE_TIMEOUT)
        page = await context.new_page()
        page.on("pageerror", lambda error: self.problems.append(f"script error: {error}"))
        page.on("console", self._console)
        page.on("response", self._response)
        page.on("request", self._request)
        if clock:
            await page.clock.install()
        if url is not None:
            await page.goto(url)
        return page

    def tolerate(self, text: str) -> None:
        """Console errors containing ``text`` are expected (a server going away)."""
        self.tolerated.append(text)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type != "error":
            return
        if not any(text in message.text for text in self.tolerated):
            self.problems.append(f"console error: {message.text}")

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status} for {response.url}")

    def _request(self, request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme not in ("data", "blob") and parts.hostname != "127.0.0.1":
            self.problems.append(f"request outside the test server: {request.url}")

    async def close(self) -> None:
        """Close every page; call it before the server stops."""
        contexts, self._contexts = self._contexts, []
        for context in contexts:
            with contextlib.suppress(PlaywrightError):
                await context.close()


def _chromium_or_skip() -> Path:
    if CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    message = f"{CHROMIUM} is missing: install Debian's chromium (make system)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser() -> AsyncIterator[Browser]:
    """Headless Chromium, started once for every browser test (each test opens its own
    contexts). The tests run on the session's event loop with it (``LOOP``)."""
    executable = _chromium_or_skip()
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(executable), headless=True, args=LAUNCH_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(loop_scope="session")
async def pages(browser: Browser) -> AsyncIterator[Pages]:
    """Watched pages; the test fails if a page had a script, console or HTTP error."""
    opened = Pages(browser)
    try:
        yield opened
    finally:
        await opened.close()
    assert not opened.problems, "\n".join(opened.problems)
