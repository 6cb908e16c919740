"""The MQTT publisher: its pure outbox, and a real mosquitto broker with aiomqtt subscribers."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import aiomqtt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from base.backoff import BackoffPolicy
from broadcast.feed.alerts import Alert, AlertKind, alert_from_json, alerts_from_json
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState, BoardStatus, MoveInfo
from broadcast.feed.signing import EventKey
from broadcast.outputs.mqtt import RESOLVED_KEPT, MqttMessage, MqttOutbox, MqttPublisher
from broadcast.outputs.mqtt_client import MqttLinkState, MqttSettings
from broadcast.outputs.mqtt_wire import Ownership, Topics, read_alert_list
from tests.mosquitto import Mosquitto
from tests.shared_data import ROOT
from tests.waiting import wait_until

PREFIX = "venue"
TOPICS = Topics(PREFIX, "hall")
BOARD_LEAVES = ("pgn", "fen", "clocks", "status", "state")
SUBSCRIBER_LOG = logging.getLogger("tests.mqtt.subscriber")
SUBSCRIBER_LOG.setLevel(logging.CRITICAL)  # its own lost connections are the test's doing

PGN = """[Event "Club Open"]
[Round "3.1"]
[White "Smith, John"]
[Black "Doe, Jane"]
[Result "*"]

