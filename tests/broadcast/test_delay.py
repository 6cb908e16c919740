"""Public delay: the pure delay line, and the asyncio shell that feeds the public hub."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broadcast.feed.delay import DelayLine, PublicDelay
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from tests.broadcast.feed_client import state_after
from tests.hand_clock import HandClock


def _tick(board: int, plies: int, at: float, running: str = "white") -> BoardState:
    """A clock reading at ``at``; ``updated_at`` tells states apart in the tests."""
    return state_after(
        board, plies, white_clock=5000 - at, black_clock=5000, running=running, clock_at=at,
        updated_at=at,
    )  # fmt: skip


def test_delay_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        DelayLine(0)


def test_states_leave_once_delay_old_oldest_first() -> None:
    line = DelayLine(10.0)
    assert line.next_release_at() is None
    line.receive_state(state_after(2, 1), now=100.0)
    line.receive_state(state_after(1, 1), now=101.0)
    line.receive_state(state_after(2, 2), now=102.0)
    assert line.next_release_at() == 110.0
    assert line.release(109.9) == []
    assert line.release(111.0) == [state_after(2, 1), state_after(1, 1)]
    assert line.next_release_at() == 112.0
    assert line.release(1000.0) == [state_after(2, 2)]
    assert len(line) == 0


def test_ticks_are_thinned_but_changes_are_kept() -> None:
    line = DelayLine(3600.0, tick_resolution=5.0)
    for second in range(3600):
        running = "black" if second % 600 == 599 else "white"  # a switch now and then
        plies = second // 600
        line.receive_state(_tick(1, plies, float(second), running), now=float(second))
    assert len(line) < 3600 / 5 + 30
    released = line.release(7200.0)
    assert released[-1].updated_at == 3599.0  # the newest reading always survives
    kept = [s.updated_at for s in released]
    assert kept == sorted(kept)
    switches = [s.updated_at for s in released if s.running == "black"]
    assert switches == [599.0 + 600 * i for i in range(6)]
    assert {len(s.moves) for s in released} == set(range(6))


def test_equal_pgn_and_moves_are_shared() -> None:
    line = DelayLine(1.0, tick_resolution=0.5)
    for second in range(3):
        line.receive_state(_tick(1, 3, float(second)), now=float(second))
    a, b, c = line.release(10.0)
    assert a.pgn is b.pgn is c.pgn
    assert a.moves is b.moves is c.moves


_STEP = st.tuples(
    st.floats(0.0, 4.0),  # seconds since the previous state
    st.integers(1, 3),  # board
    st.sampled_from(["tick", "tick", "tick", "switch", "move"]),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(_STEP, max_size=80), st.floats(0.5, 20.0), st.floats(0.0, 6.0))
def test_released_states_are_received_ones_never_early(
    steps: list[tuple[float, int, str]], delay: float, resolution: float
) -> None:
    line = DelayLine(delay, tick_resolution=resolution)
    now = 0.0
    last: dict[int, BoardState] = {}
    arrival: dict[float, float] = {}
    must_keep: list[float] = []
    released: list[BoardState] = []
    for dt, board, kind in steps:
        now += dt
        before = last.get(board)
        plies = len(before.moves) + (kind == "move") if before else 0
        running = "black" if kind == "switch" else (before.running if before else "white")
        state = _tick(board, min(plies, 8), now, running or "white")
        state = dataclasses.replace(state, updated_at=float(len(arrival)))
        arrival[state.updated_at] = now
        if before is None or (before.moves, before.running) != (state.moves, state.running):
            must_keep.append(state.updated_at)  # more than a clock reading
        last[board] = state
        line.receive_state(state, now)
        for out in line.release(now):
            assert arrival[out.updated_at] + delay <= now
            released.append(out)
    released += line.release(now + delay)
    ids = [s.updated_at for s in released]
    assert ids == sorted(ids)  # arrival order, nothing twice
    assert set(must_keep) <= set(ids)
    assert {s.updated_at for s in last.values()} <= set(ids)  # every newest state arrives


# --- The asyncio shell -------------------------------------------------------------


async def test_public_hub_follows_the_hand_driven_clock() -> None:
    live = Hub()
    clock = HandClock(1000.0)
    live.publish_board(state_after(1, 1))  # already live before the delay started
    async with PublicDelay(live, 30.0, clock=clock) as delayed:
        assert delayed.public.state(1) is None
        live.publish_board(state_after(1, 2))
        clock.now += 29.0
        assert delayed.release_due() == 0
        assert delayed.public.state(1) is None
        clock.now += 1.0
        assert delayed.release_due() == 2
        assert delayed.public.state(1) == state_after(1, 2)
        assert [e.TYPE for e in (m.event for m in delayed.public.messages_since(0) or [])] == [
            "board",
            "move",
        ]


async def test_timer_task_releases_on_the_loop_clock() -> None:
    live = Hub()
    loop = asyncio.get_running_loop()
    async with PublicDelay(live, 0.05) as delayed:
        sub = delayed.public.subscribe(since=0)
        await sub.receive()
        published_at = loop.time()
        live.publish_board(state_after(1, 3))
        async with asyncio.timeout(5):
            update = await sub.receive()
        assert loop.time() - published_at >= 0.05  # never before the delay
        assert [s.board for s in update.boards] == [1]
    assert live.publish_board(state_after(1, 4))  # closed: the listener is gone
    assert delayed.public.state(1) == state_after(1, 3)
