"""The board refresh schedule (drivers/dgt/refresh.py): when a dump is asked for."""

from __future__ import annotations

import math

from drivers.dgt.commands import RequestBoard, RequestClock
from drivers.dgt.refresh import BoardRefresh

ASK = [RequestBoard(), RequestClock()]


def _refresh() -> BoardRefresh:
    return BoardRefresh(period=10.0, settle=0.2, reply=1.0)


def test_nothing_before_the_handshake_is_done() -> None:
    refresh = _refresh()
    refresh.receive_violation(1.0)
    refresh.request(1.0)
    refresh.receive_time(100.0)
    assert refresh.next_deadline() == math.inf
    assert refresh.commands_to_send() == []


def test_periodic_then_after_each_dump() -> None:
    refresh = _refresh()
    refresh.start(0.0)
    assert refresh.next_deadline() == 10.0
    refresh.receive_time(9.9)
    assert refresh.commands_to_send() == []
    refresh.receive_time(10.0)
    assert refresh.commands_to_send() == ASK
    refresh.receive_dump(10.1)
    assert refresh.next_deadline() == 20.1


def test_a_violation_asks_after_the_settle_time_and_one_request_at_a_time() -> None:
    refresh = _refresh()
    refresh.start(0.0)
    refresh.receive_violation(3.0)
    assert refresh.next_deadline() == 3.2
    refresh.receive_time(3.2)
    assert refresh.commands_to_send() == ASK
    refresh.receive_violation(3.3)  # more noise while the dump is on its way
    refresh.receive_time(3.6)
    assert refresh.commands_to_send() == [], "waits for the dump or the reply time"
    assert refresh.next_deadline() == 4.2
    refresh.receive_time(4.2)  # no dump came: ask again
    assert refresh.commands_to_send() == ASK
    assert refresh.requests == 2


def test_a_request_goes_out_at_once() -> None:
    refresh = _refresh()
    refresh.start(0.0)
    refresh.request(2.0)
    refresh.receive_time(2.0)
    assert refresh.commands_to_send() == ASK
