"""The parts the virtual world and its daemon share: journal entries and wake-ups on the
world's event heap (tests/virtual/world.py)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from daemon.round.codec import payload_of
from daemon.round.inputs import RoundInput

__all__ = ["Alarm", "Entry", "Scheduler"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One journalled input; its payload is written when read (a replay, a test), as the
    journal's codec writes it: most inputs of a run are never read back."""

    item: RoundInput

    @property
    def board(self) -> int:
        return self.item.board

    @property
    def kind(self) -> str:
        return self.item.KIND

    @property
    def payload(self) -> Mapping[str, Any]:
        return payload_of(self.item)

    @property
    def at(self) -> float:
        return self.item.at


class Scheduler(Protocol):
    """What runs things at a time: the world's event heap."""

    def at(self, when: float, run: Callable[[], object]) -> None: ...


class Alarm:
    """One wake-up on the world's heap that only moves earlier: :meth:`set` at a later time
    than the pending one does nothing, at an earlier one supersedes it (the superseded heap
    entry then runs nothing). Without it every moved deadline left an entry behind that
    rescheduled itself."""

    def __init__(self, world: Scheduler, run: Callable[[], object]) -> None:
        self._world = world
        self._run = run
        self._due = math.inf
        self._token = 0

    def set(self, when: float) -> None:
        if when < self._due:
            self._due = when
            self._token += 1
            self._world.at(when, functools.partial(self._fire, self._token))

    def _fire(self, token: int) -> None:
        if token == self._token:
            self._due = math.inf
            self._run()