1. e4 {[%clk 1:29:58]} *
"""


def board_state(board: int = 1, **changes: Any) -> BoardState:
    state = BoardState(
        board=board,
        round="3",
        white="Smith, John",
        black="Doe, Jane",
        pgn=PGN,
        fen="rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        moves=(MoveInfo(san="e4", uci="e2e4", clock=5398.0),),
        last_move="e2e4",
        white_clock=5398.0,
        black_clock=5400.0,
        running="black",
        clock_at=1_782_259_260.0,
        status=BoardStatus.ONLINE,
        updated_at=1_782_259_260.0,
    )
    return replace(state, **changes)


def final(state: BoardState, result: str = "1-0") -> BoardState:
    return replace(state, result=result, result_final=True, running=None)


def alert(alert_id: int, board: int = 1) -> Alert:
    return Alert(id=alert_id, kind=AlertKind.FLAG_FALL, board=board, at=1_782_259_300.0 + alert_id)


def drain(outbox: MqttOutbox) -> list[MqttMessage]:
    sent = []
    while (message := outbox.next_message()) is not None:
        sent.append(message)
        outbox.receive_delivered(message)
    return sent


# --- The pure outbox -------------------------------------------------------------------


def test_a_board_fills_five_retained_topics() -> None:
    outbox = MqttOutbox(TOPICS)
    state = board_state()
    outbox.receive_board(state)
    sent = {m.topic: m for m in drain(outbox)}
    assert sorted(sent) == sorted(f"venue/board/1/{leaf}" for leaf in BOARD_LEAVES)
    assert all(m.retain and m.qos == 1 for m in sent.values())
    assert sent["venue/board/1/pgn"].payload == PGN.encode()
    assert sent["venue/board/1/fen"].payload == state.fen.encode()
    assert json.loads(sent["venue/board/1/clocks"].payload) == {
        "white": 5398.0,
        "black": 5400.0,
        "running": "black",
        "at": 1_782_259_260.0,
    }
    status = json.loads(sent["venue/board/1/status"].payload)
    assert (status["status"], status["result"], status["plies"]) == ("online", "*", 1)
    assert status["variant"] == "standard"
    whole = json.loads(sent["venue/board/1/state"].payload)
    assert (whole["board"], whole["moves"][0]["san"], whole["pgn"]) == (1, "e4", PGN)


def test_only_changed_topics_are_sent_again() -> None:
    outbox = MqttOutbox(TOPICS)
    state = board_state()
    outbox.receive_board(state)
    drain(outbox)
    outbox.receive_board(state)
    assert drain(outbox) == []
    outbox.receive_board(replace(state, white_clock=5390.0, clock_at=state.clock_at))
    assert sorted(m.topic for m in drain(outbox)) == ["venue/board/1/clocks", "venue/board/1/state"]


def test_while_away_only_the_latest_value_per_topic_is_kept() -> None:
    outbox = MqttOutbox(TOPICS)
    for second in range(100):
        outbox.receive_board(board_state(white_clock=5400.0 - second))
    sent = drain(outbox)
    assert len(sent) == len(BOARD_LEAVES)
    clocks = next(m for m in sent if m.topic.endswith("/clocks"))
    assert json.loads(clocks.payload)["white"] == 5301.0


def test_alerts_go_first_and_stay_until_acknowledged() -> None:
    outbox = MqttOutbox(TOPICS)
    outbox.receive_board(board_state())
    outbox.receive_alert(alert(1))
    first = outbox.next_message()
    assert first is not None
    assert (first.topic, first.retain, first.qos) == ("venue/alerts", False, 1)
    assert json.loads(first.payload)["id"] == 1
    assert outbox.next_message() is first  # not acknowledged: still the next one
    outbox.receive_delivered(first)
    assert outbox.pending_events == 0


def test_every_version_goes_out_and_the_retained_list_holds_the_open_alerts() -> None:
    outbox = MqttOutbox(TOPICS)
    outbox.receive_ownership(Ownership(daemon_id=TOPICS.daemon_id, boards=(1, 2)))
    offline, late = alert(1), alert(2, board=2)
    outbox.receive_alert(offline)
    outbox.receive_alert(late)
    outbox.receive_alert(late.acknowledge(1_782_259_350.0))  # seen: still open
    outbox.receive_alert(offline.resolve(1_782_259_360.0, "the e-board answers again"))
    sent = drain(outbox)
    versions = [alert_from_json(m.payload) for m in sent if m.topic == TOPICS.alerts]
    assert [(a.id, a.state, a.acknowledged) for a in versions] == [
        (1, "open", False),
        (2, "open", False),
        (2, "open", True),
        (1, "resolved", False),
    ]
    retained = [m for m in sent if m.topic == TOPICS.daemon("alerts")]
    assert [a.id for a in alerts_from_json(retained[-1].payload)] == [2]
    resolved = [m for m in sent if m.topic == TOPICS.daemon("resolved")]
    assert [a.history[-1].note for a in alerts_from_json(resolved[-1].payload)] == [
        "the e-board answers again"
    ]


def test_the_last_resolutions_stay_retained_and_go_before_the_open_list() -> None:
    outbox = MqttOutbox(TOPICS)
    outbox.receive_ownership(Ownership(daemon_id=TOPICS.daemon_id, boards=(1,)))
    drain(outbox)
    for n in range(1, RESOLVED_KEPT + 6):
        outbox.receive_alert(alert(n))
        outbox.receive_alert(alert(n).resolve(1_782_259_400.0 + n, "cleared"))
    drain(outbox)
    outbox.receive_alert(alert(99))
    drain(outbox)
    outbox.receive_alert(alert(99).resolve(1_782_259_500.0, "decided", by="arbiter"))
    sent = [m.topic for m in drain(outbox) if m.retain]
    assert sent == [TOPICS.daemon("resolved"), TOPICS.daemon("alerts")]
    outbox.receive_connected()
    kept = next(m for m in drain(outbox) if m.topic == TOPICS.daemon("resolved"))
    ids = [a.id for a in alerts_from_json(kept.payload)]
    assert ids == [*range(7, RESOLVED_KEPT + 6), 99]


def test_with_an_event_key_the_alert_lists_are_objects_that_can_be_signed() -> None:
    outbox = MqttOutbox(TOPICS, signed=True)
    outbox.receive_ownership(Ownership(daemon_id=TOPICS.daemon_id, boards=(1,)))
    outbox.receive_alert(alert(1))
    outbox.receive_alert(alert(2))
    outbox.receive_alert(alert(2).resolve(1_782_259_400.0, "cleared"))
    sent = {m.topic: m.payload for m in drain(outbox) if m.retain}
    for leaf, ids in (("alerts", [1]), ("resolved", [2])):
        payload = sent[TOPICS.daemon(leaf)]
        assert list(json.loads(payload)) == ["alerts"]
        assert [a.id for a in read_alert_list(payload)] == ids
        signed = EventKey("the-event-key-of-open-2026").sign(TOPICS.daemon(leaf), payload)
        assert [a.id for a in read_alert_list(signed)] == ids


def test_a_reconnect_makes_every_retained_topic_due_again() -> None:
    outbox = MqttOutbox(TOPICS)
    outbox.receive_board(board_state(1))
    outbox.receive_board(board_state(2))
    drain(outbox)
    outbox.receive_connected()
    assert len(drain(outbox)) == 2 * len(BOARD_LEAVES)


def test_the_event_queue_is_bounded_and_drops_the_oldest(caplog: pytest.LogCaptureFixture) -> None:
    outbox = MqttOutbox(TOPICS, max_pending=3)
    for alert_id in range(1, 6):
        outbox.receive_alert(alert(alert_id))
    ids = [json.loads(m.payload)["id"] for m in drain(outbox)]
    assert (ids, outbox.dropped_events) == ([3, 4, 5], 2)
    assert len([r for r in caplog.records if r.levelno == logging.ERROR]) == 2
    caplog.clear()  # the drops were expected


def test_retained_topics_are_bounded_by_least_recent_update() -> None:
    outbox = MqttOutbox(TOPICS, max_retained=len(BOARD_LEAVES) * 2)
    for board in (1, 2, 3):
        outbox.receive_board(board_state(board))
    boards = {m.topic.split("/")[2] for m in drain(outbox)}
    assert (boards, outbox.dropped_topics) == ({"2", "3"}, len(BOARD_LEAVES))


def test_a_confirmed_result_is_queued_once_and_retained() -> None:
    outbox = MqttOutbox(TOPICS)
    outbox.receive_board(board_state(result="1-0"))  # provisional: not a result yet
    assert not any(m.topic.endswith("result") for m in drain(outbox))
    done = final(board_state())
    outbox.receive_board(done)
    outbox.receive_board(done)
    outbox.receive_result(done)
    results = [m for m in drain(outbox) if "result" in m.topic.rsplit("/", 1)[1]]
    assert sorted((m.topic, m.retain) for m in results) == [
        ("venue/board/1/result", True),
        ("venue/results", False),
    ]
    payload = json.loads(results[0].payload)
    assert (payload["board"], payload["round"], payload["result"]) == (1, "3", "1-0")


def test_a_new_game_on_the_board_clears_the_retained_result() -> None:
    outbox = MqttOutbox(TOPICS)
    outbox.receive_board(final(board_state()))
    drain(outbox)
    outbox.receive_board(board_state(round="4", pgn="", moves=()))
    cleared = [m for m in drain(outbox) if m.topic == "venue/board/1/result"]
    assert [(m.payload, m.retain) for m in cleared] == [(b"", True)]


def test_a_corrected_result_is_a_new_result() -> None:
    outbox = MqttOutbox(TOPICS)
    outbox.receive_board(final(board_state(), "1-0"))
    outbox.receive_board(final(board_state(), "1/2-1/2"))
    sent = [json.loads(m.payload)["result"] for m in drain(outbox) if m.topic == TOPICS.results]
    assert sent == ["1-0", "1/2-1/2"]


def test_a_clock_tick_publishes_only_the_compact_clock_message() -> None:
    outbox = MqttOutbox(TOPICS)
    start = board_state()
    outbox.receive_board(start)
    drain(outbox)
    for second in range(1, 6):  # black's clock runs: each reading follows the count-down
        outbox.receive_board(
            replace(
                start,
                pgn=PGN.replace("[Result", f'[BlackClock "1:29:{60 - second:02d}"]\n[Result'),
                black_clock=5400.0 - second,
                clock_at=start.clock_at + second,  # type: ignore[operator]
                updated_at=start.updated_at + second,
            )
        )
        sent = drain(outbox)
        assert [m.topic for m in sent] == [TOPICS.board(1, "clocks")]
        assert json.loads(sent[0].payload) == {
            "white": 5398.0,
            "black": 5400.0 - second,
            "running": "black",
            "at": 1_782_259_260.0 + second,
        }
    moved = replace(
        start,
        pgn=PGN.replace("*\n", "e5 {[%clk 1:29:55]} *\n"),
        moves=(*start.moves, MoveInfo(san="e5", uci="e7e5", clock=5395.0)),
        last_move="e7e5",
        fen="rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
        black_clock=5395.0,
        running="white",
        clock_at=start.clock_at + 5,  # type: ignore[operator]
    )
    outbox.receive_board(moved)
    leaves = {m.topic.rsplit("/", 1)[1] for m in drain(outbox)}
    assert leaves == {"pgn", "fen", "clocks", "status", "state"}
    set_back = replace(moved, white_clock=3000.0, clock_at=moved.clock_at + 1)  # type: ignore[operator]
    outbox.receive_board(set_back)  # an arbiter set the clock: not a count-down
    assert {m.topic.rsplit("/", 1)[1] for m in drain(outbox)} >= {"clocks", "state"}


@dataclass
class Broker:
    """What a broker holds after a sequence of deliveries."""

    retained: dict[str, bytes] = field(default_factory=dict)
    events: list[bytes] = field(default_factory=list)

    def receive(self, message: MqttMessage) -> None:
        if message.retain:
            self.retained[message.topic] = message.payload
        else:
            self.events.append(message.payload)


steps = st.lists(
    st.one_of(
        st.tuples(st.just("board"), st.integers(1, 3), st.integers(0, 5)),
        st.tuples(st.just("alert"), st.integers(1, 3), st.just(0)),
        st.tuples(st.just("send"), st.integers(1, 4), st.just(0)),
        st.tuples(st.just("lose"), st.just(0), st.just(0)),
    ),
    max_size=40,
)


@settings(max_examples=80, deadline=None)
@given(steps=steps)
def test_any_interleaving_ends_with_the_latest_state_and_every_alert(
    steps: list[tuple[str, int, int]],
) -> None:
    """Whatever the order of changes, deliveries and lost links, the broker ends right:
    holding what an outbox fed the same boards without any loss would hold."""
    outbox = MqttOutbox(TOPICS)
    broker = Broker()
    alert_ids = itertools.count(1)
    fed: list[BoardState] = []
    raised: list[int] = []
    for kind, number, tick in steps:
        if kind == "board":
            fed.append(board_state(number, white_clock=5400.0 - 60 * tick))
            outbox.receive_board(fed[-1])
        elif kind == "alert":
            raised.append(next(alert_ids))
            outbox.receive_alert(alert(raised[-1], number))
        elif kind == "send":
            for _ in range(number):
                if (message := outbox.next_message()) is not None:
                    broker.receive(message)
                    outbox.receive_delivered(message)
        else:  # the link is lost with a message in flight: it was not acknowledged
            if (message := outbox.next_message()) is not None:
                broker.receive(message)
            outbox.receive_connected()
    for message in drain(outbox):
        broker.receive(message)
    expected = MqttOutbox(TOPICS)
    for state in fed:
        expected.receive_board(state)
    assert broker.retained == {m.topic: m.payload for m in drain(expected)}
    assert sorted({json.loads(p)["id"] for p in broker.events}) == raised


def test_settings_refuse_wildcards_and_bad_bounds() -> None:
    for prefix in ("", "a/#", "a/+/b", "/lead", "trail/"):
        with pytest.raises(ValueError, match="prefix"):
            MqttSettings(prefix=prefix, daemon_id="x")
    with pytest.raises(ValueError, match="daemon_id"):
        MqttSettings(daemon_id="hall/2")
    with pytest.raises(ValueError, match="max_pending"):
        MqttSettings(daemon_id="x", max_pending=0)
    assert "/" not in MqttSettings().daemon_id


# --- With a real broker ------------------------------------------------------------------


@dataclass
class Seen:
    """Everything a subscriber received: the latest payload per topic and the whole log."""

    latest: dict[str, bytes] = field(default_factory=dict)
    log: list[tuple[str, bytes, bool]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def receive(self, message: aiomqtt.Message) -> None:
        assert isinstance(message.payload, bytes)
        self.latest[message.topic.value] = message.payload
        self.log.append((message.topic.value, message.payload, message.retain))
        self.changed.set()

    def json(self, topic: str) -> Any:
        return json.loads(self.latest[topic])

    def ids(self, topic: str) -> set[int]:
        return {json.loads(p)["id"] for t, p, _ in self.log if t == topic}

    def results(self) -> set[tuple[int, str]]:
        found = set()
        for topic, payload, _ in self.log:
            if topic == f"{PREFIX}/results":
                data = json.loads(payload)
                found.add((data["board"], data["result"]))
        return found

    async def wait_for(self, condition: Callable[[], bool], time_limit: float = 10.0) -> None:
        async with asyncio.timeout(time_limit):
            while not condition():
                self.changed.clear()
                await self.changed.wait()


def settings_for(broker: Mosquitto, **changes: Any) -> MqttSettings:
    base = MqttSettings(
        host="127.0.0.1",
        port=broker.port,
        prefix=PREFIX,
        daemon_id="hall",
        keepalive=5,
        retry=BackoffPolicy(initial=0.05, maximum=0.3),
        time_limit=5.0,
    )
    return replace(base, **changes)


@contextlib.asynccontextmanager
async def running(publisher: MqttPublisher) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(publisher.run())
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def subscriber(
    broker: Mosquitto, *, identifier: str | None = None, persistent: bool = False
) -> AsyncIterator[Seen]:
    """Collects ``PREFIX/#`` in the background; a persistent one reconnects by itself."""
    seen = Seen()
    subscribed = asyncio.Event()

    async def listen() -> None:
        while True:
            try:
                async with aiomqtt.Client(
                    "127.0.0.1",
                    broker.port,
                    identifier=identifier,
                    clean_session=not persistent,
                    logger=SUBSCRIBER_LOG,
                ) as client:
                    await client.subscribe(f"{PREFIX}/#", qos=1)
                    subscribed.set()
                    async for message in client.messages:
                        seen.receive(message)
            except aiomqtt.MqttError:
                if not persistent:
                    raise
                await asyncio.sleep(0.05)

    task = asyncio.create_task(listen())
    try:
        async with asyncio.timeout(10):
            await subscribed.wait()
        yield seen
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_topics_and_payloads_reach_a_subscriber(mosquitto: Mosquitto) -> None:
    publisher = MqttPublisher(settings_for(mosquitto))
    async with subscriber(mosquitto) as seen, running(publisher):
        state = board_state()
        publisher.publish_board(state)
        publisher.publish_alert(alert(7))
        publisher.publish_board(final(state))
        await seen.wait_for(lambda: f"{PREFIX}/board/1/result" in seen.latest)
        await seen.wait_for(lambda: seen.json(f"{PREFIX}/board/1/state")["result_final"])
        assert publisher.link_state is MqttLinkState.CONNECTED
    statuses = [p for t, p, _ in seen.log if t == f"{PREFIX}/daemon/hall/status"]
    assert statuses[0] == b"online"  # then "offline" as the publisher stopped
    assert seen.latest[f"{PREFIX}/board/1/pgn"] == PGN.encode()
    assert seen.latest[f"{PREFIX}/board/1/fen"] == state.fen.encode()
    assert seen.json(f"{PREFIX}/board/1/clocks") == {
        "white": 5398.0,
        "black": 5400.0,
        "running": None,
        "at": 1_782_259_260.0,
    }
    assert seen.json(f"{PREFIX}/board/1/status")["result"] == "1-0"
    assert seen.json(f"{PREFIX}/alerts") == {
        "type": "alert",
        "id": 7,
        "kind": "flag_fall",
        "board": 1,
        "at": 1_782_259_307.0,
        "details": {},
        "action": "",
        "state": "open",
        "acknowledged": False,
        "history": [],
    }
    assert seen.results() == {(1, "1-0")}
    assert seen.json(f"{PREFIX}/board/1/result")["result"] == "1-0"


