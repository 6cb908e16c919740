"""Compact clock readings in the hub: the state they stand for, the events they make."""

from __future__ import annotations

import dataclasses

from broadcast.feed.events import ClockChanged
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState, ClockReading
from broadcast.feed.pgn import with_clock_tags
from broadcast.feed.public_results import PublicResults
from tests.broadcast.feed_client import state_after

TAGS = '[WhiteClock "1:30:00"]\n[BlackClock "1:30:00"]\n'


def _clocked(board: int = 1) -> BoardState:
    """A board whose white clock runs from 5400 s at t=1000, its PGN with clock tags."""
    state = state_after(board, 2, white_clock=5400.0, black_clock=5400.0)
    state = dataclasses.replace(state, running="white", clock_at=1000.0, updated_at=1000.0)
    return dataclasses.replace(state, pgn=state.pgn.replace("[White ", TAGS + "[White ", 1))


def _reading(white: float, at: float, *, running: str | None = "white") -> ClockReading:
    return ClockReading(
        board=1,
        white_clock=white,
        black_clock=5400.0,
        running=running,  # type: ignore[arg-type]
        clock_at=at,
    )


def test_a_reading_the_viewers_count_down_to_is_no_event_but_is_the_state() -> None:
    hub = Hub()
    hub.publish_board(_clocked())
    seq = hub.seq
    assert hub.publish_clock(_reading(5390.0, 1010.0), now=1010.5)
    assert hub.seq == seq  # 5400 - 10 s: what a viewer shows anyway
    state = hub.state(1)
    assert state is not None
    assert (state.white_clock, state.clock_at, state.updated_at) == (5390.0, 1010.0, 1010.5)
    assert state.pgn == with_clock_tags(_clocked().pgn, 5390.0, 5400.0)
    assert '[WhiteClock "1:29:50"]' in state.pgn
    assert state.moves == _clocked().moves


def test_a_reading_a_viewer_could_not_count_down_to_is_a_clock_event() -> None:
    hub = Hub()
    hub.publish_board(_clocked())
    assert hub.publish_clock(_reading(5390.0, 1010.0, running="black"), now=1010.0)
    [message] = hub.messages_since(hub.seq - 1) or []
    assert message.event == ClockChanged(
        seq=hub.seq,
        board=1,
        white_clock=5390.0,
        black_clock=5400.0,
        running="black",
        clock_at=1010.0,
    )
    assert hub.publish_clock(_reading(5300.0, 1011.0, running="black"), now=1011.0)
    assert hub.seq == message.event.seq + 1  # white's time jumped (an arbiter set it)


def test_small_drifts_add_up_to_an_event_as_with_whole_states() -> None:
    hub = Hub()
    hub.publish_board(_clocked())
    seq = hub.seq
    for k in range(1, 4):  # each 1 s further off the count-down: the second is 2 s off
        hub.publish_clock(_reading(5400.0 - 9 * k, 1000.0 + 10 * k), now=1000.0 + 10 * k)
    assert hub.seq == seq + 1


def test_a_board_without_a_clock_reading_yet_takes_the_whole_state() -> None:
    hub = Hub()
    assert not hub.publish_clock(_reading(5390.0, 1010.0), now=1010.0)  # unknown board
    hub.publish_board(state_after(1, 2))
    assert not hub.publish_clock(_reading(5390.0, 1010.0), now=1010.0)  # no clock tags yet
    assert hub.state(1) == state_after(1, 2)


def test_a_plain_reading_wakes_state_readers_but_not_event_readers() -> None:
    hub = Hub()
    hub.publish_board(_clocked())
    states = hub.subscribe(alerts=False)
    events = hub.subscribe(alerts=False, boards=False)
    states.receive_nowait()
    events.receive_nowait()
    hub.publish_clock(_reading(5390.0, 1010.0), now=1010.0)
    assert states.has_pending()
    assert not events.has_pending()
    [state] = states.receive_nowait().boards
    assert state.white_clock == 5390.0


def test_a_new_state_replaces_a_reading_not_read_yet() -> None:
    hub = Hub()
    hub.publish_board(_clocked())
    hub.publish_clock(_reading(5390.0, 1010.0), now=1010.0)
    newer = dataclasses.replace(_clocked(), white_clock=5380.0, clock_at=1020.0)
    hub.publish_board(newer)
    assert hub.state(1) == newer
    assert [s.board for s in hub.states()] == [1]


def test_public_results_pass_readings_on_and_read_the_same_state() -> None:
    live = Hub()
    live.publish_board(_clocked())
    public = PublicResults(live, "confirmed")
    public.start()
    live.publish_clock(_reading(5390.0, 1010.0, running="black"), now=1010.0)
    assert public.public.state(1) == live.state(1)
    assert public.public.seq == 2  # the board, then the clock event
