"""Waiting on a condition, the one way tests wait (never a fixed sleep and then a check)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["wait_until"]


async def wait_until(condition: Callable[[], bool], within: float = 10.0, what: str = "") -> None:
    """Return once ``condition()`` is true; fail naming ``what`` after ``within`` seconds.

    Polls every 10 ms; the limits are generous, for a loaded CI machine.
    """
    try:
        async with asyncio.timeout(within):
            while not condition():  # noqa: ASYNC110 - a plain value has no event to wait on
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"not true within {within:g} s: {what or condition}") from None
