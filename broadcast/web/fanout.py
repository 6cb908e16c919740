"""The spectator feed's fan-out: one frame per tick for every spectator, built once.

Spectators do not follow the hub one publish at a time. The hub tells the fan-out that
events were added (:meth:`~broadcast.feed.hub.Hub.add_event_listener`); the fan-out then
*ticks*: at once if the last tick is ``interval`` seconds ago, else when it is. A tick
takes every event since the previous one and

* writes them to every spectator that is caught up (its cursor at the previous tick),
  idle (its sender waiting) and within ``write_limit`` bytes of write buffer: the same
  bytes for all of them, framed once per kind of client (one websocket message per
  event, or one JSON array of them for clients of the :data:`BATCH_SUBPROTOCOL`), one
  ``write()`` each;
* wakes every other idle spectator that has something pending (behind, resuming, or
  its buffer full): its sender waits until its buffer has drained, then sends
  everything since its cursor in one go, or a snapshot of the latest state when the
  ring no longer holds those events. A slow spectator thus skips to the newest state
  instead of queueing, and one whose buffer does not drain within ``slow_timeout``
  seconds is dropped (it may reconnect and resume with ``since``).

So the cost of a tick is one encoding per kind of client plus one write per spectator,
whatever the number of events, and a spectator gets at most one frame per tick (plus
the answer to its own ``resume``). The hub never wakes the spectators' subscriptions
itself (``wake=False``): publishing costs nothing per spectator.

A tick writes ``slice_size`` spectators per event-loop iteration, so that a large
audience does not hold up the process's other work (the moves coming in, the HTTP
GETs) while it is written to. The ticks keep to a share of the process's time
(``tick_share``, two thirds by default: :data:`TICK_SHARE`): a tick whose slices took
``t`` seconds is followed by the next one no sooner than ``t / tick_share`` seconds
after it began, and never sooner than ``interval``; the rest is left to the process's
other work (the spectators served one by one, new connections, the moves coming in).
A relay with a few hundred spectators thus ticks every ``interval``; one with so many
that writing them all takes longer (13-19 ms a thousand on a 2.1 GHz core) ticks less
often and sends more in each frame, rather than falling behind the round and taking
the whole core (docs/performance.md, "Spectator ticks").
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.typing import Subprotocol

from broadcast.feed.hub import Hub
from broadcast.feed.subscriptions import Subscription, Update

__all__ = ["BATCH_SUBPROTOCOL", "TICK_SHARE", "FanOut", "Spectator", "batch_text", "can_take"]

logger = logging.getLogger(__name__)

#: The websocket subprotocol of spectators that take a frame's events as one JSON array.
BATCH_SUBPROTOCOL = Subprotocol("dgtcast.batch")

#: The share of the process's time the feed's ticks may take by default.
TICK_SHARE = 2 / 3


def can_take(ws: ServerConnection, limit: int) -> bool:
    """Whether whole frames may be written to ``ws`` now without passing ``limit``."""
    return (
        ws.protocol.state is State.OPEN
        and ws.send_in_progress is None
        and ws.transport.get_write_buffer_size() <= limit
    )


def batch_text(texts: list[str]) -> str:
    """Feed messages as one JSON array (a batched frame)."""
    return f"[{','.join(texts)}]"


def _frames(texts: list[str], batch: bool) -> bytes:
    """Server frames are unmasked and the feed uncompressed (RFC 6455 §5.1, §5.2): the
    bytes are the same for every spectator."""
    if batch:
        texts = [batch_text(texts)]
    return b"".join(Frame(Opcode.TEXT, text.encode()).serialize(mask=False) for text in texts)


@dataclass(eq=False, slots=True)
class Spectator:
    """One spectator's connection, cursor and wake-up."""

    ws: ServerConnection
    sub: Subscription
    batch: bool  # one JSON array per frame (BATCH_SUBPROTOCOL)
    woken: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(eq=False, slots=True, kw_only=True)
class _Tick:
    """One tick being written: its events, framed once per kind of client."""

    before: int
    after: int
    texts: list[str]
    spectators: list[tuple[ServerConnection, Spectator]]
    frames: dict[bool, bytes] = field(default_factory=dict)
    done: int = 0  # spectators written to (or woken) so far
    spent: float = 0.0  # seconds its slices took


