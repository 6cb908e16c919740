"""When the battery is asked (drivers/dgt/battery.py), pure: 0x4C at the connection and
every period; a silent (USB) board is given up; never during the memory dump (§4.1, §6)."""

from __future__ import annotations

import itertools
import math

from hypothesis import given
from hypothesis import strategies as st

from drivers.dgt.battery import BATTERY_MISSES, BatteryPoll
from drivers.dgt.commands import RequestBattery


def poll_at(now: float = 0.0) -> BatteryPoll:
    poll = BatteryPoll(period=60.0, reply=1.0)
    poll.start(now)
    return poll


def step(poll: BatteryPoll, now: float) -> int:
    """Let ``now`` pass; how many requests went out."""
    poll.receive_time(now)
    return len(poll.commands_to_send())


def test_nothing_is_asked_before_the_handshake_is_done() -> None:
    poll = BatteryPoll(period=60.0, reply=1.0)
    poll.receive_time(100.0)
    assert poll.commands_to_send() == []
    assert poll.next_deadline() == math.inf


def test_asked_at_once_then_every_period_while_the_board_answers() -> None:
    poll = poll_at(10.0)
    poll.receive_time(10.0)
    assert poll.commands_to_send() == [RequestBattery()]
    poll.receive_answer(10.1)
    assert poll.next_deadline() == 70.0
    assert step(poll, 69.9) == 0
    assert step(poll, 70.0) == 1
    poll.receive_answer(70.2)
    assert (poll.requests, poll.answers, poll.silent) == (2, 2, False)


def test_a_usb_board_is_asked_twice_and_then_never_again_on_this_connection() -> None:
    poll = poll_at()
    assert step(poll, 0.0) == 1
    assert step(poll, 1.0) == 0  # the first request missed
    assert step(poll, 60.0) == 1
    assert step(poll, 61.0) == 0
    assert poll.silent
    assert poll.requests == BATTERY_MISSES
    assert poll.next_deadline() == math.inf
    assert sum(step(poll, t) for t in range(62, 100_000, 7)) == 0


def test_a_board_that_answered_once_is_asked_on_through_misses() -> None:
    poll = poll_at()
    step(poll, 0.0)
    poll.receive_answer(0.2)
    for minute in range(1, 6):  # out of range a while: every answer lost
        assert step(poll, minute * 60.0) == 1
        step(poll, minute * 60.0 + 1.0)
    assert not poll.silent
    assert step(poll, 360.0) == 1


def test_a_late_answer_still_counts() -> None:
    poll = poll_at()
    step(poll, 0.0)
    step(poll, 1.5)  # missed
    poll.receive_answer(1.7)  # arrives after all
    step(poll, 60.0)
    step(poll, 61.0)  # missed again: two misses, but the board did answer
    assert not poll.silent


def test_no_request_while_the_memory_dump_is_on_its_way() -> None:
    poll = poll_at()
    step(poll, 0.0)
    poll.receive_answer(0.1)
    poll.receive_memory_request(59.0)
    assert step(poll, 60.0) == 0
    assert step(poll, 65.0) == 0
    poll.receive_memory_dump(67.3)
    assert poll.next_deadline() == 60.0  # overdue: right after the dump
    assert step(poll, 67.3) == 1


def test_a_dump_that_never_comes_holds_requests_back_only_for_memory_wait() -> None:
    poll = poll_at()
    step(poll, 0.0)
    poll.receive_answer(0.1)
    poll.receive_memory_request(50.0)
    assert step(poll, 79.9) == 0
    assert poll.next_deadline() == 80.0
    assert step(poll, 80.0) == 1


@given(
    st.lists(
        st.tuples(st.floats(0.0, 500.0), st.sampled_from(["tick", "answer", "memory", "dump"])),
        max_size=60,
    )
)
def test_never_two_requests_within_the_reply_time_nor_during_a_dump(
    steps: list[tuple[float, str]],
) -> None:
    poll = poll_at()
    sent: list[float] = []
    dumping_since: float | None = None
    for now, what in sorted(steps):
        if what == "answer":
            poll.receive_answer(now)
        elif what == "memory":
            poll.receive_memory_request(now)
            dumping_since = now
        elif what == "dump":
            poll.receive_memory_dump(now)
            dumping_since = None
        poll.receive_time(now)
        if poll.commands_to_send():
            assert dumping_since is None or now >= dumping_since + poll.memory_wait
            sent.append(now)
        assert poll.next_deadline() >= now or poll.next_deadline() == math.inf
    assert all(b - a >= poll.reply for a, b in itertools.pairwise(sent))
