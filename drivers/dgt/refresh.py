"""When to read the whole board again (DGT_SEND_BRD 0x42), sans I/O (issue 17.2).

The sensed board is built from FIELD_UPDATE messages on top of a board dump
(docs/protocol.md §4, §5). One lost or torn update leaves it wrong for good: every later
placement is off by that square and the game matches nothing again. A fresh dump
(67 bytes) puts it right, so :class:`BoardRefresh` asks for one

* soon after a protocol violation (``settle`` seconds later, so that the rest of a
  burst of line noise has passed);
* when the consumer asks (:meth:`BoardRefresh.request`): the daemon does when the
  sensed placement has matched nothing of the game for a moment;
* every ``period`` seconds while the board streams events, whatever happened.

Each request also re-reads the clock (0x41, BWTIME), so a lost lever-press report is
read again too. At most one request is in flight: the next waits for the dump, or for
``reply`` seconds if none comes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from base.drain import drain
from drivers.dgt.commands import Command, RequestBoard, RequestClock

__all__ = ["BoardRefresh"]


@dataclass(slots=True)
class BoardRefresh:
    """The re-dump schedule of one connection (loop times, seconds).

    Attributes:
        period: a dump at least this often while active.
        settle: delay between a protocol violation and its dump.
        reply: how long a request may go unanswered before another may go out.
        requests: how many dump requests went out.
    """

    period: float
    settle: float
    reply: float
    requests: int = 0
    _active: bool = False
    _due: float = math.inf
    _sent: float | None = None
    _commands: list[Command] = field(default_factory=list)

    def start(self, now: float) -> None:
        """The board streams events from now on (after the handshake's own dump)."""
        self._active = True
        self._due = now + self.period

    def receive_dump(self, at: float) -> None:
        """A board dump arrived: the sensed board is right again."""
        self._sent = None
        if self._active:
            self._due = at + self.period

    def receive_violation(self, at: float) -> None:
        """Bytes that were no valid message arrived: an update may be lost."""
        if self._active:
            self._due = min(self._due, at + self.settle)

    def request(self, now: float) -> None:
        """Read the board again as soon as possible."""
        if self._active:
            self._due = min(self._due, now)

    def receive_time(self, now: float) -> None:
        """Let ``now`` pass: queue a request when one is due and none is in flight."""
        if not self._active or now < self._deadline():
            return
        self._commands += [RequestBoard(), RequestClock()]
        self.requests += 1
        self._sent = now
        self._due = now + self.period

    def next_deadline(self) -> float:
        """When :meth:`receive_time` must be called next (``inf`` while inactive)."""
        return self._deadline() if self._active else math.inf

    def commands_to_send(self) -> list[Command]:
        """Return and forget the requests to write."""
        return drain(self._commands)

    def _deadline(self) -> float:
        if self._sent is None:
            return self._due
        return max(self._due, self._sent + self.reply)
