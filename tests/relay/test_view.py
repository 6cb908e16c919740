"""The relay's pure core: what the broker says, turned into a hub and command routes."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broadcast.feed.alerts import BY_ARBITER, Alert, AlertKind, alerts_from_json
from broadcast.feed.hub import Hub
from broadcast.feed.messages import (
    BoardState,
    BoardStatus,
    MoveInfo,
    board_state_from_json,
    to_json_dict,
)
from broadcast.outputs.mqtt_wire import Ownership
from broadcast.relay.routing import relay_alert_id
from broadcast.relay.server import RelayHub, RelayView

PREFIX = "event"

moves = st.builds(
    MoveInfo,
    san=st.sampled_from(["e4", "Nf3", "O-O", "exd8=Q+"]),
    uci=st.sampled_from(["e2e4", "g1f3", "e1g1", "e7d8q"]),
    clock=st.none() | st.floats(0, 10_800, allow_nan=False),
    emt=st.none() | st.floats(0, 600, allow_nan=False),
)
states = st.builds(
    BoardState,
    board=st.integers(1, 20_000),
    section=st.text(max_size=8),
    round=st.sampled_from(["", "3", "3.1"]),
    white=st.text(max_size=12),
    white_elo=st.none() | st.integers(0, 4000),
    pgn=st.text(max_size=40),
    moves=st.lists(moves, max_size=4).map(tuple),
    last_move=st.none() | st.just("e2e4"),
    white_clock=st.none() | st.floats(0, 10_800, allow_nan=False),
    running=st.sampled_from([None, "white", "black"]),
    clock_at=st.none() | st.floats(0, 2e9, allow_nan=False),
    status=st.sampled_from(list(BoardStatus)),
    result=st.sampled_from(["*", "1-0", "+-"]),
    result_final=st.booleans(),
    updated_at=st.floats(0, 2e9, allow_nan=False),
)


@settings(max_examples=60, deadline=None)
@given(state=states)
def test_a_board_state_survives_its_json(state: BoardState) -> None:
    text = json.dumps(to_json_dict(state))
    assert board_state_from_json(text) == state


def test_an_alert_survives_its_json() -> None:
    alert = Alert(
        id=3, kind=AlertKind.FLAG_FALL, board=7, at=1.5, details={"color": "white"}, action="x"
    )
    assert alerts_from_json(json.dumps([to_json_dict(alert)])) == [alert]


def state(board: int, plies: int = 0, at: float = 100.0, **changes: Any) -> BoardState:
    line = [("e4", "e2e4"), ("e5", "e7e5"), ("Nf3", "g1f3"), ("Nc6", "b8c6")]
    played = tuple(MoveInfo(san=s, uci=u, clock=60.0 - i) for i, (s, u) in enumerate(line))
    base = BoardState(
        board=board,
        round="1",
        white=f"W{board}",
        black=f"B{board}",
        moves=played[:plies],
        status=BoardStatus.ONLINE,
        updated_at=at,
    )
    return dataclasses.replace(base, **changes)


def send_state(view: RelayView, value: BoardState) -> None:
    view.receive_message(
        f"{PREFIX}/board/{value.board}/state", json.dumps(to_json_dict(value)).encode()
    )


def announce(view: RelayView, daemon: str, boards: list[int], at: float = 1.0) -> None:
    claim = Ownership(daemon_id=daemon, boards=tuple(boards), at=at)
    view.receive_message(f"{PREFIX}/daemon/{daemon}/boards", claim.to_payload())


def say(view: RelayView, daemon: str, status: str) -> None:
    view.receive_message(f"{PREFIX}/daemon/{daemon}/status", status.encode())


def list_alerts(view: RelayView, daemon: str, alerts: list[Alert]) -> None:
    payload = json.dumps([to_json_dict(a) for a in alerts]).encode()
    view.receive_message(f"{PREFIX}/daemon/{daemon}/alerts", payload)


def list_resolved(view: RelayView, daemon: str, alerts: list[Alert]) -> None:
    payload = json.dumps([to_json_dict(a) for a in alerts]).encode()
    view.receive_message(f"{PREFIX}/daemon/{daemon}/resolved", payload)


def test_states_feed_the_hub_and_older_ones_are_ignored() -> None:
    hub = Hub()
    view = RelayView(hub, PREFIX)
    send_state(view, state(1, plies=2, at=100.0))
    send_state(view, state(1, plies=3, at=101.0))
    send_state(view, state(1, plies=1, at=99.0))  # a broker restored from an older save
    current = hub.state(1)
    assert current is not None
    assert [m.uci for m in current.moves] == ["e2e4", "e7e5", "g1f3"]
    assert view.ignored == 1
    kinds = [m.event.TYPE for m in hub.messages_since(0) or []]
    assert kinds == ["board", "move"]


def test_clock_ticks_between_states_update_the_clocks_and_the_clock_tags() -> None:
    hub = Hub()
    view = RelayView(hub, PREFIX)
    pgn = '[White "W1"]\n[WhiteClock "0:01:00"]\n[BlackClock "0:01:00"]\n\n1. e4 *\n'
    send_state(
        view,
        state(
            1, plies=1, pgn=pgn, white_clock=60.0, black_clock=60.0, running="black", clock_at=100.0
        ),
    )
    tick = {"white": 60.0, "black": 55.0, "running": "black", "at": 105.0}
    view.receive_message(f"{PREFIX}/board/1/clocks", json.dumps(tick).encode())
    stale = {"white": 60.0, "black": 58.0, "running": "black", "at": 102.0}
    view.receive_message(f"{PREFIX}/board/1/clocks", json.dumps(stale).encode())
    view.receive_message(f"{PREFIX}/board/2/clocks", json.dumps(tick).encode())  # no state yet
    current = hub.state(1)
    assert current is not None
    assert (current.black_clock, current.clock_at) == (55.0, 105.0)
    assert current.pgn == pgn.replace('BlackClock "0:01:00"', 'BlackClock "0:00:55"')
    assert hub.state(2) is None
    view.receive_message(f"{PREFIX}/board/1/clocks", b'{"white": "soon"}')
    assert view.ignored == 1


def test_unreadable_messages_are_counted_and_change_nothing() -> None:
    hub = Hub()
    view = RelayView(hub, PREFIX)
    for topic, payload in [
        (f"{PREFIX}/board/1/state", b"{not json"),
        (f"{PREFIX}/board/1/state", b'{"board": 0}'),
        (f"{PREFIX}/board/1/state", b'{"board": 1, "status": "lost"}'),
        (f"{PREFIX}/board/1/state", b"[]"),
        (f"{PREFIX}/daemon/a/alerts", b'{"id": 1}'),
        (f"{PREFIX}/daemon/a/alerts", b'[{"id": 1}]'),
    ]:
        view.receive_message(topic, payload)
    view.receive_message(f"{PREFIX}/board/1/state", b"")  # a cleared topic: nothing
    view.receive_message(f"{PREFIX}/board/1/pgn", b"1. e4 *")  # not subscribed: nothing
    assert (view.ignored, hub.states(), hub.open_alerts()) == (6, [], [])


def test_boards_of_an_offline_daemon_are_shown_offline_until_it_returns() -> None:
    hub = Hub()
    view = RelayView(hub, PREFIX)
    send_state(view, state(1, plies=2))
    announce(view, "hall-a", [1, 2])
    say(view, "hall-a", "online")
    assert (view.owner_of(1), view.owner_of(2), view.owner_of(3)) == ("hall-a", "hall-a", None)
    assert hub.state(1) == state(1, plies=2)
    say(view, "hall-a", "offline")
    offline = hub.state(1)
    assert offline is not None
    assert offline.status is BoardStatus.OFFLINE
    assert (view.is_online("hall-a"), view.boards_of("hall-a")) == (False, (1, 2))
    say(view, "hall-a", "online")
    assert hub.state(1) == state(1, plies=2)


def test_a_live_claim_wins_then_the_newer_one() -> None:
    view = RelayView(Hub(), PREFIX)
    announce(view, "old-pc", [1, 2, 3], at=10.0)
    announce(view, "spare-pc", [2, 3], at=20.0)
    say(view, "old-pc", "online")
    say(view, "spare-pc", "offline")
    assert [view.owner_of(b) for b in (1, 2, 3)] == ["old-pc"] * 3
    say(view, "spare-pc", "online")
    assert [view.owner_of(b) for b in (1, 2, 3)] == ["old-pc", "spare-pc", "spare-pc"]
    say(view, "old-pc", "offline")
    assert view.daemon_ids() == ["old-pc", "spare-pc"]
    view.receive_message(f"{PREFIX}/daemon/old-pc/boards", b"")  # announcement cleared
    assert (view.owner_of(1), view.daemon_ids()) == (None, ["spare-pc"])


def alert(alert_id: int, board: int, kind: str = "flag_fall") -> Alert:
    return Alert(id=alert_id, kind=AlertKind(kind), board=board, at=float(alert_id), action="look")


def test_open_alerts_get_relay_ids_and_closing_ones_are_resolved() -> None:
    hub = Hub()
    view = RelayView(hub, PREFIX)
    announce(view, "a", [1, 2])
    announce(view, "b", [3])
    list_alerts(view, "a", [alert(1, 1), alert(2, 2)])
    list_alerts(view, "b", [alert(1, 3)])
    assert [a.id for a in hub.open_alerts()] == [10_001, 10_003, 20_002]
    assert (view.alert_origin(20_002), view.alert_origin(10_003)) == (("a", 2), ("b", 1))
    shown = hub.alert(10_003)
    assert shown is not None
    assert (shown.board, shown.kind, shown.action) == (3, "flag_fall", "look")
    seen = alert(2, 2).acknowledge(5.0)
    list_alerts(view, "a", [seen])  # alert 1 of "a" resolved; alert 2 acknowledged, open
    assert [a.id for a in hub.open_alerts()] == [10_003, 20_002]
    assert hub.alert(20_002) == dataclasses.replace(seen, id=20_002)
    resolved = hub.alert(10_001)
    assert resolved is not None
    assert (resolved.state, resolved.history[-1].note) == ("resolved", "no longer open on daemon a")
    assert view.alert_origin(10_001) is None


@pytest.mark.parametrize("resolution_first", [True, False])
def test_a_resolved_alert_is_shown_as_the_daemon_resolved_it(resolution_first: bool) -> None:
    hub = Hub()
    view = RelayView(hub, PREFIX)
    announce(view, "a", [1, 2])
    list_alerts(view, "a", [alert(1, 1), alert(2, 2)])
    decided = alert(1, 1).resolve(9.0, "result 1-0 confirmed", by=BY_ARBITER)
    if resolution_first:
        list_resolved(view, "a", [decided])
        list_alerts(view, "a", [alert(2, 2)])
    else:  # the open list first: resolved for now as gone, then as the daemon says
        list_alerts(view, "a", [alert(2, 2)])
        list_resolved(view, "a", [decided])
    assert hub.alert(10_001) == dataclasses.replace(decided, id=10_001)
    assert [a.id for a in hub.open_alerts()] == [20_002]
    assert view.alert_origin(10_001) is None


def test_an_old_resolution_never_closes_a_new_alert_with_its_id() -> None:
    """A daemon started on a new journal numbers its alerts from 1 again."""
    hub = Hub()
    view = RelayView(hub, PREFIX)
    announce(view, "a", [1])
    list_resolved(view, "a", [alert(1, 1).resolve(9.0, "gone")])
    fresh = dataclasses.replace(alert(1, 1), at=100.0)
    list_alerts(view, "a", [fresh])
    assert hub.alert(10_001) == dataclasses.replace(fresh, id=10_001)
    assert [a.id for a in hub.open_alerts()] == [10_001]


def test_event_alerts_of_two_daemons_are_both_shown_and_go_back_to_their_own() -> None:
    # Both daemons push their sections to lichess with the same expired token: each
    # raises its first output alert (id 1,000,000) about the event (board 0).
    hub = Hub()
    view = RelayView(hub, PREFIX)
    announce(view, "hall-a", [1])
    announce(view, "hall-b", [2])
    list_alerts(view, "hall-a", [alert(1_000_000, 0, "lichess_refused")])
    list_alerts(view, "hall-b", [alert(1_000_000, 0, "lichess_refused"), alert(3, 0)])
    shown = [a.id for a in hub.open_alerts()]
    assert len(set(shown)) == 3
    assert all(0 < i < 2**53 for i in shown)
    origins = {view.alert_origin(i) for i in shown}
    assert origins == {("hall-a", 1_000_000), ("hall-b", 1_000_000), ("hall-b", 3)}
    assert relay_alert_id(0, 3, "hall-b") in shown  # the same id on every relay


def test_alerts_of_a_daemon_whose_boards_were_taken_over_are_withdrawn() -> None:
    hub = Hub()
    view = RelayView(hub, PREFIX)
    announce(view, "old-pc", [1], at=10.0)
    list_alerts(view, "old-pc", [alert(4, 1)])
    assert [a.id for a in hub.open_alerts()] == [40_001]
    announce(view, "spare-pc", [1], at=20.0)
    say(view, "spare-pc", "online")
    assert hub.open_alerts() == []
    say(view, "spare-pc", "offline")
    announce(view, "spare-pc", [9], at=30.0)  # reconfigured: board 1 is the old PC's again
    assert [a.id for a in hub.open_alerts()] == [40_001]


@settings(max_examples=200, deadline=None)
@given(
    first=st.tuples(st.integers(1, 30_000), st.integers(1, 2 * 10**6)),
    second=st.tuples(st.integers(0, 30_000), st.integers(1, 2 * 10**6)),
    daemons=st.tuples(st.sampled_from(["hall-a", "hall-b"]), st.sampled_from(["a", "hall-b"])),
)
def test_relay_alert_ids_are_distinct_and_safe_in_javascript(
    first: tuple[int, int], second: tuple[int, int], daemons: tuple[str, str]
) -> None:
    one, two = relay_alert_id(*first), relay_alert_id(*second)
    assert (one == two) == (first == second)
    assert 0 < one < 2**53
    event = [
        relay_alert_id(0, local, daemon)
        for local, daemon in zip((first[1], second[1]), daemons, strict=True)
    ]
    assert (event[0] == event[1]) == ((first[1], daemons[0]) == (second[1], daemons[1]))
    assert event[0] not in (one, two)
    assert 0 < event[0] < 2**53


def test_a_relay_hub_numbers_from_its_start() -> None:
    hub = RelayHub(first_seq=1_000_000)
    assert hub.seq == 999_999
    assert hub.messages_since(5) is None  # another numbering: a snapshot
    events = hub.publish_board(state(1))
    assert [e.seq for e in events] == [1_000_000]
    assert [m.event.seq for m in hub.messages_since(999_999) or []] == [1_000_000]
