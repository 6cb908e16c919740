"""The arbiter channel's token throttle on its own: who counts as one client, how long a
wrong token's answer is held, the bounds on held answers, and holds that end when
their connection does (the channel itself: tests/daemon/shell/test_arbiter_guard.py)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from broadcast.web.arbiter_guard import TokenThrottle, client_key
from tests.hand_clock import HandClock
from tests.waiting import wait_until


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("127.0.0.1", "loopback"),
        ("127.45.3.9", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.2", "loopback"),
        ("192.0.2.7", "192.0.2.7"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),
        ("?", "?"),
    ],
)
def test_rotating_over_loopback_or_a_64_is_one_client(address: str, key: str) -> None:
    assert client_key(address) == key


async def test_answers_are_held_within_bounds_and_end_with_their_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = HandClock(1000.0)
    throttle = TokenThrottle(first_delay=60.0, max_held_per_client=2, max_held=3, clock=clock)
    closed = {name: asyncio.Event() for name in ("a", "b", "c", "d", "e")}

    def guess(address: str, name: str) -> asyncio.Task[None]:
        return asyncio.create_task(throttle.failed(address, closed[name].wait))

    with caplog.at_level(logging.WARNING, logger="broadcast.web.arbiter_guard"):
        await guess("127.0.0.1", "a")  # the first wrong token is answered at once
        held = [guess("127.0.0.1", "b"), guess("127.0.0.7", "c")]
        await wait_until(lambda: throttle.held == 2, 10, "two answers held")
        await guess("127.0.0.1", "d")  # this client holds its share: answered at once
        await guess("192.0.2.7", "e")  # its first: at once
        other = guess("192.0.2.7", "e")
        await wait_until(lambda: throttle.held == 3, 10, "another client's answer held")
        await guess("198.51.100.1", "a")  # every place taken: answered at once
        assert not any(task.done() for task in [*held, other])
        closed["b"].set()  # the connection closed, or the daemon stops
        await asyncio.wait_for(held[0], 10)
        assert throttle.held == 2
        assert throttle.failures("127.0.0.3") == 4
        throttle.succeeded("127.0.0.3")
        assert throttle.failures("127.0.0.1") == 0
        for event in closed.values():
            event.set()
        await asyncio.wait_for(asyncio.gather(held[1], other), 10)
    lines = [r.getMessage() for r in caplog.records if "wrong arbiter token" in r.getMessage()]
    assert lines == [
        "wrong arbiter token from 127.0.0.1 (1 since the last line, from 1 client(s);"
        " 1 in a row from it); its answer waits 0 s"
    ]
