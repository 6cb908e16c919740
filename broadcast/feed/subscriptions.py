"""Subscriptions to the hub: a cursor and dirty sets, and watches of published boards.

A :class:`Subscription` (:meth:`~broadcast.feed.hub.Hub.subscribe`) never queues: it
holds a cursor into the hub's ring plus the boards and alerts changed since it last read,
and hands them out as one :class:`Update`. A :class:`BoardWatch`
(:meth:`~broadcast.feed.hub.Hub.watch`) holds the boards published since its owner last
looked. Both are context managers that leave the hub on exit.

Neither knows the hub's class: a subscription reads it through :class:`FeedSource`,
and each is handed the callable that takes it off the hub when it closes. The hub
tells them of changes through their public ``*_changed`` / ``events_added`` /
``published`` methods, which only the hub calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol

from broadcast.feed.alerts import Alert
from broadcast.feed.events import FeedMessage
from broadcast.feed.messages import BoardState

__all__ = ["BoardWatch", "FeedSource", "Subscription", "Update"]


class FeedSource(Protocol):
    """What subscriptions and watches read of the hub (:class:`~broadcast.feed.hub.Hub`)."""

    @property
    def seq(self) -> int:
        """The sequence number of the last feed event."""
        ...

    def messages_since(self, seq: int) -> Sequence[FeedMessage] | None:
        """The feed events after ``seq``; None when some are no longer kept."""
        ...

    def states(self) -> Sequence[BoardState]:
        """Every board's latest state."""
        ...

    def state(self, board: int) -> BoardState | None:
        """The latest state of one board."""
        ...

    def alert(self, alert_id: int) -> Alert | None:
        """The latest version of one alert."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Update:
    """What changed for one subscriber since its previous :meth:`Subscription.receive`.

    Attributes:
        events: the feed events since the subscriber's cursor, in sequence order.
        boards: the latest state of every board that changed (every board if missed).
        alerts: the latest version of every alert raised or changed since.
        missed: events were lost (the ring moved on, or a resume asked for events no
            longer kept): ``events`` is empty and ``boards`` holds every board, so the
            consumer starts again from scratch.
        resumed: the ``since`` of the resume this update answers, if any.
        seq: the hub's last sequence number; the subscriber's cursor is now here.
    """

    events: tuple[FeedMessage, ...] = ()
    boards: tuple[BoardState, ...] = ()
    alerts: tuple[Alert, ...] = ()
    missed: bool = False
    resumed: int | None = None
    seq: int = 0


class Subscription:
    """One consumer's view of the hub: a cursor and dirty sets, never a queue.

    Use as ``with hub.subscribe() as sub:`` (or ``async with``), then
    ``update = await sub.receive()`` in a loop, or ``async for update in sub``.
    """

    def __init__(
        self,
        hub: FeedSource,
        *,
        leave: Callable[[Subscription], None],
        since: int | None,
        alerts: bool,
        boards: bool = True,
        wake: bool = True,
    ) -> None:
        self._hub = hub
        self._leave = leave
        self.wakes = wake
        self._wants_alerts = alerts
        self._wants_boards = boards
        self._cursor = hub.seq
        self._full = since is None
        self._resume: int | None = since
        self._dirty_boards: set[int] = set()
        self._dirty_alerts: set[int] = set()
        self._ready = asyncio.Event()
        self._ready.set()
        self.closed = False

    def resume(self, since: int) -> None:
        """Ask for the events after ``since``; the next update answers it."""
        self._resume = since
        self._ready.set()

    @property
    def cursor(self) -> int:
        """The sequence number of the last event this subscriber was given."""
        return self._cursor

    def has_pending(self) -> bool:
        """Whether :meth:`receive` would return at once."""
        return bool(
            self._full
            or self._resume is not None
            or self._dirty_boards
            or self._dirty_alerts
            or self._cursor != self._hub.seq
        )

    def advance(self, from_seq: int, to_seq: int) -> bool:
        """Move a caught-up cursor past events its consumer was handed another way.

        Succeeds only when the cursor is at ``from_seq`` and nothing else is pending
        (no snapshot, resume or dirty board or alert), so nothing is skipped.

        Returns:
            Whether the cursor moved to ``to_seq``.
        """
        if (
            self._cursor != from_seq
            or self._full
            or self._resume is not None
            or self._dirty_boards
            or self._dirty_alerts
        ):
            return False
        self._cursor = to_seq
        return True

    async def receive(self) -> Update:
        """Wait until something changed, then return it (see :meth:`receive_nowait`)."""
        while not self.has_pending():
            self._ready.clear()
            await self._ready.wait()
        return self.receive_nowait()

    def receive_nowait(self) -> Update:
        """Everything that changed since the last call; moves the cursor to the hub's."""
        hub, resumed = self._hub, self._resume
        if resumed is not None:
            self._cursor = resumed
        messages = None if self._full else hub.messages_since(self._cursor)
        if messages is None:
            boards: tuple[BoardState, ...] = tuple(hub.states())
        else:
            boards = tuple(s for b in sorted(self._dirty_boards) if (s := hub.state(b)))
        alerts = tuple(a for i in sorted(self._dirty_alerts) if (a := hub.alert(i)))
        self._full, self._resume, self._cursor = False, None, hub.seq
        self._dirty_boards.clear()
        self._dirty_alerts.clear()
        return Update(
            events=tuple(messages or ()),
            boards=boards,
            alerts=alerts,
            missed=messages is None,
            resumed=resumed,
            seq=hub.seq,
        )

    def close(self) -> None:
        """Stop receiving; the hub forgets this subscription."""
        self.closed = True
        self._leave(self)

    def board_changed(self, board: int, *, evented: bool) -> None:
        """The hub's call: ``board`` changed (``evented``: and feed events were added)."""
        if self._wants_boards:
            self._dirty_boards.add(board)
            self._ready.set()
        elif evented and self._cursor != self._hub.seq:
            self._ready.set()  # the events are read through the cursor (unless handed over)

    def events_added(self) -> None:
        """The hub's call: feed events were added that change no board's state."""
        if not self._wants_boards and self._cursor != self._hub.seq:
            self._ready.set()

    def alert_changed(self, alert_id: int) -> None:
        """The hub's call: an alert was raised or changed."""
        if self._wants_alerts:
            self._dirty_alerts.add(alert_id)
            self._ready.set()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Update:
        return await self.receive()


class BoardWatch:
    """The boards published since the watcher last looked: a set and a wake-up, no queue.

    Use as ``with hub.watch() as watch:``, then ``for state in await watch.changed():``
    in a loop. However often a board is published meanwhile, the watcher gets its
    latest state once.
    """

    def __init__(self, hub: FeedSource, *, leave: Callable[[BoardWatch], None]) -> None:
        self._hub = hub
        self._leave = leave
        self._dirty: set[int] = set()
        self._ready = asyncio.Event()

    async def changed(self) -> list[BoardState]:
        """Wait until a board is published; the latest state of each one since, by board."""
        while not self._dirty:
            self._ready.clear()
            await self._ready.wait()
        dirty, self._dirty = self._dirty, set()
        return [s for board in sorted(dirty) if (s := self._hub.state(board)) is not None]

    def published(self, board: int) -> None:
        """The hub's call: a state of ``board`` was published."""
        self._dirty.add(board)
        self._ready.set()

    def close(self) -> None:
        """Stop watching."""
        self._leave(self)

    def __enter__(self) -> BoardWatch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