async def test_a_late_subscriber_gets_the_retained_state_but_no_old_alerts(
    mosquitto: Mosquitto,
) -> None:
    publisher = MqttPublisher(settings_for(mosquitto))
    async with running(publisher):
        async with subscriber(mosquitto) as early:
            publisher.publish_alert(alert(1))
            publisher.publish_board(board_state(2))
            publisher.publish_board(final(board_state(3), "0-1"))
            await early.wait_for(lambda: f"{PREFIX}/board/3/result" in early.latest)
        async with subscriber(mosquitto) as late:
            await late.wait_for(lambda: f"{PREFIX}/board/3/result" in late.latest)
    retained = {topic for topic, _, was_retained in late.log if was_retained}
    expected = {f"{PREFIX}/board/{b}/{leaf}" for b in (2, 3) for leaf in BOARD_LEAVES}
    assert retained == expected | {f"{PREFIX}/board/3/result", f"{PREFIX}/daemon/hall/status"}
    assert late.latest[f"{PREFIX}/daemon/hall/status"] == b"online"
    assert f"{PREFIX}/alerts" not in late.latest
    assert f"{PREFIX}/results" not in late.latest


CHILD = """
import asyncio, sys
from broadcast.feed.messages import BoardState
from broadcast.outputs.mqtt import MqttPublisher
from broadcast.outputs.mqtt_client import MqttSettings

async def main() -> None:
    settings = MqttSettings(host="127.0.0.1", port=int(sys.argv[1]), prefix=sys.argv[2],
                            daemon_id="child", keepalive=5)
    publisher = MqttPublisher(settings)
    publisher.publish_board(BoardState(board=9))
    await publisher.run()

asyncio.run(main())
"""


