"""The flood guard (daemon/session/flood.py): when a board floods, what goes on, when it calms."""

from __future__ import annotations

from daemon.session.flood import FloodGuard


def test_hands_never_flood() -> None:
    guard = FloodGuard()
    assert all(guard.admit(i * 0.05, flicker=i % 10 == 0) for i in range(200))  # 20 a second
    assert not guard.flooding


def test_a_whole_board_set_up_at_once_is_no_flood() -> None:
    guard = FloodGuard()
    assert all(guard.admit(1.0) for _ in range(64))
    assert not guard.flooding


def test_flickers_flood_sooner() -> None:
    guard = FloodGuard(limit=500, flicker_limit=20, interval=0.1, calm=5.0)
    for i in range(30):
        guard.admit(i * 0.01, flicker=i > 1)
    assert guard.flooding


def test_a_flood_lets_one_placement_per_interval_through_then_calms() -> None:
    guard = FloodGuard(limit=50, interval=0.1, calm=5.0)
    admitted = [guard.admit(i * 0.001) for i in range(1000)]  # 1,000 a second
    assert guard.flooding
    assert sum(admitted) < 60
    assert guard.held > 900
    assert guard.next_release() <= 1.1
    assert not guard.calmed(2.0), "quiet for less than the calm time"
    assert guard.calmed(7.1)
    assert not guard.flooding
    assert guard.admit(7.2)
