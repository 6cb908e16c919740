"""The hub: latest state of every board, feed events derived from it, and subscriptions.

The daemon calls :meth:`Hub.publish_board`, :meth:`Hub.publish_clock` (a reading that
only moves a board's clocks) and :meth:`Hub.publish_alert` (each new version of an
alert: raised, updated, acknowledged, resolved). The hub diffs each new
:class:`BoardState` with what the feed has already said about that board and derives
numbered feed events (``move``, ``correction``, ``takeback``, ``clock``, ``result``,
``status``, ``board``); :meth:`Hub.publish_evaluation` adds an ``eval`` event (public
hubs only: :mod:`broadcast.feed.evaluations`). The last events are kept in a bounded
ring so that a client that reconnects can resume.

Consumers (websocket feeds, MQTT, lichess push, PGN folder, webhooks) call
:meth:`Hub.subscribe` and then ``await subscription.receive()``. A subscription never
queues: it holds a cursor into the ring plus a set of "dirty" boards and alerts, so a
consumer that falls behind costs a bounded amount of memory and, when it reads again,
gets either the events it missed (still in the ring) or a ``missed`` update carrying the
latest state of every board. One slow consumer never delays the others.

Components that follow every state of some boards without being in the board pipeline
(the LiveChess API) take a :class:`BoardWatch` (:meth:`Hub.watch`): publishing only
marks the board in it and wakes its task, which does the work later, coalescing the
states that came meanwhile. Listeners (:meth:`Hub.add_listener`) run inside
``publish_board`` and are kept for the hub's own chain (the public delay line).

Everything here runs on the event loop thread; publishing never awaits.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import itertools
from collections.abc import Callable, Iterator

from broadcast.feed.alerts import Alert
from broadcast.feed.events import (
    ClockChanged,
    EvaluationChanged,
    FeedEvent,
    FeedMessage,
    clock_event_due,
    diff_states,
    encode_json,
    event_to_json,
    state_to_json,
)
from broadcast.feed.messages import BoardState, ClockReading, Evaluation
from broadcast.feed.pgn import in_round_order, with_clock_tags
from broadcast.feed.subscriptions import BoardWatch, Subscription

__all__ = ["ClockListener", "Hub"]

#: Takes a :class:`ClockReading` and the time it was published (``Hub.publish_clock``).
ClockListener = Callable[[ClockReading, float], None]


class Hub:
    """Latest board states and alerts, numbered feed events, and their subscribers.

    Args:
        ring_size: how many recent feed events are kept for resuming clients.
        clock_tolerance: see :func:`diff_states`.
        max_closed_alerts: how many resolved alerts are remembered.
    """

    def __init__(
        self, *, ring_size: int = 4096, clock_tolerance: float = 1.5, max_closed_alerts: int = 500
    ) -> None:
        if ring_size < 1:
            raise ValueError("ring_size must be at least 1")
        self._ring: collections.deque[FeedMessage] = collections.deque(maxlen=ring_size)
        self._seq = 0
        self._clock_tolerance = clock_tolerance
        self._states: dict[int, BoardState] = {}
        self._known: dict[int, BoardState] = {}
        self._texts: dict[int, str] = {}
        self._alerts: dict[int, Alert] = {}
        self._closed_alerts: collections.OrderedDict[int, None] = collections.OrderedDict()
        self._max_closed_alerts = max_closed_alerts
        self._subscriptions: set[Subscription] = set()  # woken by changes
        self._cursors: set[Subscription] = set()  # cursors only (wake=False)
        self._listeners: list[Callable[[BoardState], None]] = []
        self._watches: set[BoardWatch] = set()
        self._clock_listeners: dict[Callable[[BoardState], None], ClockListener] = {}
        self._event_listeners: list[Callable[[], None]] = []
        self._readings: dict[int, tuple[ClockReading, float]] = {}  # not in _states yet
        self._evaluations: dict[int, Evaluation] = {}
        self._batch_depth = 0  # inside batch(): event listeners are told at its end
        self._batch_seq = 0

    @property
    def seq(self) -> int:
        """The sequence number of the last feed event (0 before any)."""
        return self._seq

    def publish_board(self, state: BoardState) -> list[FeedEvent]:
        """Take a board's new state; returns the feed events it caused (maybe none).

        Subscribers are marked and woken when events were derived or the PGN changed;
        listeners (see :meth:`add_listener`) are called with every state, and watches
        (see :meth:`watch`) are marked and woken.
        """
        board = state.board
        previous = self._states.get(board)
        clocked = self._readings.pop(board, None) is not None
        events, known = diff_states(
            self._known.get(board),
            state,
            next_seq=self._seq + 1,
            clock_tolerance=self._clock_tolerance,
        )
        self._states[board], self._known[board] = state, known
        self._texts.pop(board, None)
        self._append(events)
        for listener in list(self._listeners):
            listener(state)
        for watch in self._watches:
            watch.published(board)
        if events or clocked or previous is None or previous.pgn != state.pgn:
            for sub in self._subscriptions:
                sub.board_changed(board, evented=bool(events))
        self._tell_event_listeners(events)
        return events

    def publish_clock(self, reading: ClockReading, now: float) -> bool:
        """Take a reading that changes only a board's clocks (and its PGN's clock tags).

        The cheap twin of :meth:`publish_board` for the many readings that only move the
        time: the board's state is brought up to date when someone reads it
        (:meth:`state`), a ``clock`` event is derived only when a viewer could not have
        extrapolated the reading, and subscribers that skip board states are woken only
        then. ``now`` becomes the state's ``updated_at``.

        Returns:
            False when the hub cannot apply it so (the board unknown, or without a
            clock reading so far, so its PGN has no clock tags): publish the whole
            state instead.
        """
        board = reading.board
        known = self._known.get(board)
        if known is None or self._states[board].clock_at is None:
            return False
        self._readings[board] = (reading, now)
        self._texts.pop(board, None)
        events: list[FeedEvent] = []
        if clock_event_due(known, reading, self._clock_tolerance):
            clock = ClockChanged(
                seq=self._seq + 1,
                board=board,
                white_clock=reading.white_clock,
                black_clock=reading.black_clock,
                running=reading.running,
                clock_at=reading.clock_at,
            )
            events.append(clock)
            self._known[board] = dataclasses.replace(
                known,
                white_clock=reading.white_clock,
                black_clock=reading.black_clock,
                running=reading.running,
                clock_at=reading.clock_at,
            )
            self._append(events)
        state = None
        for listener in list(self._listeners):
            on_clock = self._clock_listeners.get(listener)
            if on_clock is not None:
                on_clock(reading, now)
                continue
            state = state or self.state(board)
            assert state is not None
            listener(state)
        for watch in self._watches:
            watch.published(board)
        for sub in self._subscriptions:
            sub.board_changed(board, evented=bool(events))
        self._tell_event_listeners(events)
        return True

    def publish_evaluation(self, evaluation: Evaluation) -> bool:
        """Take a board's evaluation: an ``eval`` event, unless it is the one shown.

        Wakes the subscribers that read events; returns whether an event was added.
        """
        if self._evaluations.get(evaluation.board) == evaluation:
            return False
        self._evaluations[evaluation.board] = evaluation
        event = EvaluationChanged(seq=self._seq + 1, board=evaluation.board, evaluation=evaluation)
        self._append([event])
        for sub in self._subscriptions:
            sub.events_added()
        self._tell_event_listeners([event])
        return True

    def evaluations(self) -> list[Evaluation]:
        """The latest evaluation of every board that has one, by board."""
        return [self._evaluations[board] for board in sorted(self._evaluations)]

    def _append(self, events: list[FeedEvent]) -> None:
        for event in events:
            self._ring.append(FeedMessage(event=event, text=encode_json(event_to_json(event))))
            self._seq = event.seq

    def _tell_event_listeners(self, events: list[FeedEvent]) -> None:
        if events and not self._batch_depth:
            for listener in list(self._event_listeners):
                listener()

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Publish several changes as one: event listeners are told once, at the end."""
        if not self._batch_depth:
            self._batch_seq = self._seq
        self._batch_depth += 1
        try:
            yield
        finally:
            self._batch_depth -= 1
            if not self._batch_depth and self._seq != self._batch_seq:
                for listener in list(self._event_listeners):
                    listener()

    def publish_alert(self, alert: Alert) -> None:
        """Take a new version of an alert and wake the subscribers that want alerts."""
        self._alerts[alert.id] = alert
        if not alert.is_open:
            self._remember_closed(alert.id)
        for sub in self._subscriptions:
            sub.alert_changed(alert.id)

    def _remember_closed(self, alert_id: int) -> None:
        self._closed_alerts[alert_id] = None
        while len(self._closed_alerts) > self._max_closed_alerts:
            self._alerts.pop(self._closed_alerts.popitem(last=False)[0], None)

    def state(self, board: int) -> BoardState | None:
        """The latest state of one board (with the last :meth:`publish_clock` reading)."""
        pending = self._readings.pop(board, None)
        if pending is None:
            return self._states.get(board)
        reading, now = pending
        state = self._states[board]
        pgn = state.pgn
        if reading.white_clock is not None and reading.black_clock is not None:
            pgn = with_clock_tags(pgn, reading.white_clock, reading.black_clock)
        state = self._states[board] = dataclasses.replace(
            state,
            white_clock=reading.white_clock,
            black_clock=reading.black_clock,
            running=reading.running,
            clock_at=reading.clock_at,
            pgn=pgn,
            updated_at=max(state.updated_at, now),
        )
        return state

    def states(self) -> list[BoardState]:
        """Every board's latest state, by section (lowest board first), then board."""
        for board in list(self._readings):
            self.state(board)
        return in_round_order(self._states.values())

    def state_text(self, board: int) -> str:
        """The latest state of one board as feed JSON text (cached until it changes)."""
        text = self._texts.get(board)
        if text is None:
            state = self.state(board)
            assert state is not None
            text = self._texts[board] = encode_json(state_to_json(state))
        return text

    def alert(self, alert_id: int) -> Alert | None:
        """The latest version of one alert (resolved ones are kept for a while)."""
        return self._alerts.get(alert_id)

    def open_alerts(self) -> list[Alert]:
        """Open alerts (acknowledged or not), oldest first."""
        return sorted((a for a in self._alerts.values() if a.is_open), key=lambda a: a.id)

    def resolved_alerts(self, limit: int) -> list[Alert]:
        """The last ``limit`` alerts resolved (of those remembered), in the order resolved."""
        ids = list(self._closed_alerts)[-limit:] if limit > 0 else []
        return [self._alerts[i] for i in ids]

    def messages_since(self, seq: int) -> list[FeedMessage] | None:
        """The feed events after ``seq``; None when some are no longer in the ring."""
        if seq == self._seq:
            return []
        if seq > self._seq or not self._ring or self._ring[0].event.seq > seq + 1:
            return None
        start = seq + 1 - self._ring[0].event.seq
        return list(itertools.islice(self._ring, start, None))

    def subscribe(
        self,
        *,
        since: int | None = None,
        alerts: bool = True,
        boards: bool = True,
        wake: bool = True,
    ) -> Subscription:
        """A new subscription.

        Args:
            since: resume after this sequence number; None starts with a ``missed``
                update holding every board (a snapshot).
            alerts: whether alert changes are wanted (and wake the subscriber).
            boards: whether the states of changed boards are wanted in
                :attr:`~broadcast.feed.subscriptions.Update.boards`. A new PGN alone
                (the clock tags of every reading) then wakes the subscriber too;
                consumers of the feed events only pass False, so a ticking clock wakes
                none.
            wake: False for a cursor the hub never wakes or marks: its owner reads it
                when it chooses (the spectator feed, on its own tick, after an
                :meth:`add_event_listener` call); then publishing costs nothing per
                such subscriber.
        """
        sub = Subscription(
            self, leave=self._unsubscribe, since=since, alerts=alerts, boards=boards, wake=wake
        )
        (self._subscriptions if wake else self._cursors).add(sub)
        return sub

    def _unsubscribe(self, sub: Subscription) -> None:
        self._subscriptions.discard(sub)
        self._cursors.discard(sub)

    def _unwatch(self, watch: BoardWatch) -> None:
        self._watches.discard(watch)

    @property
    def subscriber_count(self) -> int:
        """How many subscriptions are open."""
        return len(self._subscriptions) + len(self._cursors)

    def watch(self) -> BoardWatch:
        """A new :class:`BoardWatch`: woken by every published state, run outside it."""
        watch = BoardWatch(self, leave=self._unwatch)
        self._watches.add(watch)
        return watch

    def add_listener(
        self, listener: Callable[[BoardState], None], on_clock: ClockListener | None = None
    ) -> Callable[[], None]:
        """Call ``listener`` synchronously with every published state; returns a remover.

        For components that must see every state as it arrives (the public delay line);
        a listener must not block. ``on_clock`` takes :meth:`publish_clock`'s readings
        (with its ``now``) instead of ``listener`` being called with the whole state.
        """
        self._listeners.append(listener)
        if on_clock is not None:
            self._clock_listeners[listener] = on_clock

        def remove() -> None:
            self._listeners.remove(listener)
            self._clock_listeners.pop(listener, None)

        return remove

    def add_event_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` after every publish that added feed events; returns a remover.

        It is told that :attr:`seq` moved, nothing else (it reads :meth:`messages_since`);
        it must not block.
        """
        self._event_listeners.append(listener)
        return lambda: self._event_listeners.remove(listener)
