"""The pure decisions of a board connection: clock queue (§7.4) and watchdog (§12.3)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.dgt.commands import (
    ClockAscii,
    ClockBeep,
    ClockCommand,
    ClockEnd,
    ClockSetAndRun,
    ClockVersion,
    RequestSerialNumber,
)
from drivers.dgt.device_core import ClockDone, DeviceCore, DeviceTimeouts
from drivers.dgt.events import ClockAck, ClockFace, ClockTimes, Event, FieldUpdated

TIMEOUTS = DeviceTimeouts(clock_ack=2.0, clock_resends=3, quiet=3.0, probe=1.5)


def ack(command_id: int, *, error: bool = False) -> ClockAck:
    """The clock's answer to the command with ``command_id`` (§7.3)."""
    return ClockAck(ack0=0x40 if error else 0x10, ack1=command_id, ack2=0, ack3=0)


def times() -> ClockTimes:
    """A running clock's once-a-second reading."""
    face = ClockFace(
        hours=0, minutes=3, seconds=2, flag_fallen=False, time_per_move=True, flag_shown=False
    )
    return ClockTimes(right=face, left=face, status=0x09)


def core_at(now: float = 0.0) -> DeviceCore:
    return DeviceCore(TIMEOUTS, now=now)


def feed(core: DeviceCore, at: float, *events: Event) -> None:
    core.receive_events([(at, event) for event in events])
    core.receive_time(at)


def test_a_clock_command_goes_out_at_once_and_its_ack_completes_it() -> None:
    core = core_at()
    ticket = core.submit_clock(ClockVersion(), 0.0)
    assert core.commands_to_send() == [ClockVersion()]
    feed(core, 0.4, ack(0x09))
    assert core.clock_results() == [ClockDone(ticket=ticket, ack=ack(0x09), sends=1)]
    assert not core.clock_busy


def test_one_clock_command_in_flight_the_next_waits_for_the_ack() -> None:
    core = core_at()
    core.submit_clock(ClockAscii(text="board 3"), 0.0)
    core.submit_clock(ClockBeep(duration_ms=128), 0.1)
    assert core.commands_to_send() == [ClockAscii(text="board 3")]
    feed(core, 0.5, ack(0x0C))
    assert core.commands_to_send() == [ClockBeep(duration_ms=128)]


def test_a_lost_ack_means_a_resend_every_two_seconds_then_giving_up() -> None:
    core = core_at()
    ticket = core.submit_clock(ClockEnd(), 0.0)
    core.submit_clock(ClockVersion(), 0.0)
    sent = core.commands_to_send()
    for now in (1.9, 2.0, 3.9, 4.0, 6.0, 8.0):
        core.receive_time(now)
        core.receive_events([(now, FieldUpdated(field=0, piece=0))])  # keep the watchdog fed
        sent += core.commands_to_send()
    assert sent == [ClockEnd()] * 4 + [ClockVersion()]
    assert core.clock_results() == [ClockDone(ticket=ticket, ack=None, sends=4)]


def test_only_the_ack_of_the_command_in_flight_completes_it() -> None:
    core = core_at()
    core.submit_clock(ClockSetAndRun(left_seconds=5400, right_seconds=5400, run="left"), 0.0)
    auto = ClockAck(ack0=0x10, ack1=0x88, ack2=0x05, ack3=0x31)  # a button was pressed
    feed(core, 0.5, ack(0x0C), auto, times())
    assert core.clock_results() == []
    assert core.clock_busy


def test_an_error_ack_completes_the_command_with_that_ack() -> None:
    core = core_at()
    ticket = core.submit_clock(ClockSetAndRun(left_seconds=60, right_seconds=60, run="paused"), 0)
    feed(core, 0.3, ack(0x0A, error=True))
    [done] = core.clock_results()
    assert done.ticket == ticket
    assert done.ack is not None
    assert done.ack.is_error


