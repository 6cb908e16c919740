"""What every output that follows the hub shares (MQTT, lichess, PGN folder, webhook).

An output has a pure core fed by ``publish_*`` methods, a :meth:`HubOutput.run` loop that
delivers, and a :meth:`HubOutput.follow` loop that feeds it from a hub; :meth:`serve` runs
both. :class:`BoardOutput` is the common case of an output that only wants board states.
:class:`WorkLoop` is the one wake-and-drain loop every output's :meth:`~HubOutput.run`
is made of.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Awaitable, Callable
from typing import NoReturn

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState

__all__ = ["BoardOutput", "HubOutput", "WorkLoop"]


class HubOutput(abc.ABC):
    """An output fed from a hub."""

    @abc.abstractmethod
    async def follow(self, hub: Hub) -> None:
        """Feed the output from ``hub`` until cancelled."""

    @abc.abstractmethod
    async def run(self) -> None:
        """Deliver until cancelled; trouble outside is retried, never raised."""

    async def serve(self, hub: Hub) -> None:
        """:meth:`follow` ``hub`` and :meth:`run`, until cancelled."""
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(self.follow(hub))
            tasks.create_task(self.run())


class BoardOutput(HubOutput):
    """An output that takes every board change and no alerts."""

    @abc.abstractmethod
    def publish_board(self, state: BoardState) -> None:
        """A board changed."""

    async def follow(self, hub: Hub) -> None:
        """Take every board change of ``hub`` until cancelled."""
        async with hub.subscribe(alerts=False) as subscription:
            async for update in subscription:
                for state in update.boards:
                    self.publish_board(state)


async def _as_is(waiting: Awaitable[object]) -> None:
    await waiting


class WorkLoop:
    """Take work while there is some, then sleep until woken: every output's delivery loop.

    ``publish_*`` methods record work in the output's core and call :meth:`wake`; the
    output's ``run`` calls :meth:`run` with one ``step``, which does one piece of work and
    says whether there was any.
    """

    def __init__(self) -> None:
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()

    def wake(self) -> None:
        """There is new work: the loop takes it, and :meth:`wait_idle` waits for it."""
        self._idle.clear()
        self._wake.set()

    async def wait_idle(self) -> None:
        """Wait until a step found nothing to do (a flush at shutdown, or a test)."""
        await self._idle.wait()

    async def run(
        self,
        step: Callable[[], Awaitable[bool]],
        *,
        deadline: Callable[[], float | None] = lambda: None,
        waiting: Callable[[Awaitable[object]], Awaitable[object]] = _as_is,
    ) -> NoReturn:
        """Call ``step`` until it finds nothing to do, then sleep; until cancelled.

        Args:
            step: does one piece of work; False when there was none.
            deadline: the loop time by which to step again unwoken (None: only when woken).
            waiting: wraps each sleep (MQTT ends it when the connection is lost).
        """
        loop = asyncio.get_running_loop()
        while True:
            self._wake.clear()
            if await step():
                continue
            self._idle.set()
            until = deadline()
            delay = None if until is None else max(0.0, until - loop.time())
            await waiting(self._sleep(delay))

    async def _sleep(self, delay: float | None) -> None:
        try:
            async with asyncio.timeout(delay):
                await self._wake.wait()
        except TimeoutError:
            pass
