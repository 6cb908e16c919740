"""The one backoff of every reconnecting part (base/backoff.py)."""

from __future__ import annotations

import random

import pytest

from base.backoff import Backoff, BackoffPolicy


def test_doubles_up_to_the_maximum_and_honours_retry_after() -> None:
    backoff = Backoff(BackoffPolicy(initial=1.0, maximum=5.0, retry_after_cap=100.0))
    assert [backoff.next_delay() for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert backoff.next_delay(retry_after=30.0) == 30.0
    assert backoff.next_delay(retry_after=1000.0) == 100.0
    assert backoff.next_delay(retry_after=0.5) == 0.5  # exactly, below the step too
    assert backoff.failures == 8
    backoff.reset()
    assert (backoff.next_delay(), backoff.failures) == (1.0, 1)


def test_retry_after_wins_over_jitter() -> None:
    policy = BackoffPolicy(initial=1.0, maximum=1.0, jitter=0.5)
    backoff = Backoff(policy, random.Random(3))
    assert backoff.next_delay(retry_after=2.0) == 2.0
    assert 0.5 <= backoff.next_delay() <= 1.0


def test_a_nonsensical_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="initial"):
        BackoffPolicy(initial=0.0)
