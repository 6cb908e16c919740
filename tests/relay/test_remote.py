"""The command bridge without a broker: routing, both ends joined by an in-memory wire."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from broadcast.feed.commands import (
    AcceptPosition,
    AckAlert,
    ArbiterCommand,
    CommandRejected,
    SetClocks,
    SetResult,
)
from broadcast.feed.hub import Hub
from broadcast.outputs.mqtt_client import MqttSettings
from broadcast.outputs.mqtt_wire import Ownership
from broadcast.relay.ownership import find_clashes
from broadcast.relay.remote import CommandListener, RelayOffline, RemoteCommands
from broadcast.relay.routing import plan_command
from broadcast.relay.server import RelayView
from broadcast.relay.wire import CommandRequest, ReplayGuard
from daemon.journal.inputs import ARBITER, LINK
from daemon.journal.store import Journal
from daemon.round.codec import input_of
from daemon.shell.app import Daemon, DaemonOptions
from tests.daemon.support import BoardSpec, write_config
from tests.relay.test_view import alert, announce, list_alerts, say

PREFIX = "event"
REPLIES = f"{PREFIX}/relay/r/replies"


def routed_view() -> RelayView:
    """Daemon "a" (online) owns boards 1-2, daemon "b" (offline) owns board 3."""
    view = RelayView(Hub(), PREFIX)
    announce(view, "a", [1, 2])
    announce(view, "b", [3])
    say(view, "a", "online")
    say(view, "b", "offline")
    list_alerts(view, "a", [alert(5, 2)])
    list_alerts(view, "b", [alert(1, 3)])
    return view


def test_commands_go_to_the_board_owner_or_are_answered_at_once() -> None:
    view = routed_view()
    plan = plan_command(SetResult(board=1, result="1-0"), view)
    assert [(d.daemon_id, d.online, d.command) for d in plan.deliveries] == [
        ("a", True, SetResult(board=1, result="1-0"))
    ]
    queued = plan_command(SetResult(board=3, result="0-1"), view)
    assert [(d.daemon_id, d.online) for d in queued.deliveries] == [("b", False)]
    nobody = plan_command(SetResult(board=9, result="0-1"), view)
    assert nobody.reply is not None
    assert nobody.reply.reason == "board 9 is not announced by any daemon"
    refused = plan_command(AcceptPosition(board=3), view)
    assert refused.reply is not None
    assert refused.reply.reason == (
        "board 3's daemon 'b' is offline; accept_position is not queued (the position may"
        " change meanwhile): try again when it is back"
    )


def test_an_acknowledgement_goes_to_the_daemon_that_raised_the_alert() -> None:
    view = routed_view()
    plan = plan_command(AckAlert(id=50_002), view)
    assert [(d.daemon_id, d.command, d.subject) for d in plan.deliveries] == [
        ("a", AckAlert(id=5), "alert 50002")
    ]
    offline = plan_command(AckAlert(id=10_003), view)
    assert [(d.daemon_id, d.command, d.online) for d in offline.deliveries] == [
        ("b", AckAlert(id=1), False)
    ]
    unknown = plan_command(AckAlert(id=5), view)
    assert unknown.reply is not None
    assert unknown.reply.reason == "alert 5 is not open (resolved already, or unknown)"


def test_set_clocks_goes_to_every_live_daemon() -> None:
    plan = plan_command(SetClocks(), routed_view())
    assert [d.daemon_id for d in plan.deliveries] == ["a"]
    assert plan.offline_boards == {"3": "its daemon 'b' is offline"}
    empty = plan_command(SetClocks(), RelayView(Hub(), PREFIX))
    assert empty.reply is not None
    assert empty.reply.reason == "no daemon has announced any board"


def test_a_request_survives_its_json_and_a_bad_one_is_rejected() -> None:
    request = CommandRequest(
        request="r-1", reply_to="event/relay/x/replies", sent_at=5.0, command=AckAlert(id=3)
    )
    assert CommandRequest.from_payload(request.to_payload()) == request
    for payload in [
        b"nonsense",
        b'{"request": "r", "reply_to": "t", "sent_at": 1}',
        b'{"request": "r", "reply_to": "t", "sent_at": 1, "command": {"type": "reboot"}}',
        b'{"request": "r", "reply_to": "t", "sent_at": 1,'
        b' "command": {"type": "ack_alert", "id": 0}}',
    ]:
        with pytest.raises(CommandRejected):
            CommandRequest.from_payload(payload)


def test_clashes_name_the_boards_and_sections_of_live_daemons_only() -> None:
    own = Ownership(daemon_id="hall-c", boards=(1, 2, 3, 7, 9), sections=("U12", "Open"))
    claims = [
        Ownership(daemon_id="hall-a", boards=(1, 2, 3, 4, 9), sections=("Open",)),
        Ownership(daemon_id="hall-b", boards=(7,)),
        Ownership(daemon_id="old-pc", boards=(7, 9), sections=("U12",)),
        Ownership(daemon_id="hall-c", boards=(1,)),  # our own earlier announcement
    ]
    online = {"hall-a": True, "hall-b": True, "old-pc": False, "hall-c": False}
    assert find_clashes(own, claims, online) == [
        'mqtt: boards 1-3, 9 already belong to daemon "hall-a", online on the broker:'
        " give each daemon its own boards",
        'mqtt: section "Open" already belongs to daemon "hall-a", online on the broker:'
        " give each daemon its own sections",
        'mqtt: board 7 already belongs to daemon "hall-b", online on the broker:'
        " give each daemon its own boards",
    ]


# -- both ends, joined in memory --------------------------------------------------------------


@contextlib.asynccontextmanager
async def daemon_of(folder: Path, boards: list[BoardSpec]) -> AsyncIterator[Daemon]:
    """A daemon that is built but not run: its round service executes commands."""
    daemon = await Daemon.open(_config(folder, boards), DaemonOptions())
    try:
        yield daemon
    finally:
        daemon.journal.close()


def _config(folder: Path, boards: list[BoardSpec]) -> Path:
    folder.mkdir()
    return write_config(folder, boards)


def listener_of(daemon: Daemon, name: str, max_age: float = 60.0) -> CommandListener:
    settings = MqttSettings(prefix=PREFIX, daemon_id=name)
    return CommandListener(settings, daemon.service, max_age=max_age)


def wire(
    listeners: dict[str, CommandListener], deliver: Callable[[bytes], None]
) -> Callable[[str, bytes], Awaitable[None]]:
    """A transport that hands each request to its daemon's listener and the answer back."""

    async def send(daemon_id: str, payload: bytes) -> None:
        listener = listeners.get(daemon_id)
        if listener is None:
            return  # the daemon is away: nothing answers
        _, answer = await listener.receive_request(payload)
        assert answer is not None
        asyncio.get_running_loop().call_soon(deliver, answer)

    return send


