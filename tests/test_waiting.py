"""base/waiting.py: a wait cancelled as what it waits for completes ends cancelled.

The emulated board's loops waited with ``asyncio.wait_for``, which on Python 3.11 returns
the result instead of raising when the cancellation and the completion meet: the loop
went on waiting, and the board's ``__aexit__``, awaiting it, hung the test for ever.
"""

from __future__ import annotations

import asyncio

from base.waiting import wait_at_most


async def test_a_cancellation_meeting_the_event_is_not_lost() -> None:
    event = asyncio.Event()

    async def loop_until_cancelled() -> object:
        while True:  # as the board's ticker: wait, work, wait again
            await wait_at_most(event.wait(), 5.0)
            event.clear()

    waiter: asyncio.Task[object] = asyncio.create_task(loop_until_cancelled())
    await asyncio.sleep(0)  # the waiter waits
    event.set()  # its wait completes ...
    waiter.cancel()  # ... and it is cancelled, in the same turn of the loop
    done, _ = await asyncio.wait({waiter}, timeout=2.0)
    assert done, "the cancellation was lost: the loop waits on"
    assert waiter.cancelled()


async def test_it_says_whether_what_it_waited_for_came() -> None:
    event = asyncio.Event()
    assert not await wait_at_most(event.wait(), 0.01)
    event.set()
    assert await wait_at_most(event.wait(), 0.01)
    assert await wait_at_most(event.wait(), None)
