"""Public delay: the spectators' view of every board, ``delay`` seconds behind the live one.

Tournaments delay the public broadcast so that nobody can relay moves to a player
(docs/integrations.md, "What lichess expects": lichess allows 0–3600 s per round). The
arbiter channel stays live; spectators and the public PGN endpoints read a second
:class:`Hub` that is fed the live states once they are ``delay`` seconds old.

* :class:`DelayLine` is the pure core: ``receive_state(state, now)`` records a state,
  ``release(now)`` returns those that have aged past the delay, ``next_release_at()``
  says when to call ``release`` again.
* :class:`PublicDelay` is the asyncio shell: it listens to the live hub and runs one
  timer task that feeds the public hub.

Clocks behind a delay are the delayed readings themselves: a delayed state is the live
state of ``delay`` seconds ago, field for field, never recomputed from wall time.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from broadcast.feed.public_results import ResultsPolicy, public_state

__all__ = ["DelayLine", "PublicDelay"]

_TICK_FIELDS = ("white_clock", "black_clock", "clock_at", "updated_at")


def _is_tick(before: BoardState, after: BoardState) -> bool:
    """Whether ``after`` only adds a clock reading to ``before`` (same running side)."""
    keep = {name: getattr(before, name) for name in _TICK_FIELDS}
    return dataclasses.replace(after, **keep) == before


@dataclass(frozen=True, slots=True)
class _Entry:
    at: float  # when the live state arrived
    order: int  # arrival order over every board
    state: BoardState
    tick_of: float | None  # arrival of the entry this one only adds a clock reading to


class DelayLine:
    """Timestamped states per board, released once ``delay`` seconds old.

    Memory stays bounded for long delays: a clock reading that only ticks (the same
    side still running, nothing else changed) replaces the queued reading before it
    while both fall within ``tick_resolution`` seconds of the last kept change, and
    unchanged PGN text and move tuples are shared between entries.

    Args:
        delay: seconds; must be positive (a zero delay needs no line at all).
        tick_resolution: the closest spacing of kept clock-only readings, seconds.
    """

    def __init__(self, delay: float, *, tick_resolution: float = 5.0) -> None:
        if not delay > 0:
            raise ValueError("delay must be positive")
        self.delay = delay
        self._resolution = tick_resolution
        self._queues: dict[int, collections.deque[_Entry]] = {}
        self._last: dict[int, BoardState] = {}
        self._arrivals = itertools.count()

    def __len__(self) -> int:
        return sum(len(queue) for queue in self._queues.values())

    def receive_state(self, state: BoardState, now: float) -> None:
        """Record the live state of a board at ``now``; call :meth:`next_release_at` next."""
        last = self._last.get(state.board)
        queue = self._queues.setdefault(state.board, collections.deque())
        if last is not None:
            state = _share(last, state)
        self._last[state.board] = state
        if last is None or not _is_tick(last, state):
            queue.append(_Entry(at=now, order=next(self._arrivals), state=state, tick_of=None))
            return
        tail = queue[-1] if queue else None
        if (
            tail is not None
            and tail.tick_of is not None
            and tail.at - tail.tick_of < self._resolution
        ):
            queue[-1] = _Entry(
                at=now, order=next(self._arrivals), state=state, tick_of=tail.tick_of
            )
            return
        anchor = tail.at if tail is not None else now
        queue.append(_Entry(at=now, order=next(self._arrivals), state=state, tick_of=anchor))

    def next_release_at(self) -> float | None:
        """When the oldest recorded state is due, or None when nothing is waiting."""
        heads = [queue[0].at for queue in self._queues.values() if queue]
        return min(heads) + self.delay if heads else None

    def release(self, now: float) -> list[BoardState]:
        """The states at least ``delay`` seconds old, oldest first, removed from the line."""
        due: list[_Entry] = []
        for queue in self._queues.values():
            while queue and queue[0].at + self.delay <= now:
                due.append(queue.popleft())
        due.sort(key=lambda entry: entry.order)
        return [entry.state for entry in due]


def _share(before: BoardState, after: BoardState) -> BoardState:
    """``after``, reusing ``before``'s PGN text and move tuple when they are equal."""
    if after.pgn == before.pgn and after.moves == before.moves:
        return dataclasses.replace(after, pgn=before.pgn, moves=before.moves)
    return after


class PublicDelay:
    """Feeds ``public`` with the states of ``live`` once they are ``delay`` seconds old.

    Use ``async with PublicDelay(live, 30.0) as delayed:`` and read ``delayed.public``.

    Args:
        live: the hub the daemon publishes to.
        delay: seconds, positive.
        public: the hub to feed (a new one by default).
        clock: the time source (the event loop's monotonic clock by default); tests
            pass a clock they move by hand, then call :meth:`wake`.
        tick_resolution: see :class:`DelayLine`.
        results: which results the public sees (:mod:`broadcast.feed.public_results`).
    """

    def __init__(
        self,
        live: Hub,
        delay: float,
        *,
        public: Hub | None = None,
        clock: Callable[[], float] | None = None,
        tick_resolution: float = 5.0,
        results: ResultsPolicy = "provisional",
    ) -> None:
        self.live = live
        self.results = results
        self.public = public if public is not None else Hub()
        self.line = DelayLine(delay, tick_resolution=tick_resolution)
        self._clock = clock
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._remove_listener: Callable[[], None] | None = None

    def _now(self) -> float:
        return self._clock() if self._clock else asyncio.get_running_loop().time()

    def start(self) -> None:
        """Start listening to the live hub and the release timer."""
        if self._task is not None:
            return
        for state in self.live.states():
            self._receive(state)  # already live before the start: delayed all the same
        self._remove_listener = self.live.add_listener(self._receive)
        self._task = asyncio.get_running_loop().create_task(self._run(), name="public-delay")

    async def close(self) -> None:
        """Stop; states still in the line are dropped."""
        if self._remove_listener is not None:
            self._remove_listener()
            self._remove_listener = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def release_due(self) -> int:
        """Publish the states that are due; returns how many."""
        states = self.line.release(self._now())
        for state in states:
            self.public.publish_board(public_state(state, self.results))
        return len(states)

    def _receive(self, state: BoardState) -> None:
        self.line.receive_state(state, self._now())
        self._wakeup.set()

    async def _run(self) -> None:
        while True:
            self.release_due()
            due = self.line.next_release_at()
            self._wakeup.clear()
            timeout = None if due is None else max(0.0, due - self._now())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._wakeup.wait()

    async def __aenter__(self) -> PublicDelay:
        self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
