"""What every output that follows the hub shares (MQTT, lichess, PGN folder, webhook).

An output has a pure core fed by ``publish_*`` methods, a :meth:`HubOutput.run` loop that
delivers, and a :meth:`HubOutput.follow` loop that feeds it from a hub; :meth:`serve` runs
both. :class:`BoardOutput` is the common case of an output that only wants board states.
"""

from __future__ import annotations

import abc
import asyncio

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState

__all__ = ["BoardOutput", "HubOutput"]


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
