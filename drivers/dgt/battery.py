"""When to ask a board's battery level (DGT_SEND_BATTERY_STATUS 0x4C), sans I/O.

Bluetooth e-boards answer 0x4C with BATTERY_STATUS 0xA0 (docs/protocol.md §4.1); USB boards
stay silent. :class:`BatteryPoll` asks once the handshake is done and then every
``period`` seconds, with these rules:

* Silence costs nothing: a board that left ``misses`` requests in a row unanswered
  (each given ``reply`` seconds) is a USB board and is not asked again on this
  connection (a reconnect starts afresh). A board that answered once is asked on.
* The answer is one short message among the board's others (a field update or a
  clock reading is never held back by it); the request is one byte.
* Never during the board's memory dump (0x49 → EE_MOVES, ~8 s at 9600 baud, §6):
  while :meth:`BatteryPoll.receive_memory_request` is pending the request waits, and
  goes out right after the dump (or after ``memory_wait`` seconds without one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from base.drain import drain
from drivers.dgt.commands import Command, RequestBattery

__all__ = ["BATTERY_MISSES", "BatteryPoll"]

#: Unanswered requests in a row after which a board is taken for a USB board.
BATTERY_MISSES = 2


@dataclass(slots=True)
class BatteryPoll:
    """The battery requests of one connection (loop times, seconds).

    Attributes:
        period: a request this often while the board answers.
        reply: how long an answer may take before the request counts as missed.
        memory_wait: the longest a memory dump may hold a request back.
        misses: unanswered requests in a row after which the board is not asked again.
        requests / answers: how many requests went out and answers came in.
    """

    period: float
    reply: float
    memory_wait: float = 30.0
    misses: int = BATTERY_MISSES
    requests: int = 0
    answers: int = 0
    _active: bool = False
    _due: float = math.inf
    _sent: float | None = None
    _missed: int = 0
    _answered: bool = False
    _memory_until: float | None = None
    _commands: list[Command] = field(default_factory=list)

    @property
    def silent(self) -> bool:
        """The board never answered and is no longer asked (a USB board)."""
        return not self._answered and self._missed >= self.misses

    def start(self, now: float) -> None:
        """The handshake is done: ask at once, then every ``period`` seconds."""
        self._active = True
        self._due = now

    def receive_answer(self, at: float) -> None:
        """A BATTERY_STATUS arrived."""
        self.answers += 1
        self._answered = True
        self._missed = 0
        self._sent = None

    def receive_memory_request(self, now: float) -> None:
        """The board's memory was asked: hold requests back until its dump arrived."""
        self._memory_until = now + self.memory_wait

    def receive_memory_dump(self, at: float) -> None:
        """The memory dump (EE_MOVES) arrived: requests may go out again."""
        self._memory_until = None

    def receive_time(self, now: float) -> None:
        """Let ``now`` pass: count a missed answer; queue a request when one is due."""
        if not self._active:
            return
        if self._sent is not None and now >= self._sent + self.reply:
            self._sent = None
            self._missed += 1
        if self._memory_until is not None and now >= self._memory_until:
            self._memory_until = None
        if self.silent or self._sent is not None or self._memory_until is not None:
            return
        if now >= self._due:
            self._commands.append(RequestBattery())
            self.requests += 1
            self._sent = now
            self._due = now + self.period

    def next_deadline(self) -> float:
        """When :meth:`receive_time` must be called next (``inf`` when nothing is due)."""
        if not self._active or self.silent:
            return math.inf
        if self._sent is not None:
            return self._sent + self.reply
        if self._memory_until is not None:
            return self._memory_until
        return self._due

    def commands_to_send(self) -> list[Command]:
        """Return and forget the requests to write."""
        return drain(self._commands)