def test_a_cancelled_command_that_waits_is_never_sent() -> None:
    core = core_at()
    core.submit_clock(ClockVersion(), 0.0)
    waiting = core.submit_clock(ClockEnd(), 0.0)
    core.cancel_clock(waiting)
    feed(core, 0.2, ack(0x09))
    assert core.commands_to_send() == [ClockVersion()]
    assert not core.clock_busy


def test_the_watchdog_probes_a_silent_line_then_declares_it_dead() -> None:
    core = core_at(10.0)
    assert core.next_deadline() == 13.0
    core.receive_time(12.9)
    assert core.commands_to_send() == []
    core.receive_time(13.0)
    assert core.commands_to_send() == [RequestSerialNumber()]
    assert core.next_deadline() == 14.5
    core.receive_time(14.4)
    assert core.dead_reason is None
    core.receive_time(14.5)
    assert core.dead_reason is not None
    assert "watchdog" in core.dead_reason
    assert core.next_deadline() == math.inf


def test_anything_heard_answers_the_probe_and_restarts_the_quiet_period() -> None:
    core = core_at()
    core.receive_time(3.0)
    assert core.commands_to_send() == [RequestSerialNumber()]
    feed(core, 3.2, FieldUpdated(field=12, piece=0))
    assert core.dead_reason is None
    assert core.next_deadline() == 6.2


def test_the_next_deadline_is_the_earliest_of_clock_and_watchdog() -> None:
    core = core_at()
    core.submit_clock(ClockVersion(), 2.5)
    assert core.next_deadline() == 3.0  # watchdog first
    feed(core, 2.9, times())
    assert core.next_deadline() == 4.5  # then the clock ack


def test_scaled_timeouts_divide_every_duration_but_not_the_resends() -> None:
    fast = TIMEOUTS.scaled(10)
    assert (fast.clock_ack, fast.quiet, fast.probe, fast.clock_resends) == (0.2, 0.3, 0.15, 3)


COMMANDS: list[ClockCommand] = [ClockVersion(), ClockEnd(), ClockAscii(text="hi")]

operation = st.one_of(
    st.tuples(st.just("submit"), st.sampled_from(COMMANDS)),
    st.tuples(st.just("ack"), st.sampled_from([0x03, 0x09, 0x0C, 0x0A, 0x88])),
    st.tuples(st.just("wait"), st.floats(min_value=0.0, max_value=3.0)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(operation, max_size=40))
def test_clock_queue_keeps_order_bounds_resends_and_never_overlaps(
    operations: list[tuple[str, object]],
) -> None:
    core = core_at()
    now = 0.0
    submitted: list[int] = []
    finished: list[int] = []
    sends: list[tuple[int, int]] = []  # (ticket of the command in flight, finished before)
    in_flight: int | None = None
    for kind, value in operations:
        if kind == "submit":
            assert isinstance(value, ClockAscii | ClockVersion | ClockEnd)
            submitted.append(core.submit_clock(value, now))
        elif kind == "ack":
            assert isinstance(value, int)
            core.receive_events([(now, ClockAck(ack0=0x10, ack1=value, ack2=0, ack3=0))])
        else:
            assert isinstance(value, float)
            now += value
            core.receive_time(now)
        finished += [done.ticket for done in core.clock_results()]
        clock_commands = [c for c in core.commands_to_send() if c != RequestSerialNumber()]
        for _ in clock_commands:
            if in_flight is None or in_flight in finished:
                in_flight = submitted[len({ticket for ticket, _ in sends})]
            sends.append((in_flight, len(finished)))
    tickets = [ticket for ticket, _ in sends]
    assert tickets == sorted(tickets), "commands go out in submission order"
    assert all(tickets.count(ticket) <= 1 + TIMEOUTS.clock_resends for ticket in submitted)
    assert finished == sorted(finished)
    assert set(finished) <= set(tickets)
    for ticket, done_before in sends:
        assert done_before == submitted.index(ticket), "the previous command had finished"
