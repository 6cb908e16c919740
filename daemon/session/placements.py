"""The placements a board session journals: each new one, unless the board floods (pure).

:class:`PlacementGate` sends a placement on as a ``placement`` input unless it repeats the
one sent last (a flicker back), and holds placements back while the board floods the
line (:class:`~daemon.session.flood.FloodGuard`): the latest held one goes on at each
release, and the flood's start and calm are journalled (``flood``) and said.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable
from dataclasses import replace

import chess

from daemon.round.inputs import FloodInput, PlacementInput
from daemon.session.actions import Record
from daemon.session.flood import FloodGuard
from drivers.observations import PlacementObserved

__all__ = ["PlacementGate"]


class PlacementGate:
    """One board's placements on their way to the journal.

    Args:
        number: the board's number (for the log).
        record: journals and applies one round input.
        say: writes a log line ``(level, text)``.
    """

    def __init__(self, number: int, record: Record, say: Callable[[int, str], None]) -> None:
        self.number = number
        self.flood = FloodGuard()
        #: When :meth:`receive_time` is due (a held placement, or the calm to notice).
        self.due = math.inf
        self._record = record
        self._say = say
        self._held: PlacementObserved | None = None  # held back by the flood guard
        self._last: PlacementObserved | None = None  # the placement sent last
        self._recent: deque[chess.BaseBoard] = deque(maxlen=2)  # the last placements offered

    def forget_connection(self) -> None:
        """A new connection: nothing held, nothing sent on it yet."""
        self._held = None
        self._last = None

    def offer(self, placement: PlacementObserved, at: float) -> None:
        """Send a placement on, unless the board floods the line."""
        flood = self.flood
        was_flooding = flood.flooding
        board, recent = placement.board, self._recent
        flicker = len(recent) == 2 and board == recent[0] != recent[1]
        recent.append(board)
        if flood.admit(at, flicker=flicker):
            self._held = None
            self.send(placement)
        else:
            self._held = placement
        if flood.flooding and not was_flooding:
            self._say(
                logging.WARNING,
                f"= board {self.number} floods the line ({flood.rate} placements a"
                f" second): one in every {flood.interval:.1f} s goes on until it calms"
                " down",
            )
            self._record(FloodInput(board=self.number, at=at, flooding=True, rate=flood.rate))
        if flood.flooding and not math.isfinite(self.due):
            self.due = max(at, flood.next_release())

    def receive_time(self, now: float, *, stopping: bool) -> None:
        """While flooding: send the latest held placement, and notice the calm."""
        flood = self.flood
        self.due = math.inf
        if self._held is not None:
            placement, self._held = self._held, None
            flood.released(now)
            self.send(replace(placement, at=now))
        if flood.calmed(now):
            self._say(logging.WARNING, f"= board {self.number} calmed down")
            self._record(FloodInput(board=self.number, at=now, flooding=False, rate=flood.rate))
            return
        if flood.flooding and not stopping:
            self.due = now + (flood.interval if self._held is not None else 0.5)

    def send(self, placement: PlacementObserved) -> None:
        """Journal ``placement`` unless it is the one sent last."""
        last = self._last
        if last is not None and placement.board == last.board:
            return  # a flicker back to what was sent last: nothing new
        self._last = placement
        self._record(PlacementInput(self.number, placement))