class FanOut:
    """Ticks the spectator feed of ``hub`` (see the module docstring).

    Args:
        hub: the hub the spectators follow (the public one).
        interval: seconds between ticks at most one frame per spectator (0: a tick
            per publish, or per :meth:`~broadcast.feed.hub.Hub.batch` of them).
        write_limit: bytes of write buffer a spectator may hold and still be written to.
        slow_timeout: seconds a spectator's buffer may stay full before it is dropped.
        tick_share: the share of the process's time the ticks may take (None: every
            ``interval`` whatever they cost).
        slice_size: spectators written per event-loop iteration.
        clock: the monotonic clock the ticks are spaced by (the event loop's).
    """

    def __init__(
        self,
        hub: Hub,
        *,
        interval: float,
        write_limit: int,
        slow_timeout: float = 30.0,
        tick_share: float | None = TICK_SHARE,
        slice_size: int = 500,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if tick_share is not None and not 0 < tick_share <= 1:
            raise ValueError("tick_share must be in (0, 1]")
        if slice_size < 1:
            raise ValueError("slice_size must be at least 1")
        self.hub = hub
        self.interval = interval
        self.write_limit = write_limit
        self.slow_timeout = slow_timeout
        self.tick_share = tick_share
        self.slice_size = slice_size
        self._clock = clock
        #: Seconds from the start of one tick to the next at least: ``interval``, or
        #: longer after a tick that took more than ``tick_share`` of it.
        self.spacing = interval
        #: Ticks so far.
        self.ticks = 0
        #: Spectators dropped for not reading (their buffer full for ``slow_timeout``).
        self.dropped = 0
        self._idle: dict[ServerConnection, Spectator] = {}
        self._seq = hub.seq
        self._last_tick = float("-inf")
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._writing: _Tick | None = None  # the tick whose slices are being written
        self._again = False  # asked for a tick while one was being written
        self._remove: Callable[[], None] | None = hub.add_event_listener(self._schedule)

    def close(self) -> None:
        """Stop following the hub."""
        if self._remove is not None:
            self._remove()
            self._remove = None
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._writing = None

    async def serve(self, spectator: Spectator, texts: Callable[[Update], list[str]]) -> None:
        """The spectator's sender: what the ticks do not write, until the connection ends.

        ``texts`` turns an update into the messages to send (snapshot, resumed, events).
        """
        ws, sub = spectator.ws, spectator.sub
        spectator.woken.set()  # the snapshot (or the resume) first
        while True:
            self._idle[ws] = spectator
            if not spectator.woken.is_set() and sub.has_pending():
                self._schedule()  # events came while it was sending: the next tick
            try:
                await spectator.woken.wait()
            finally:
                self._idle.pop(ws, None)
                spectator.woken.clear()
            try:
                async with asyncio.timeout(self.slow_timeout):
                    await ws.drain()  # what the ticks wrote leaves first: one backlog at most
            except TimeoutError:
                self.dropped += 1
                logger.info("= spectator %s dropped: it stopped reading", ws.remote_address)
                ws.transport.abort()
                return
            for text in _grouped(texts(sub.receive_nowait()), spectator.batch):
                await ws.send(text)

    def _schedule(self) -> None:
        if self._writing is not None:  # once the tick being written is done
            self._again = True
            return
        if self._handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # published outside the loop: the next publish ticks
            return
        wait = self._last_tick + self.spacing - self._clock()
        if wait > 0:
            self._handle = loop.call_later(wait, self.tick)
        elif self.interval <= 0:  # every publish (or batch of them: Hub.batch) now
            self.tick()
        else:
            self._handle = loop.call_soon(self.tick)

    def tick(self) -> None:
        """Write the events since the last tick to the idle caught-up spectators; wake
        the idle ones that have something else pending (``slice_size`` of them now, the
        others in the next iterations of the event loop)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        while self._writing is not None:  # the one being written first, all of it
            self._write_slice(reschedule=False)
        self._last_tick = self._clock()
        self.ticks += 1
        before, after = self._seq, self.hub.seq
        self._seq = after
        messages = self.hub.messages_since(before) if after != before else None
        self._writing = _Tick(
            before=before,
            after=after,
            texts=[message.text for message in messages] if messages else [],
            spectators=list(self._idle.items()),
        )
        self._write_slice()

    def _write_slice(self, *, reschedule: bool = True) -> None:
        self._handle = None
        tick = self._writing
        assert tick is not None
        began = self._clock()
        try:
            end = tick.done + self.slice_size
            for ws, spectator in tick.spectators[tick.done : end]:
                if self._idle.get(ws) is spectator:  # not since woken or gone
                    self._write(tick, ws, spectator)
            tick.done = end
        finally:
            tick.spent += self._clock() - began
        if tick.done < len(tick.spectators):
            self._handle = asyncio.get_running_loop().call_soon(self._write_slice)
            return
        self._writing = None
        if self.tick_share is not None:
            self.spacing = max(self.interval, tick.spent / self.tick_share)
        if reschedule and (self._again or self.hub.seq != self._seq):
            self._again = False
            self._schedule()

    def _write(self, tick: _Tick, ws: ServerConnection, spectator: Spectator) -> None:
        sub = spectator.sub
        if tick.texts and can_take(ws, self.write_limit) and sub.advance(tick.before, tick.after):
            data = tick.frames.get(spectator.batch)
            if data is None:
                data = tick.frames[spectator.batch] = _frames(tick.texts, spectator.batch)
            ws.transport.write(data)
        elif sub.has_pending():
            spectator.woken.set()

    def wake(self, spectator: Spectator) -> None:
        """Have the spectator's sender answer now (a ``resume`` it sent)."""
        spectator.woken.set()


_ALONE = ('{"type":"snapshot"', '{"type":"resumed"')


def _grouped(texts: list[str], batch: bool) -> list[str]:
    """A batch client's messages: a snapshot or ``resumed`` alone, the events in one array."""
    if not batch or len(texts) <= 1:
        return texts
    if texts[0].startswith(_ALONE):
        return [texts[0], *_grouped(texts[1:], batch)]
    return [batch_text(texts)]