def joined(view: RelayView, listeners: dict[str, CommandListener]) -> RemoteCommands:
    """A relay's command handler wired to the listeners of daemons in this process."""
    commands = RemoteCommands(
        view, wire(listeners, lambda answer: commands.receive_answer(answer)), reply_to=REPLIES
    )
    return commands


def arbiter_records(daemon: Daemon) -> list[dict[str, object]]:
    return [dict(r.payload) for r in daemon.journal.records(kinds={ARBITER})]


async def test_a_command_is_executed_journalled_and_answered_with_relay_ids(
    tmp_path: Path,
) -> None:
    async with daemon_of(tmp_path / "a", [BoardSpec(1, "/dev/dgt-1"), BoardSpec(2, None)]) as a:
        now = time.time()
        a.service.receive(input_of(1, LINK, {"state": "online", "reason": ""}, now))
        a.service.receive(input_of(1, LINK, {"state": "offline", "reason": "cable"}, now + 1))
        (raised,) = a.hub.open_alerts()
        view = RelayView(Hub(), PREFIX)
        announce(view, "a", [1, 2])
        say(view, "a", "online")
        list_alerts(view, "a", [raised])
        listeners = {"a": listener_of(a, "a")}
        commands = joined(view, listeners)
        relay_id = raised.id * 10_000 + 1
        reply = await commands.execute(AckAlert(id=relay_id))
        assert reply.ok, reply
        assert [d["id"] for d in reply.details["alerts"]] == [relay_id]
        result = await commands.execute(SetResult(board=2, result="1/2-1/2"))
        assert result.ok, result
        refused = await commands.execute(AcceptPosition(board=2))
        assert (refused.ok, refused.reason) == (False, "board 2 has no e-board")
        assert arbiter_records(a) == [  # journalled when carried out; the refused one not
            {"command": "ack_alert", "id": raised.id},
            {"command": "set_result", "board": 2, "result": "1/2-1/2"},
        ]
        (seen,) = a.hub.open_alerts()  # acknowledged: open while the board is away
        assert (seen.id, seen.acknowledged) == (raised.id, True)


async def test_set_clocks_answers_are_merged_and_silence_times_out(tmp_path: Path) -> None:
    async with (
        daemon_of(tmp_path / "a", [BoardSpec(1, None)]) as a,
        daemon_of(tmp_path / "b", [BoardSpec(2, None)]) as b,
    ):
        view = RelayView(Hub(), PREFIX)
        for name, board in (("a", 1), ("b", 2)):
            announce(view, name, [board])
        say(view, "a", "online")
        say(view, "b", "online")
        listeners = {"a": listener_of(a, "a"), "b": listener_of(b, "b")}
        commands = joined(view, listeners)
        reply = await commands.execute(SetClocks())
        assert (reply.ok, reply.details) == (True, {"set": []})  # manual boards only
        announce(view, "c", [3])
        say(view, "c", "online")  # online, but its listener never answers
        commands.timeout = 0.2
        late = await commands.execute(SetClocks())
        assert late.details["failed"] == {"?": late.details["failed"]["?"]}
        assert "daemon 'c' did not answer within 0.2 s" in late.reason


