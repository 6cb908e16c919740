"""The pure parts of the supervisor: its state table and its backoff."""

from __future__ import annotations

import random

import pytest

from base.backoff import Backoff, BackoffPolicy
from drivers.dgt.aio.supervisor import (
    TRANSITIONS,
    LinkCounters,
    SupervisorState,
)


def reachable(start: SupervisorState) -> set[SupervisorState]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in TRANSITIONS[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_every_state_is_reachable_and_every_state_can_stop() -> None:
    assert reachable(SupervisorState.CONNECTING) == set(SupervisorState)
    for state, targets in TRANSITIONS.items():
        assert state is SupervisorState.STOPPED or SupervisorState.STOPPED in targets
    assert TRANSITIONS[SupervisorState.STOPPED] == frozenset()


def test_online_is_only_reached_through_a_handshake() -> None:
    sources = {state for state, targets in TRANSITIONS.items() if SupervisorState.ONLINE in targets}
    assert sources == {SupervisorState.HANDSHAKING}


def test_backoff_doubles_from_200_ms_up_to_5_s_and_resets() -> None:
    backoff = Backoff(BackoffPolicy())
    delays = [backoff.next_delay() for _ in range(8)]
    assert delays == pytest.approx([0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0])
    backoff.reset()
    assert backoff.next_delay() == pytest.approx(0.2)


def test_jitter_only_shortens_a_delay_and_by_at_most_its_fraction() -> None:
    policy = BackoffPolicy(initial=1.0, factor=1.0, maximum=1.0, jitter=0.5)
    delays = [Backoff(policy, random.Random(seed)).next_delay() for seed in range(200)]
    assert all(0.5 <= delay <= 1.0 for delay in delays)
    assert len(set(delays)) > 100


@pytest.mark.parametrize(
    "policy",
    [
        {"initial": 0.0},
        {"initial": 6.0, "maximum": 5.0},
        {"factor": 0.5},
        {"jitter": 1.0},
    ],
)
def test_a_nonsensical_policy_is_refused(policy: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="initial"):
        BackoffPolicy(**policy)


def test_counters_add_up() -> None:
    total = LinkCounters(bytes_received=10, violations=1, connects=1) + LinkCounters(
        bytes_received=5, messages_received=2, disconnects=1, failed_connects=3
    )
    assert total == LinkCounters(
        bytes_received=15,
        messages_received=2,
        violations=1,
        connects=1,
        disconnects=1,
        failed_connects=3,
    )
