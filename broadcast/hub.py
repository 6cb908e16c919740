"""The hub: latest state of every board, feed events derived from it, and subscriptions.

The daemon calls :meth:`Hub.publish_board`, :meth:`Hub.publish_alert` and
:meth:`Hub.alert_acknowledged`. The hub diffs each new :class:`BoardState` with what the
feed has already said about that board and derives numbered feed events (``move``,
``correction``, ``takeback``, ``clock``, ``result``, ``status``, ``board``). The last
events are kept in a bounded ring so that a client that reconnects can resume.

Consumers (websocket feeds, MQTT, lichess push, PGN folder, webhooks) call
:meth:`Hub.subscribe` and then ``await subscription.receive()``. A subscription never
queues: it holds a cursor into the ring plus a set of "dirty" boards and alerts, so a
consumer that falls behind costs a bounded amount of memory and, when it reads again,
gets either the events it missed (still in the ring) or a ``missed`` update carrying the
latest state of every board. One slow consumer never delays the others.

Everything here runs on the event loop thread; publishing never awaits.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar

from broadcast.messages import Alert, BoardState, BoardStatus, MoveInfo, to_json_dict
from broadcast.pgn import in_round_order

__all__ = [
    "BoardAnnounced",
    "ClockChanged",
    "FeedEvent",
    "FeedMessage",
    "Hub",
    "MovesAppended",
    "MovesCorrected",
    "MovesTakenBack",
    "ResultChanged",
    "StatusChanged",
    "Subscription",
    "Update",
    "diff_states",
    "encode_json",
    "event_to_json",
    "state_to_json",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardAnnounced:
    """``board``: a board appeared, or its players / section / round changed.

    Carries the whole state (without PGN); a client replaces what it knew of the board.
    """

    TYPE: ClassVar[str] = "board"
    seq: int
    board: int
    state: BoardState


@dataclass(frozen=True, slots=True, kw_only=True)
class MovesAppended:
    """``move``: new plies were played after ply ``ply`` (the plies known before)."""

    TYPE: ClassVar[str] = "move"
    seq: int
    board: int
    ply: int
    moves: tuple[MoveInfo, ...]
    fen: str
    last_move: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class MovesCorrected:
    """``correction``: the main line changed from ply ``ply``; ``moves`` replace the rest."""

    TYPE: ClassVar[str] = "correction"
    seq: int
    board: int
    ply: int
    moves: tuple[MoveInfo, ...]
    fen: str
    last_move: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class MovesTakenBack:
    """``takeback``: the main line was cut back to its first ``ply`` plies."""

    TYPE: ClassVar[str] = "takeback"
    seq: int
    board: int
    ply: int
    fen: str
    last_move: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockChanged:
    """``clock``: a reading that a viewer could not extrapolate from the previous one.

    Sent when the running side changes, or a time differs from the extrapolated time by
    more than the hub's tolerance (a clock set by an arbiter, a time bonus). Plain
    ticking is not an event: viewers count down from ``clock_at``.
    """

    TYPE: ClassVar[str] = "clock"
    seq: int
    board: int
    white_clock: float | None
    black_clock: float | None
    running: str | None
    clock_at: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultChanged:
    """``result``: the result or its finality changed."""

    TYPE: ClassVar[str] = "result"
    seq: int
    board: int
    result: str
    result_final: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusChanged:
    """``status``: the e-board went online, offline, out of sync, ..."""

    TYPE: ClassVar[str] = "status"
    seq: int
    board: int
    status: BoardStatus


FeedEvent = (
    BoardAnnounced
    | MovesAppended
    | MovesCorrected
    | MovesTakenBack
    | ClockChanged
    | ResultChanged
    | StatusChanged
)


def encode_json(value: Any) -> str:
    """Compact JSON text, as sent on every feed."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


_MOVE_FIELDS = tuple(f.name for f in dataclasses.fields(MoveInfo))
_STATE_FIELDS = tuple(f.name for f in dataclasses.fields(BoardState) if f.name != "pgn")


def _field_json(value: Any) -> Any:
    """``to_json_dict``, with a fast path for move lists (they are most of the bytes)."""
    if isinstance(value, tuple) and value and isinstance(value[0], MoveInfo):
        return [{name: getattr(move, name) for name in _MOVE_FIELDS} for move in value]
    if isinstance(value, str | int | float | None):
        return value
    return to_json_dict(value)


def state_to_json(state: BoardState) -> dict[str, Any]:
    """A board state as feed JSON: every field but ``pgn`` (served over HTTP)."""
    return {name: _field_json(getattr(state, name)) for name in _STATE_FIELDS}


def event_to_json(event: FeedEvent) -> dict[str, Any]:
    """A feed event as JSON: ``{"type": ..., "seq": ..., "board": ..., ...}``."""
    data: dict[str, Any] = {"type": event.TYPE}
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        data[f.name] = state_to_json(value) if f.name == "state" else _field_json(value)
    return data


@dataclass(frozen=True, slots=True, kw_only=True)
class FeedMessage:
    """A feed event with its JSON text, encoded once for every consumer."""

    event: FeedEvent
    text: str


