"""Capped exponential backoff: the one retry timing of every reconnecting part.

The serial supervisor (drivers/dgt/aio/supervisor.py), the MQTT clients, the lichess push,
the webhook and the PGN folder all wait with a :class:`Backoff`. It lives in the lowest
layer, vendor-neutral, so that every layer may import it without an upward import.

Pure: :meth:`Backoff.next_delay` returns a delay and the caller sleeps.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["Backoff", "BackoffPolicy"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BackoffPolicy:
    """Capped exponential backoff between attempts, in seconds.

    The defaults suit a local device link (a DGT board on USB); network clients pass
    their own values.

    Attributes:
        initial: the first delay after a loss or a failed attempt.
        factor: each further failed attempt multiplies the delay by this.
        maximum: the delay never exceeds this (unless a server asks for more).
        jitter: each delay is drawn uniformly from ``delay × [1 - jitter, 1]``, so that
            many clients do not retry in lock step; 0 disables it.
        retry_after_cap: a server's ``Retry-After`` is honoured (beyond ``maximum`` too)
            up to this many seconds.
    """

    initial: float = 0.2
    factor: float = 2.0
    maximum: float = 5.0
    jitter: float = 0.0
    retry_after_cap: float = 3600.0

    def __post_init__(self) -> None:
        if not 0 < self.initial <= self.maximum or self.factor < 1 or not 0 <= self.jitter < 1:
            raise ValueError("need 0 < initial <= maximum, factor >= 1, 0 <= jitter < 1")


class Backoff:
    """The delays of a :class:`BackoffPolicy`: :meth:`next_delay` after each failure,
    :meth:`reset` after a success."""

    def __init__(self, policy: BackoffPolicy | None = None, rng: random.Random | None = None):
        """Start at ``policy.initial``; ``rng`` draws the jitter (seed it in tests)."""
        self.policy = policy or BackoffPolicy()
        self._rng = rng or random.Random()
        self._next = self.policy.initial
        self.failures = 0

    def next_delay(self, retry_after: float | None = None) -> float:
        """Count one failure; the delay before the next attempt.

        Args:
            retry_after: a server's ``Retry-After`` in seconds: the delay is exactly
                this (at most ``retry_after_cap``), whatever the backoff's step and
                jitter; the step still moves on.
        """
        policy = self.policy
        delay = self._next
        self._next = min(self._next * policy.factor, policy.maximum)
        self.failures += 1
        if policy.jitter:
            delay *= 1 - policy.jitter * self._rng.random()
        if retry_after is not None:
            delay = min(retry_after, policy.retry_after_cap)
        return delay

    def reset(self) -> None:
        """An attempt succeeded: the next delay is ``initial`` again."""
        self._next = self.policy.initial
        self.failures = 0