async def test_the_will_says_offline_when_the_daemon_dies(mosquitto: Mosquitto) -> None:
    status = f"{PREFIX}/daemon/child/status"
    async with subscriber(mosquitto) as seen:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CHILD, str(mosquitto.port), PREFIX, cwd=ROOT
        )
        try:
            await seen.wait_for(lambda: f"{PREFIX}/board/9/state" in seen.latest)
            assert seen.latest[status] == b"online"
        finally:
            child.kill()  # SIGKILL: no DISCONNECT, the broker sees the socket close
            await child.wait()
        await seen.wait_for(lambda: seen.latest[status] == b"offline")
    assert [p for t, p, _ in seen.log if t == status] == [b"online", b"offline"]


async def test_a_clean_stop_says_offline(mosquitto: Mosquitto) -> None:
    publisher = MqttPublisher(settings_for(mosquitto))
    status = f"{PREFIX}/daemon/hall/status"
    async with subscriber(mosquitto) as seen:
        async with running(publisher):
            await seen.wait_for(lambda: seen.latest.get(status) == b"online")
        await seen.wait_for(lambda: seen.latest[status] == b"offline")
    assert publisher.link_state is MqttLinkState.STOPPED


# A broker that goes away mid-write may make paho register a writer for the socket it
# has just closed: asyncio logs that callback's EBADF (seen under load). Only that.
@pytest.mark.error_log(r"^asyncio: Exception in callback BaseSelectorEventLoop\.add_writer")
async def test_a_broker_restart_loses_no_alert_or_result(mosquitto: Mosquitto) -> None:
    publisher = MqttPublisher(settings_for(mosquitto))
    produced: list[int] = []
    results: set[tuple[int, str]] = set()

    async def produce(stop: asyncio.Event) -> None:
        for n in itertools.count(1):
            produced.append(n)
            publisher.publish_alert(alert(n))
            if n % 4 == 0:
                board = n // 4
                publisher.publish_board(final(board_state(board), "0-1"))
                results.add((board, "0-1"))
            publisher.publish_board(board_state(100, white_clock=5400.0 - n))
            if stop.is_set():
                return
            await asyncio.sleep(0.01)

    desk = subscriber(mosquitto, identifier="arbiter-desk", persistent=True)
    async with desk as seen, running(publisher):
        await seen.wait_for(lambda: f"{PREFIX}/daemon/hall/status" in seen.latest)
        stop = asyncio.Event()
        producer = asyncio.create_task(produce(stop))
        await seen.wait_for(lambda: len(seen.ids(f"{PREFIX}/alerts")) >= 5)
        await asyncio.to_thread(mosquitto.stop)
        await wait_until(lambda: publisher.link_state is not MqttLinkState.CONNECTED)
        raised = len(produced)  # the daemon goes on raising alerts meanwhile
        enough = max(raised + 10, 31)
        await wait_until(lambda: len(produced) >= enough, what="alerts while away")
        await asyncio.to_thread(mosquitto.start)
        back = len(produced)  # alerts up to here were raised before the broker was back
        # Alerts flow again once one raised after the restart arrives. (Not "the desk is
        # within a few alerts of the producer": at 100 alerts a second, a busy machine
        # can keep it further behind than that for as long as the producer runs.)
        await seen.wait_for(lambda: max(seen.ids(f"{PREFIX}/alerts")) > back, 30)
        stop.set()
        await producer
        await seen.wait_for(lambda: seen.ids(f"{PREFIX}/alerts") == set(produced), 30)
        await seen.wait_for(lambda: seen.results() == results, 30)
    assert publisher.outbox.dropped_events == 0
    assert len(produced) > 30  # alerts were raised while the broker was away