# --- Diffing -------------------------------------------------------------------------

_IDENTITY = ("section", "round", "white", "black", "white_elo", "black_elo")
_CLOCK = ("white_clock", "black_clock", "running", "clock_at")


def _identity(state: BoardState) -> tuple[Any, ...]:
    return tuple(getattr(state, name) for name in _IDENTITY)


def _common_prefix(a: tuple[MoveInfo, ...], b: tuple[MoveInfo, ...]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _needs_announce(known: BoardState | None, new: BoardState) -> bool:
    if known is None or _identity(known) != _identity(new):
        return True
    # A position change without a move change cannot be said with move events.
    return known.moves == new.moves and (known.fen, known.last_move) != (new.fen, new.last_move)


def _move_events(known: BoardState, new: BoardState, seqs: Iterator[int]) -> list[FeedEvent]:
    if known.moves == new.moves:
        return []
    k = _common_prefix(known.moves, new.moves)
    b, fen, last = new.board, new.fen, new.last_move
    if k == len(known.moves):
        added = new.moves[k:]
        return [MovesAppended(seq=next(seqs), board=b, ply=k, moves=added, fen=fen, last_move=last)]
    if k == len(new.moves):
        return [MovesTakenBack(seq=next(seqs), board=b, ply=k, fen=fen, last_move=last)]
    moves = new.moves[k:]
    return [MovesCorrected(seq=next(seqs), board=b, ply=k, moves=moves, fen=fen, last_move=last)]


def _side_off(before: float | None, after: float | None, ran: float, tolerance: float) -> bool:
    """Whether a side's new time is not its old time minus the time it ran."""
    if before is None or after is None:
        return before != after
    return abs(after - max(0.0, before - ran)) > tolerance


def _clock_changed(known: BoardState, new: BoardState, tolerance: float) -> bool:
    """Whether a viewer extrapolating from ``known`` would now show the wrong times."""
    if known.running != new.running or (known.clock_at is None) != (new.clock_at is None):
        return True
    elapsed = 0.0
    if known.clock_at is not None and new.clock_at is not None:
        elapsed = max(0.0, new.clock_at - known.clock_at)
    white_ran = elapsed if known.running == "white" else 0.0
    black_ran = elapsed if known.running == "black" else 0.0
    return _side_off(known.white_clock, new.white_clock, white_ran, tolerance) or _side_off(
        known.black_clock, new.black_clock, black_ran, tolerance
    )


def _other_events(
    known: BoardState, new: BoardState, seqs: Iterator[int], tolerance: float
) -> list[FeedEvent]:
    events: list[FeedEvent] = []
    b = new.board
    if _clock_changed(known, new, tolerance):
        events.append(
            ClockChanged(
                seq=next(seqs),
                board=b,
                white_clock=new.white_clock,
                black_clock=new.black_clock,
                running=new.running,
                clock_at=new.clock_at,
            )
        )
    if (known.result, known.result_final) != (new.result, new.result_final):
        events.append(
            ResultChanged(seq=next(seqs), board=b, result=new.result, result_final=new.result_final)
        )
    if known.status != new.status:
        events.append(StatusChanged(seq=next(seqs), board=b, status=new.status))
    return events


def diff_states(
    known: BoardState | None, new: BoardState, *, next_seq: int, clock_tolerance: float = 1.5
) -> tuple[list[FeedEvent], BoardState]:
    """Feed events that turn ``known`` into ``new``, numbered from ``next_seq``.

    Args:
        known: what the feed has said about the board so far (None: nothing yet).
        new: the board's new state.
        next_seq: the sequence number of the first event returned.
        clock_tolerance: seconds a clock may differ from its extrapolation before a
            ``clock`` event is due (readings are whole seconds, dgt-protocol.md §7.2).

    Returns:
        The events, in order, and the state the feed describes after them: ``new``,
        except that its clock fields stay as last announced when no ``clock`` event was
        due (so small drifts add up to an event instead of being lost).
    """
    seqs = itertools.count(next_seq)
    if _needs_announce(known, new):
        return [BoardAnnounced(seq=next(seqs), board=new.board, state=new)], new
    assert known is not None
    events = _move_events(known, new, seqs) + _other_events(known, new, seqs, clock_tolerance)
    if any(isinstance(e, ClockChanged) for e in events):
        return events, new
    kept = {name: getattr(known, name) for name in _CLOCK}
    return events, dataclasses.replace(new, **kept)


# --- Subscriptions -------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Update:
    """What changed for one subscriber since its previous :meth:`Subscription.receive`.

    Attributes:
        events: the feed events since the subscriber's cursor, in sequence order.
        boards: the latest state of every board that changed (every board if missed).
        alerts: the latest version of every alert raised or acknowledged since.
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

    def __init__(self, hub: Hub, *, since: int | None, alerts: bool, boards: bool = True) -> None:
        self._hub = hub
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
        self._hub._unsubscribe(self)

    def _board_changed(self, board: int, *, evented: bool) -> None:
        if self._wants_boards:
            self._dirty_boards.add(board)
            self._ready.set()
        elif evented and self._cursor != self._hub.seq:
            self._ready.set()  # the events are read through the cursor (unless handed over)

    def _alert_changed(self, alert_id: int) -> None:
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


# --- The hub -------------------------------------------------------------------------


class Hub:
    """Latest board states and alerts, numbered feed events, and their subscribers.

    Args:
        ring_size: how many recent feed events are kept for resuming clients.
        clock_tolerance: see :func:`diff_states`.
        max_closed_alerts: how many acknowledged alerts are remembered.
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
        self._closed_alerts: collections.deque[int] = collections.deque()
        self._max_closed_alerts = max_closed_alerts
        self._subscriptions: set[Subscription] = set()
        self._listeners: list[Callable[[BoardState], None]] = []

    @property
    def seq(self) -> int:
        """The sequence number of the last feed event (0 before any)."""
        return self._seq

    def publish_board(self, state: BoardState) -> list[FeedEvent]:
        """Take a board's new state; returns the feed events it caused (maybe none).

        Subscribers are marked and woken when events were derived or the PGN changed;
        listeners (see :meth:`add_listener`) are called with every state.
        """
        board = state.board
        previous = self._states.get(board)
        events, known = diff_states(
            self._known.get(board),
            state,
            next_seq=self._seq + 1,
            clock_tolerance=self._clock_tolerance,
        )
        self._states[board], self._known[board] = state, known
        self._texts.pop(board, None)
        for event in events:
            self._ring.append(FeedMessage(event=event, text=encode_json(event_to_json(event))))
            self._seq = event.seq
        for listener in list(self._listeners):
            listener(state)
        if events or previous is None or previous.pgn != state.pgn:
            for sub in self._subscriptions:
                sub._board_changed(board, evented=bool(events))
        return events

    def publish_alert(self, alert: Alert) -> None:
        """Take a new (or updated) alert and wake the subscribers that want alerts."""
        self._alerts[alert.id] = alert
        if alert.acknowledged:
            self._remember_closed(alert.id)
        for sub in self._subscriptions:
            sub._alert_changed(alert.id)

    def alert_acknowledged(self, alert_id: int) -> bool:
        """Mark an alert acknowledged; False if the hub does not know it."""
        alert = self._alerts.get(alert_id)
        if alert is None:
            return False
        if not alert.acknowledged:
            self.publish_alert(dataclasses.replace(alert, acknowledged=True))
        return True

    def _remember_closed(self, alert_id: int) -> None:
        self._closed_alerts.append(alert_id)
        while len(self._closed_alerts) > self._max_closed_alerts:
            self._alerts.pop(self._closed_alerts.popleft(), None)

    def state(self, board: int) -> BoardState | None:
        """The latest state of one board."""
        return self._states.get(board)

    def states(self) -> list[BoardState]:
        """Every board's latest state, by section (lowest board first), then board."""
        return in_round_order(self._states.values())

    def state_text(self, board: int) -> str:
        """The latest state of one board as feed JSON text (cached until it changes)."""
        text = self._texts.get(board)
        if text is None:
            text = self._texts[board] = encode_json(state_to_json(self._states[board]))
        return text

    def alert(self, alert_id: int) -> Alert | None:
        """The latest version of one alert (acknowledged ones are kept for a while)."""
        return self._alerts.get(alert_id)

    def open_alerts(self) -> list[Alert]:
        """Alerts not acknowledged yet, oldest first."""
        return sorted((a for a in self._alerts.values() if not a.acknowledged), key=lambda a: a.id)

    def messages_since(self, seq: int) -> list[FeedMessage] | None:
        """The feed events after ``seq``; None when some are no longer in the ring."""
        if seq == self._seq:
            return []
        if seq > self._seq or not self._ring or self._ring[0].event.seq > seq + 1:
            return None
        start = seq + 1 - self._ring[0].event.seq
        return list(itertools.islice(self._ring, start, None))

    def subscribe(
        self, *, since: int | None = None, alerts: bool = True, boards: bool = True
    ) -> Subscription:
        """A new subscription.

        Args:
            since: resume after this sequence number; None starts with a ``missed``
                update holding every board (a snapshot).
            alerts: whether alert changes are wanted (and wake the subscriber).
            boards: whether the states of changed boards are wanted in
                :attr:`Update.boards`. A new PGN alone (the clock tags of every
                reading) then wakes the subscriber too; consumers of the feed events
                only (websocket spectators) pass False, so a ticking clock wakes none.
        """
        sub = Subscription(self, since=since, alerts=alerts, boards=boards)
        self._subscriptions.add(sub)
        return sub

    def _unsubscribe(self, sub: Subscription) -> None:
        self._subscriptions.discard(sub)

    @property
    def subscriber_count(self) -> int:
        """How many subscriptions are open."""
        return len(self._subscriptions)

    def add_listener(self, listener: Callable[[BoardState], None]) -> Callable[[], None]:
        """Call ``listener`` synchronously with every published state; returns a remover.

        For components that must see every state as it arrives (the public delay line);
        a listener must not block.
        """
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)
