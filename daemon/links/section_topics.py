"""Past rounds and standings kept on the broker for relays, as the daemon's server shows them.

What spectators of the daemon see beside the boards (``/rounds.json``, ``/round/N.pgn``,
a past game, ``/standings.json``), published retained once it is public (topics and
payloads: :mod:`broadcast.outputs.mqtt_rounds`), so a relay serves the same:

* a past round once the public may see it (``delay`` seconds after the section moved
  on, as :class:`~broadcast.web.rounds.RoundRoutes` shows it), results as the ``results``
  setting says (a provisional one is ``*`` under ``"confirmed"``);
* each section's standings as ``/standings.json`` has them (the public hub's results);
* the round each section is playing is cleared once per round: a round left on the
  broker by a crash between its archive and the round change is no past round.

Sent again after every reconnect and every restart (the publisher's outbox keeps every
retained topic): relays are complete again. :meth:`SectionTopics.update` is the step
(no I/O of its own); :meth:`SectionTopics.serve` runs it on each public change, and each
second for a delay's end.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

from broadcast.feed.archive import ArchivedRound, RoundArchive
from broadcast.feed.hub import Hub
from broadcast.feed.public_results import ResultsPolicy, public_state
from broadcast.outputs.mqtt_rounds import (
    round_payload,
    round_topic,
    standings_payload,
    standings_topic,
)
from broadcast.outputs.mqtt_wire import Topics
from daemon.links.standings import StandingsRoutes

__all__ = ["SectionTopics"]

_TICK = 1.0  # seconds between two looks when nothing is published (a delay runs out)


class SectionTopics:
    """Keeps each section's past rounds and standings retained on the broker.

    Args:
        publish: keeps a topic retained (``MqttPublisher.publish_retained``).
        topics: the daemon's topics.
        archive: the past rounds.
        standings: the standings as the daemon's server computes them.
        current: each section's round now, by name.
        delay / results: the public delay and the ``results`` setting.
        clock: wall clock (epoch seconds).
    """

    def __init__(
        self,
        publish: Callable[[str, bytes], None],
        topics: Topics,
        archive: RoundArchive,
        standings: StandingsRoutes,
        current: Callable[[], Mapping[str, int]],
        *,
        delay: float = 0.0,
        results: ResultsPolicy = "confirmed",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.publish = publish
        self.topics = topics
        self.archive = archive
        self.standings = standings
        self.current = current
        self.delay = delay
        self.results = results
        self._clock = clock
        self._rounds: dict[tuple[str, int], ArchivedRound] = {}
        self._standings: dict[str, dict[str, Any]] = {}
        self._cleared: set[tuple[str, int]] = set()

    def update(self) -> None:
        """Publish what changed since the last look."""
        shown = {(kept.section, kept.round): kept for kept in self._public_rounds()}
        for key, kept in shown.items():
            if self._rounds.get(key) is not kept:
                self.publish(round_topic(self.topics, *key), round_payload(self._public(kept)))
        for key in self._rounds.keys() - shown.keys():
            self.publish(round_topic(self.topics, *key), b"")
        self._rounds = shown
        for section, number in self.current().items():
            key = (section, number)
            if key not in shown and key not in self._cleared:
                self._cleared.add(key)
                self.publish(round_topic(self.topics, section, number), b"")
        for name in self.standings.sections():
            if name not in self.standings.links:
                continue
            data = self.standings.section(name)
            if self._standings.get(name) is not data:
                self._standings[name] = data
                self.publish(standings_topic(self.topics, name), standings_payload(data))

    async def serve(self, hub: Hub) -> None:
        """Update on every change of the public hub ``hub``, and each second; until cancelled."""
        with hub.watch() as watch:
            while True:
                self.update()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_TICK):
                        await watch.changed()

    def _public_rounds(self) -> list[ArchivedRound]:
        return self.archive.rounds(until=self._clock() - self.delay)

    def _public(self, kept: ArchivedRound) -> ArchivedRound:
        """The round as the public sees it: results as the ``results`` setting says, and
        ``at`` the time it became public (a relay shows it at once)."""
        states = tuple(public_state(state, self.results) for state in kept.states)
        return dataclasses.replace(kept, states=states, at=kept.at + self.delay)