async def test_retained_state_is_published_again_to_a_broker_that_lost_it(
    mosquitto: Mosquitto,
) -> None:
    publisher = MqttPublisher(settings_for(mosquitto))
    async with running(publisher):
        async with subscriber(mosquitto) as seen:
            publisher.publish_board(board_state(5))
            await seen.wait_for(lambda: f"{PREFIX}/board/5/state" in seen.latest)
        await asyncio.to_thread(mosquitto.restart, forget_state=True)
        async with subscriber(mosquitto) as late:
            await late.wait_for(lambda: f"{PREFIX}/board/5/state" in late.latest)
            await late.wait_for(lambda: f"{PREFIX}/daemon/hall/status" in late.latest)
    assert late.latest[f"{PREFIX}/board/5/pgn"] == PGN.encode()
    assert late.latest[f"{PREFIX}/daemon/hall/status"] == b"online"


async def test_no_broker_at_start_is_retried_until_one_appears(mosquitto: Mosquitto) -> None:
    await asyncio.to_thread(mosquitto.stop)
    publisher = MqttPublisher(settings_for(mosquitto))
    publisher.publish_alert(alert(1))
    publisher.publish_board(board_state(4))
    async with running(publisher):
        await wait_until(lambda: publisher.link_state is MqttLinkState.WAITING)
        assert publisher.outbox.pending_events == 1
        await asyncio.to_thread(mosquitto.start)
        async with subscriber(mosquitto) as seen:
            await seen.wait_for(lambda: f"{PREFIX}/board/4/fen" in seen.latest)
    assert publisher.outbox.pending_events == 0  # the alert went before the board


async def test_following_the_hub(mosquitto: Mosquitto) -> None:
    hub = Hub()
    publisher = MqttPublisher(settings_for(mosquitto))
    hub.publish_alert(alert(1))  # open before the publisher follows: published too
    async with subscriber(mosquitto) as seen:
        task = asyncio.create_task(publisher.serve(hub))
        try:
            # Subscribing to the hub is the first step of serve(), connecting comes later.
            await seen.wait_for(lambda: f"{PREFIX}/daemon/hall/status" in seen.latest)
            assert hub.subscriber_count == 1
            hub.publish_board(board_state(6))
            hub.publish_alert(alert(2, board=6))
            hub.publish_alert(alert(2, board=6).resolve(1_782_259_400.0, "cleared"))
            await seen.wait_for(lambda: f"{PREFIX}/board/6/state" in seen.latest)
            await seen.wait_for(lambda: seen.json(f"{PREFIX}/alerts")["state"] == "resolved")
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    assert seen.ids(f"{PREFIX}/alerts") == {1, 2}