async def test_a_relay_without_broker_says_nothing_was_sent() -> None:
    view = routed_view()

    async def offline(daemon_id: str, payload: bytes) -> None:
        raise RelayOffline("not connected")

    reply = await RemoteCommands(view, offline, reply_to=REPLIES).execute(
        SetResult(board=1, result="*")
    )
    assert (reply.ok, reply.reason) == (
        False,
        "the relay has no connection to the broker; nothing was sent",
    )


async def test_a_redelivered_request_is_answered_again_without_a_second_execution(
    tmp_path: Path,
) -> None:
    async with daemon_of(tmp_path / "a", [BoardSpec(1, None)]) as a:
        listener = listener_of(a, "a")
        command: ArbiterCommand = SetResult(board=1, result="0-1")
        request = CommandRequest(
            request="q1", reply_to=REPLIES, sent_at=time.time(), command=command
        )
        first = await listener.receive_request(request.to_payload())
        again = await listener.receive_request(request.to_payload())
        assert first == again
        assert first[0] == REPLIES
        assert len(arbiter_records(a)) == 1
        assert await listener.receive_request(b"garbage") == (None, None)


@pytest.mark.parametrize(
    "reply_to",
    [f"{PREFIX}/board/1/state", f"{PREFIX}/daemon/a/status", f"{PREFIX}/relay/+/replies", "t"],
)
async def test_a_command_answered_on_another_topic_than_a_relays_is_refused(
    tmp_path: Path, reply_to: str
) -> None:
    async with daemon_of(tmp_path / "a", [BoardSpec(1, None)]) as a:
        listener = listener_of(a, "a")
        command = SetResult(board=1, result="0-1")
        request = CommandRequest(
            request="q", reply_to=reply_to, sent_at=time.time(), command=command
        )
        assert await listener.receive_request(request.to_payload()) == (None, None)
        valid = dataclasses.replace(request, reply_to=REPLIES).to_payload()
        oversized = b" " * 70_000 + valid  # valid JSON, over 64 KiB
        assert await listener.receive_request(oversized) == (None, None)
        assert arbiter_records(a) == []


async def test_a_position_accepted_long_ago_is_not_carried_out(tmp_path: Path) -> None:
    async with daemon_of(tmp_path / "a", [BoardSpec(1, "/dev/dgt-1")]) as a:
        listener = listener_of(a, "a", max_age=60.0)
        stale = CommandRequest(
            request="q2",
            reply_to=REPLIES,
            sent_at=time.time() - 600,
            command=AcceptPosition(board=1),
        )
        _, answer = await listener.receive_request(stale.to_payload())
        assert answer is not None
        assert b"accept_position came 600 s late (the daemon was away); send it again" in answer
        assert arbiter_records(a) == []
    with Journal(tmp_path / "a" / "journal.db") as journal:
        assert not list(journal.records(kinds={ARBITER}))


def test_the_replay_guard_takes_each_request_once_and_none_too_old_or_ahead() -> None:
    def request(name: str, sent_at: float) -> CommandRequest:
        return CommandRequest(
            request=name, reply_to=REPLIES, sent_at=sent_at, command=AckAlert(id=1)
        )

    guard = ReplayGuard(window=100.0, ahead=5.0, kept=2)
    now = 1000.0
    assert guard.refusal(request("a", now - 99), now) is None
    assert guard.refusal(request("old", now - 101), now) == (
        "sent 101 s ago, before what this daemon remembers (a replay, or it was away too"
        " long): send it again"
    )
    assert guard.refusal(request("ahead", now + 6), now) == (
        "sent 6 s ahead of this daemon's clock (keep the PCs on NTP)"
    )
    for name, sent in (("a", now - 50), ("b", now - 40), ("c", now - 30)):
        guard.record(request(name, sent), now)
    assert guard.refusal(request("b", now - 40), now) == (
        "carried out already: a command is carried out once (a replay?)"
    )
    assert set(guard.seen) == {"b", "c"}  # "a" forgotten: nothing as old is taken now
    assert guard.refusal(request("a", now - 50), now) is not None
    assert guard.refusal(request("d", now - 50), now) is not None
    assert guard.refusal(request("d", now - 45), now) is None  # newer than the forgotten
    kept = ReplayGuard.from_json(guard.to_json())
    assert (kept.floor, kept.seen) == (guard.floor, guard.seen)
