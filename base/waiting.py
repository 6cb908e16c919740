"""Waiting for something at most some seconds, with a cancellation never lost.

On Python 3.11 ``asyncio.wait_for`` loses a cancellation that arrives as the awaited
thing completes (it returns the result instead of raising): a loop that waits so, then
cancelled, goes on waiting, and whoever awaits its end waits for ever. ``asyncio.timeout``
does not lose it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

__all__ = ["wait_at_most"]


async def wait_at_most(awaitable: Awaitable[object], seconds: float | None) -> bool:
    """Await ``awaitable`` for ``seconds`` at most (None: no limit); whether it finished
    in time. A cancellation of the caller always raises ``CancelledError``."""
    try:
        async with asyncio.timeout(seconds):
            await awaitable
    except TimeoutError:
        return False
    return True
