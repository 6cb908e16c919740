"""The hub: diffing board states into feed events, the ring, subscriptions, alerts."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broadcast.feed.alerts import Alert, AlertKind
from broadcast.feed.events import (
    BoardAnnounced,
    ClockChanged,
    MovesAppended,
    MovesCorrected,
    MovesTakenBack,
    ResultChanged,
    StatusChanged,
    diff_states,
    encode_json,
    event_to_json,
    state_to_json,
)
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState, BoardStatus, MoveInfo, to_json_dict
from tests.broadcast.feed_client import LINE, FeedModel, state_after


def test_first_state_announces_the_board() -> None:
    hub = Hub()
    events = hub.publish_board(state_after(1, 0))
    assert events == [BoardAnnounced(seq=1, board=1, state=state_after(1, 0))]
    assert hub.seq == 1


def test_new_plies_are_a_move_event() -> None:
    hub = Hub()
    hub.publish_board(state_after(1, 2))
    [event] = hub.publish_board(state_after(1, 5))
    assert isinstance(event, MovesAppended)
    assert (event.seq, event.ply, [m.san for m in event.moves]) == (2, 2, ["Nf3", "Nc6", "Bb5"])
    assert event.last_move == "f1b5"


def test_shorter_line_is_a_takeback() -> None:
    hub = Hub()
    hub.publish_board(state_after(1, 5))
    [event] = hub.publish_board(state_after(1, 3))
    assert event == MovesTakenBack(
        seq=2, board=1, ply=3, fen=state_after(1, 3).fen, last_move="g1f3"
    )


def test_changed_line_is_a_correction_with_the_replacement_moves() -> None:
    hub = Hub()
    hub.publish_board(state_after(1, 4))
    wrong = state_after(1, 3)
    fixed = dataclasses.replace(
        wrong, moves=(*wrong.moves, MoveInfo(san="Nf6", uci="g8f6", clock=5300.0))
    )
    [event] = hub.publish_board(fixed)
    assert isinstance(event, MovesCorrected)
    assert (event.ply, [m.uci for m in event.moves]) == (3, ["g8f6"])


def test_result_status_and_players_changes() -> None:
    hub = Hub()
    hub.publish_board(state_after(1, 2))
    events = hub.publish_board(state_after(1, 2, result="1-0", status=BoardStatus.OFFLINE))
    assert events == [
        ResultChanged(seq=2, board=1, result="1-0", result_final=False),
        StatusChanged(seq=3, board=1, status=BoardStatus.OFFLINE),
    ]
    [event] = hub.publish_board(state_after(1, 2, white="Someone Else"))
    assert isinstance(event, BoardAnnounced)
    assert event.state.white == "Someone Else"


def test_same_state_twice_is_no_event() -> None:
    hub = Hub()
    hub.publish_board(state_after(1, 2))
    assert hub.publish_board(state_after(1, 2, updated_at=99.0)) == []
    assert hub.seq == 1


def _clocks(white: float, black: float, running: str | None, at: float) -> BoardState:
    return state_after(1, 2, white_clock=white, black_clock=black, running=running, clock_at=at)


def test_ticking_clock_is_no_event_but_a_switch_is() -> None:
    hub = Hub()
    hub.publish_board(_clocks(300, 300, "white", 1000.0))
    assert hub.publish_board(_clocks(299, 300, "white", 1001.0)) == []
    assert hub.publish_board(_clocks(290, 300, "white", 1010.2)) == []
    [event] = hub.publish_board(_clocks(288, 300, "black", 1012.0))
    assert event == ClockChanged(
        seq=2, board=1, white_clock=288, black_clock=300, running="black", clock_at=1012.0
    )


def test_clock_set_by_hand_is_an_event() -> None:
    hub = Hub()
    hub.publish_board(_clocks(300, 300, "white", 1000.0))
    [event] = hub.publish_board(_clocks(360, 300, "white", 1001.0))  # +60 s bonus
    assert isinstance(event, ClockChanged)


def test_small_drifts_add_up_to_an_event() -> None:
    """Each reading is within tolerance of the last, but not of the last announced."""
    hub = Hub(clock_tolerance=1.5)
    hub.publish_board(_clocks(300, 300, None, 1000.0))
    for white in (299.5, 299.0, 298.5):
        assert hub.publish_board(_clocks(white, 300, None, 1001.0)) == []
    [event] = hub.publish_board(_clocks(298.0, 300, None, 1003.0))
    assert isinstance(event, ClockChanged)
    assert event.white_clock == 298.0


# --- Property: a client applying the events knows what the hub says it knows ---------

_POOL = tuple(MoveInfo(san=san, uci=uci, clock=60.0) for san, uci in LINE)
_OTHER = tuple(MoveInfo(san=f"x{i}", uci=f"a{i % 8 + 1}a1", clock=30.0) for i in range(8))


@st.composite
def _states(draw: st.DrawFn) -> BoardState:
    line = draw(st.sampled_from([_POOL, _OTHER, _POOL[:3] + _OTHER[3:]]))
    plies = draw(st.integers(0, len(line)))
    return BoardState(
        board=1,
        white=draw(st.sampled_from(["A", "B"])),
        moves=line[:plies],
        fen=f"fen-{plies}-{line[0].san}",
        last_move=line[plies - 1].uci if plies else None,
        white_clock=draw(st.sampled_from([None, 100.0, 99.0, 95.0])),
        black_clock=draw(st.sampled_from([None, 100.0, 98.5])),
        running=draw(st.sampled_from([None, "white", "black"])),
        clock_at=draw(st.sampled_from([None, 10.0, 11.0, 30.0])),
        status=draw(st.sampled_from(list(BoardStatus))),
        result=draw(st.sampled_from(["*", "1-0", "1/2-1/2"])),
        result_final=draw(st.booleans()),
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(_states(), min_size=1, max_size=12))
def test_applying_the_events_rebuilds_the_known_state(states: list[BoardState]) -> None:
    known: BoardState | None = None
    model = FeedModel()
    seq = 1
    for state in states:
        events, known = diff_states(known, state, next_seq=seq)
        seq += len(events)
        for event in events:
            model.apply(json.loads(encode_json(event_to_json(event))))
        assert model.boards[1] == state_to_json(known)
        clockless = {"white_clock", "black_clock", "running", "clock_at"}
        for name, value in state_to_json(state).items():
            if name not in clockless:
                assert model.boards[1][name] == value


# --- The ring ---------------------------------------------------------------------


def test_ring_gives_missed_events_or_none() -> None:
    hub = Hub(ring_size=3)
    for plies in range(6):
        hub.publish_board(state_after(1, plies))  # seq 1..6
    assert hub.messages_since(6) == []
    assert [m.event.seq for m in hub.messages_since(3) or []] == [4, 5, 6]
    assert hub.messages_since(2) is None  # seq 3 fell out of the ring
    assert hub.messages_since(7) is None  # from a previous server life
    with pytest.raises(ValueError, match="ring_size"):
        Hub(ring_size=0)


# --- Subscriptions -----------------------------------------------------------------


async def test_new_subscription_starts_with_every_board() -> None:
    hub = Hub()
    hub.publish_board(state_after(2, 1))
    hub.publish_board(state_after(1, 1))
    with hub.subscribe() as sub:
        update = await sub.receive()
        assert update.missed
        assert [s.board for s in update.boards] == [1, 2]
        assert update.seq == 2
        assert not sub.has_pending()
    assert hub.subscriber_count == 0


async def test_receive_waits_for_a_change() -> None:
    hub = Hub()
    sub = hub.subscribe(since=0)
    first = await sub.receive()
    assert (first.events, first.resumed, first.missed) == ((), 0, False)
    waiting = asyncio.create_task(sub.receive())
    await asyncio.sleep(0)
    assert not waiting.done()
    hub.publish_board(state_after(1, 1))
    update = await waiting
    assert [m.event.seq for m in update.events] == [1]
    assert [s.board for s in update.boards] == [1]


async def test_a_subscriber_that_falls_behind_holds_no_backlog() -> None:
    hub = Hub(ring_size=16)
    slow = hub.subscribe(since=0)
    await slow.receive()
    fast = hub.subscribe(since=0)
    await fast.receive()
    seen: list[int] = []
    for round_ in range(1000):
        hub.publish_board(state_after(1 + round_ % 3, round_ % 8))
        update = fast.receive_nowait()
        seen += [m.event.seq for m in update.events]
    assert seen == list(range(1, hub.seq + 1))
    assert len(slow._dirty_boards) <= 3  # bounded by the boards, not by the events
    update = await slow.receive()
    assert update.missed
    assert update.events == ()
    assert {s.board: s for s in update.boards} == {s.board: s for s in hub.states()}


async def test_resume_hit_and_miss() -> None:
    hub = Hub(ring_size=4)
    sub = hub.subscribe()
    await sub.receive()
    for plies in range(3):
        hub.publish_board(state_after(1, plies))
    await sub.receive()
    sub.resume(1)
    update = await sub.receive()
    assert (update.resumed, [m.event.seq for m in update.events]) == (1, [2, 3])
    for plies in range(3, 8):
        hub.publish_board(state_after(1, plies))
    sub.resume(1)
    update = await sub.receive()
    assert update.missed
    assert update.resumed == 1


async def test_clock_ticks_wake_nobody() -> None:
    hub = Hub()
    hub.publish_board(_clocks(300, 300, "white", 1000.0))
    sub = hub.subscribe()
    await sub.receive()
    hub.publish_board(_clocks(299, 300, "white", 1001.0))
    assert not sub.has_pending()
    assert hub.state(1) == _clocks(299, 300, "white", 1001.0)  # but the hub has it


async def test_async_iteration_and_listener() -> None:
    hub = Hub()
    heard: list[BoardState] = []
    remove = hub.add_listener(heard.append)
    async with hub.subscribe() as sub:
        hub.publish_board(state_after(1, 1))
        async for update in sub:
            assert update.boards[0].board == 1
            break
    hub.publish_board(_clocks(299, 300, "white", 1001.0))
    remove()
    hub.publish_board(state_after(1, 2))
    assert [s.moves for s in heard] == [state_after(1, 1).moves, state_after(1, 2).moves]


# --- Alerts ------------------------------------------------------------------------


def _alert(alert_id: int) -> Alert:
    return Alert(id=alert_id, kind=AlertKind.FLAG_FALL, board=3, at=1000.0 + alert_id)


async def test_alerts_reach_only_subscribers_that_want_them() -> None:
    hub = Hub()
    arbiter = hub.subscribe(since=0)
    public = hub.subscribe(since=0, alerts=False)
    await arbiter.receive()
    await public.receive()
    hub.publish_alert(_alert(1))
    hub.publish_alert(_alert(2))
    assert not public.has_pending()
    update = await arbiter.receive()
    assert [a.id for a in update.alerts] == [1, 2]
    hub.publish_alert(_alert(1).acknowledge(1010.0))  # seen, still open
    update = await arbiter.receive()
    assert [(a.id, a.acknowledged, a.is_open) for a in update.alerts] == [(1, True, True)]
    assert [a.id for a in hub.open_alerts()] == [1, 2]
    hub.publish_alert(_alert(2).resolve(1020.0, "the e-board answers again"))
    update = await arbiter.receive()
    assert [(a.id, a.state) for a in update.alerts] == [(2, "resolved")]
    assert [a.id for a in hub.open_alerts()] == [1]
    assert hub.resolved_alerts(10) == [hub.alert(2)]


def test_resolved_alerts_are_forgotten_beyond_a_bound() -> None:
    hub = Hub(max_closed_alerts=5)
    for alert_id in range(1, 21):
        hub.publish_alert(_alert(alert_id))
        resolved = _alert(alert_id).resolve(1100.0, "cleared")
        hub.publish_alert(resolved)
        hub.publish_alert(resolved.acknowledge(1101.0))  # a later version: remembered once
    hub.publish_alert(_alert(21))
    assert [a.id for a in hub.open_alerts()] == [21]
    assert hub.alert(1) is None
    assert hub.alert(20) is not None
    assert [a.id for a in hub.resolved_alerts(3)] == [18, 19, 20]
    assert [a.id for a in hub.resolved_alerts(100)] == [16, 17, 18, 19, 20]


def test_state_json_is_the_contract_json_without_pgn() -> None:
    state = _clocks(300, 250.5, "black", 1000.0)
    expected = to_json_dict(state)
    del expected["pgn"]
    assert state_to_json(state) == expected
    assert state_to_json(BoardState(board=9)) == {
        k: v for k, v in to_json_dict(BoardState(board=9)).items() if k != "pgn"
    }


async def test_a_watch_is_woken_by_every_state_and_runs_outside_publishing() -> None:
    hub = Hub()
    seen: list[list[int]] = []

    async def follow() -> None:
        with hub.watch() as watch:
            while True:
                seen.append([state.board for state in await watch.changed()])

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0)
    hub.publish_board(state_after(2, 1))
    hub.publish_board(state_after(1, 1))
    hub.publish_board(dataclasses.replace(state_after(1, 1), white_clock=99.0))  # no event
    assert seen == [], "publishing only marks the boards"
    while not seen:  # noqa: ASYNC110 - the follower is this loop's own task
        await asyncio.sleep(0)
    assert seen == [[1, 2]], "each board once, however often it was published"
    assert hub.state(1) is not None
    follower.cancel()
    with pytest.raises(asyncio.CancelledError):
        await follower
    hub.publish_board(state_after(3, 1))  # a closed watch is forgotten
    assert not hub._watches
