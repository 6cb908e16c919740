"""The lichess push: its pure planner and router, and real requests to a local HTTP server."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import AsyncIterator, Iterable
from dataclasses import replace

import pytest

from base.backoff import BackoffPolicy
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from broadcast.outputs.lichess import (
    LichessRouter,
    LichessTarget,
    Refusal,
    RoundPushPlanner,
    push_url_for_round,
    refusal_message,
    summarize_reply,
)
from broadcast.outputs.lichess_push import LichessPusher
from tests.broadcast.conftest import Answer, ReceivedRequest, RecordingServer

TOKEN = "lip_secret123"
ROUND_PATH = "/api/broadcast/round/Ab12Cd34/push"
URL = "https://lichess.org" + ROUND_PATH


def game(
    board: int, moves: str = "1. e4 *", *, section: str = "", rnd: int = 3, clock: str = ""
) -> BoardState:
    clocks = f'[WhiteClock "{clock}"]\n[BlackClock "1:30:00"]\n' if clock else ""
    pgn = (
        f'[Event "Club Open"]\n[Round "{rnd}.{board}"]\n[White "White {board}"]\n'
        f'[Black "Black {board}"]\n[Result "*"]\n{clocks}\n{moves}\n'
    )
    return BoardState(board=board, section=section, round=f"{rnd}.{board}", pgn=pgn)


def target(**changes: object) -> LichessTarget:
    base = LichessTarget(token=TOKEN, push_url=URL, retry=BackoffPolicy(initial=2.0, maximum=10.0))
    return replace(base, **changes)  # type: ignore[arg-type]


def planner(**changes: object) -> RoundPushPlanner:
    return RoundPushPlanner(URL, target(**changes))


def lichess_reply(*games: dict[str, object]) -> Answer:
    return Answer(body=json.dumps({"games": list(games)}).encode())


def games_in(body: str | bytes) -> int:
    text = body.decode() if isinstance(body, bytes) else body
    return text.count("[Event ")


# --- The pure planner --------------------------------------------------------------------


def test_the_round_goes_in_one_push_ordered_by_board() -> None:
    plan = planner()
    for board in (3, 1, 2):
        plan.receive_board(game(board))
    push = plan.next_push(0.0)
    assert push is not None
    assert (push.url, push.token, push.games) == (URL, TOKEN, 3)
    rounds = [line for line in push.body.splitlines() if line.startswith("[Round")]
    assert rounds == ['[Round "3.1"]', '[Round "3.2"]', '[Round "3.3"]']
    assert push.body.endswith("1. e4 *\n")
    assert "\n\n\n" not in push.body


def test_one_push_in_flight_at_most_one_a_second_and_the_newest_pgn_wins() -> None:
    plan = planner()
    plan.receive_board(game(1, "1. e4 *"))
    first = plan.next_push(0.0)
    assert first is not None
    plan.receive_board(game(1, "1. e4 e5 *"))
    plan.receive_board(game(1, "1. e4 e5 2. Nf3 *"))
    assert plan.next_push(0.5) is None  # the first is still in flight
    plan.receive_delivered(first)
    assert plan.next_push(0.5) is None  # answered, but within a second of the first
    assert plan.due_at() == 1.0
    second = plan.next_push(1.0)
    assert second is not None
    assert "2. Nf3" in second.body
    plan.receive_delivered(second)
    assert (plan.next_push(5.0), plan.due_at()) == (None, None)  # lichess has it all


def test_clock_only_changes_wait_for_the_clock_interval_or_a_move() -> None:
    plan = planner(clock_interval=10.0)
    plan.receive_board(game(1, "1. e4 *", clock="1:29:58"))
    first = plan.next_push(0.0)
    assert first is not None
    plan.receive_delivered(first)
    for second in range(1, 5):
        plan.receive_board(game(1, "1. e4 *", clock=f"1:29:{58 - second}"))
        assert plan.next_push(float(second)) is None
    assert plan.due_at() == 10.0
    plan.receive_board(game(1, "1. e4 c5 *", clock="1:29:53"))  # a move goes at once
    assert plan.due_at() == 1.0
    moved = plan.next_push(5.0)
    assert moved is not None
    assert "c5" in moved.body
    plan.receive_delivered(moved)
    plan.receive_board(game(1, "1. e4 c5 *", clock="1:29:40"))
    assert plan.next_push(14.9) is None
    assert plan.next_push(15.0) is not None


def test_a_lichess_round_gets_at_most_100_games() -> None:
    plan = planner()
    for board in range(1, 121):
        plan.receive_board(game(board))
    push = plan.next_push(0.0)
    assert push is not None
    assert (push.games, games_in(push.body), plan.overflow) == (100, 100, 20)


def test_a_failure_waits_with_capped_backoff_and_honours_retry_after() -> None:
    plan = planner()
    plan.receive_board(game(1))
    delays = []
    now = 100.0
    for retry_after in (None, None, 30.0, None, None):
        push = plan.next_push(now)
        assert push is not None
        delays.append(plan.receive_failed(push, now, retry_after))
        assert plan.next_push(now + delays[-1] - 0.01) is None
        assert plan.due_at() == now + delays[-1]
        now += delays[-1]
    assert delays == [2.0, 4.0, 30.0, 10.0, 10.0]
    push = plan.next_push(now)
    assert push is not None
    plan.receive_delivered(push)
    plan.receive_board(game(1, "1. c4 *"))
    push = plan.next_push(now + 1)
    assert push is not None
    assert plan.receive_failed(push, now, None) == 2.0  # a success reset the backoff


def test_retry_after_is_waited_exactly_and_a_timeout_waits_the_time_limit() -> None:
    plan = planner(time_limit=20.0)
    plan.receive_board(game(1))
    delays = []
    now = 1000.0
    for retry_after, timed_out in ((None, False), (None, False), (1.0, False), (None, True)):
        push = plan.next_push(now)
        assert push is not None
        delays.append(plan.receive_failed(push, now, retry_after, timed_out=timed_out))
        assert plan.due_at() == now + delays[-1]
        now += max(delays[-1], 1.0)  # at most one push a second
    assert delays == [2.0, 4.0, 1.0, 20.0]  # a Retry-After below the step: exactly it


def test_a_bad_pgn_refusal_is_not_repeated_until_the_round_changes() -> None:
    plan = planner()
    plan.receive_board(game(1))
    push = plan.next_push(0.0)
    assert push is not None
    assert plan.receive_refused(push, 400, "bad PGN") is None
    assert plan.next_push(5.0) is None
    plan.receive_board(game(1, "1. e4 c5 *"))
    assert plan.next_push(5.0) is not None


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_refused_token_or_round_stops_the_round_until_resumed(status: int) -> None:
    plan = planner()
    plan.receive_board(game(1))
    push = plan.next_push(0.0)
    assert push is not None
    refusal = plan.receive_refused(push, status, "No such token")
    assert refusal == Refusal(url=URL, status=status, message="No such token")
    assert refusal.round_id == "Ab12Cd34"
    for second in range(1, 100):
        plan.receive_board(game(1, f"1. e4 c5 {second}. Nf3 *"))
        assert plan.next_push(float(second)) is None
    assert plan.resume()
    assert plan.next_push(100.0) is not None
    assert not plan.resume()


def test_reporting_a_push_that_is_not_in_flight_is_a_bug() -> None:
    plan = planner()
    plan.receive_board(game(1))
    push = plan.next_push(0.0)
    assert push is not None
    plan.receive_delivered(push)
    with pytest.raises(RuntimeError, match="not in flight"):
        plan.receive_delivered(push)


# --- The router ---------------------------------------------------------------------------


def split_targets(**changes: object) -> list[LichessTarget]:
    base = LichessTarget(token=TOKEN, rounds={"3": "Round3a", "4": "Round4a"}, boards=(1, 60))
    second = replace(base, rounds={"3": "Round3b", "4": "Round4b"}, boards=(61, 120))
    return [replace(base, **changes), replace(second, **changes)]  # type: ignore[arg-type]


def drain(router: LichessRouter, now: float) -> list[tuple[str, int]]:
    sent = []
    while (due := router.next_push(now)) is not None:
        plan, push = due
        sent.append((push.url.split("/")[-2], push.games))
        plan.receive_delivered(push)
    return sent


def test_board_ranges_go_to_their_own_lichess_rounds_and_a_new_round_moves_on() -> None:
    router = LichessRouter(split_targets())
    for board in range(1, 121):
        router.receive_board(game(board))
    assert sorted(drain(router, 0.0)) == [("Round3a", 60), ("Round3b", 60)]
    router.receive_board(game(7, "1. d4 *", rnd=4))  # board 7 starts round 4
    assert drain(router, 1.0) == [("Round4a", 1)]
    router.receive_board(game(7, "1. d4 d5 *", rnd=4))
    assert drain(router, 2.0) == [("Round4a", 1)]  # round 3's lichess round is left as it was


def test_sections_and_unmapped_rounds(caplog: pytest.LogCaptureFixture) -> None:
    router = LichessRouter(
        [
            LichessTarget(token=TOKEN, section="Open", rounds={"3": "OpenR3"}),
            LichessTarget(token="lip_other", section="U12", rounds={"1": "U12R1"}),
        ]
    )
    router.receive_board(game(1, section="Open"))
    router.receive_board(game(41, section="U12"))  # round 3 of U12: no lichess round named
    router.receive_board(game(42, section="U12"))
    router.receive_board(BoardState(board=2, section="Open", round="3.2"))  # no game yet
    assert drain(router, 0.0) == [("OpenR3", 1)]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        '= lichess: no lichess round for section "U12" round 3: add it to rounds in'
        " [[lichess]]; its games are not pushed"
    ]


def test_resuming_one_round_and_new_targets() -> None:
    router = LichessRouter(split_targets())
    for board in (1, 61):
        router.receive_board(game(board))
    for _ in range(2):
        due = router.next_push(0.0)
        assert due is not None
        due[0].receive_refused(due[1], 401, "bad token")
    assert sorted(r.round_id for r in router.refusals()) == ["Round3a", "Round3b"]
    assert router.resume("Round3b") == [push_url_for_round("Round3b")]
    assert drain(router, 1.0) == [("Round3b", 1)]
    fixed = LichessRouter(split_targets(token="lip_fixed"))
    for board in (1, 61):
        fixed.receive_board(game(board))
    fixed.continue_from(router)
    assert fixed.refusals() == []  # a new token starts afresh
    assert sorted(drain(fixed, 2.0)) == [("Round3a", 1), ("Round3b", 1)]


def test_reply_summary_and_refusal_message() -> None:
    body = json.dumps(
        {
            "games": [
                {"tags": {"White": "A", "Black": "B", "Round": "3.1"}, "moves": 12},
                {"tags": {"White": "C", "Black": "D", "Round": "3.2"}, "error": "Invalid move"},
                {"tags": {"White": "E", "Black": "F", "Round": "3.3"}, "moves": 7},
            ]
        }
    ).encode()
    summary, errors = summarize_reply(body)
    assert summary == "3 games: 2 ok (19 plies), 1 with errors"
    assert errors == ["C - D (round 3.2): Invalid move"]
    assert summarize_reply(b"<html>oops</html>")[0].startswith("unreadable reply")
    assert refusal_message(b'{"error":"No such token"}') == "No such token"
    assert refusal_message(b"Not found\n") == "Not found"


def test_targets() -> None:
    assert push_url_for_round("Ab12Cd34") == URL
    with pytest.raises(ValueError, match="token"):
        LichessTarget(token="", push_url=URL)
    with pytest.raises(ValueError, match="either"):
        LichessTarget(token=TOKEN)
    with pytest.raises(ValueError, match="URL"):
        LichessTarget(token=TOKEN, push_url="lichess.org/api")


# --- Against a local HTTP server ---------------------------------------------------------


class Refusals(list[Refusal]):
    """The refusals handed to ``on_refusal``, and an event set by each."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = asyncio.Event()

    def receive(self, refusal: Refusal) -> None:
        self.append(refusal)
        self.arrived.set()

    async def wait(self) -> None:
        async with asyncio.timeout(10):
            await self.arrived.wait()


@contextlib.asynccontextmanager
async def pushing(
    server: RecordingServer, targets: Iterable[LichessTarget] | None = None
) -> AsyncIterator[tuple[LichessPusher, Refusals]]:
    refusals = Refusals()
    if targets is None:
        targets = [
            target(push_url=server.url(ROUND_PATH), retry=BackoffPolicy(initial=0.02, maximum=0.2))
        ]
    pusher = LichessPusher(targets, on_refusal=refusals.receive)
    task = asyncio.create_task(pusher.run())
    try:
        yield pusher, refusals
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def check_request(request: ReceivedRequest) -> None:
    assert (request.method, request.path) == ("POST", ROUND_PATH)
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "text/plain; charset=utf-8"


def spacing(pusher: LichessPusher) -> list[float]:
    """Seconds between the starts of the pushes (the server sees them with some jitter)."""
    return [b - a for (_, a), (_, b) in itertools.pairwise(pusher.recent)]


async def test_push_retries_500_and_429_then_succeeds(
    http_server: RecordingServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="broadcast.outputs.lichess_push")
    http_server.script.extend(
        [
            Answer(status=500, reason="Internal Server Error"),
            Answer(status=429, reason="Too Many Requests", headers=(("Retry-After", "1"),)),
            lichess_reply({"tags": {"White": "White 1"}, "moves": 1}),
        ]
    )
    async with pushing(http_server) as (pusher, _):
        pusher.publish_board(game(1))
        await http_server.wait_for_requests(3)
        pusher.publish_board(game(2))  # sent only once the third push was answered
        await http_server.wait_for_requests(4)
    for request in http_server.requests:
        check_request(request)
    assert [r.body for r in http_server.requests[:3]] == [game(1).pgn.encode()] * 3
    assert spacing(pusher)[1] >= 1.0  # the 429's Retry-After was honoured
    messages = [r.getMessage() for r in caplog.records]
    assert any("500 Internal Server Error; retry in 0.0" in m for m in messages)
    assert any("429 Too Many Requests; retry in 1.0s" in m for m in messages)
    assert any("< lichess 200: 1 games: 1 ok (1 plies), 0 with errors" in m for m in messages)
    assert not any(TOKEN in m for m in messages)


async def test_a_lichess_slower_than_the_time_limit_never_has_two_pushes_at_once(
    http_server: RecordingServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Scaled down from lichess answering in 30 s with the 20 s limit: 1.6 s and 1 s."""
    http_server.answer_delay = 1.6
    url = http_server.url(ROUND_PATH)
    slow = target(push_url=url, time_limit=1.0, retry=BackoffPolicy(initial=0.05, maximum=0.2))
    async with pushing(http_server, [slow]) as (pusher, _):
        pusher.publish_board(game(1))
        await http_server.wait_for_requests(3, time_limit=30)
    assert http_server.max_in_flight == 1, "a second push came while lichess was at work"
    assert min(spacing(pusher)) >= 2 * slow.time_limit - 0.05
    messages = [r.getMessage() for r in caplog.records]
    assert any("no reply from 127.0.0.1" in m and "retry in 1.0s" in m for m in messages)
    assert not any("ReadTimeout" in m for m in messages)


async def test_changes_during_a_push_are_coalesced(http_server: RecordingServer) -> None:
    http_server.gate.clear()
    async with pushing(http_server) as (pusher, _):
        pusher.publish_board(game(1, "1. e4 *"))
        await http_server.wait_for_requests(1)
        for moves in ("1. e4 e5 *", "1. e4 e5 2. Nf3 *", "1. e4 e5 2. Nf3 Nc6 *"):
            pusher.publish_board(game(1, moves))
            pusher.publish_board(game(2, moves))
        held = [p.in_flight for p in pusher.router.planners.values()]
        assert held != [None]  # held: one push at a time, no second
        assert len(http_server.requests) == 1
        http_server.gate.set()
        await http_server.wait_for_requests(2)
        pusher.publish_board(game(3))
        await http_server.wait_for_requests(3)
    bodies = [r.body.decode() for r in http_server.requests]
    assert "Nc6" in bodies[1]
    assert [games_in(b) for b in bodies] == [1, 2, 3]
    assert http_server.max_in_flight == 1
    assert min(spacing(pusher)) >= 1.0


async def test_a_refused_token_stops_the_round_until_resumed(
    http_server: RecordingServer, caplog: pytest.LogCaptureFixture
) -> None:
    http_server.script.append(
        Answer(status=401, reason="Unauthorized", body=b'{"error":"No such token"}')
    )
    async with pushing(http_server) as (pusher, refusals):
        pusher.publish_board(game(1))
        await http_server.wait_for_requests(1)
        for second in range(2, 30):
            pusher.publish_board(game(1, f"1. e4 e6 {second}. d4 *"))
        await refusals.wait()
        assert refusals == [
            Refusal(url=http_server.url(ROUND_PATH), status=401, message="No such token")
        ]
        assert len(http_server.requests) == 1
        assert pusher.resume() == [http_server.url(ROUND_PATH)]
        await http_server.wait_for_requests(2)
    assert "29. d4" in http_server.requests[1].body.decode()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    stops = [r.getMessage() for r in caplog.records if "pushes to it stop" in r.getMessage()]
    assert len(stops) == 1
    assert "401 Unauthorized): No such token" in stops[0]


async def test_a_new_token_from_the_configuration_resumes(http_server: RecordingServer) -> None:
    http_server.script.append(Answer(status=403, reason="Forbidden", body=b"Not a contributor"))
    first = target(push_url=http_server.url(ROUND_PATH))
    async with pushing(http_server, [first]) as (pusher, refusals):
        pusher.publish_board(game(1))
        await http_server.wait_for_requests(1)
        await refusals.wait()
        pusher.replace_targets([replace(first, token="lip_fixed")])
        await http_server.wait_for_requests(2)
    assert http_server.requests[1].headers["authorization"] == "Bearer lip_fixed"


async def test_a_120_board_round_split_over_two_lichess_rounds(
    http_server: RecordingServer,
) -> None:
    base = http_server.url("")
    targets = [
        LichessTarget(token=TOKEN, rounds={"3": "Split000"}, boards=(1, 60), base_url=base),
        LichessTarget(token=TOKEN, rounds={"3": "Split001"}, boards=(61, 120), base_url=base),
    ]
    async with pushing(http_server, targets) as (pusher, _):
        for board in range(1, 121):
            pusher.publish_board(game(board))
        await http_server.wait_for_requests(2)
    by_path = {r.path: r.body.decode() for r in http_server.requests}
    assert set(by_path) == {
        "/api/broadcast/round/Split000/push",
        "/api/broadcast/round/Split001/push",
    }
    assert games_in(by_path["/api/broadcast/round/Split000/push"]) == 60
    assert '[Round "3.61"]' in by_path["/api/broadcast/round/Split001/push"]


async def test_following_the_hub(http_server: RecordingServer) -> None:
    hub = Hub()
    pusher = LichessPusher([target(push_url=http_server.url(ROUND_PATH))])
    hub.publish_board(game(1))
    task = asyncio.create_task(pusher.serve(hub))
    try:
        await http_server.wait_for_requests(1)
        hub.publish_board(game(1, "1. e4 e5 *"))
        await http_server.wait_for_requests(2)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert b"1. e4 e5 *" in http_server.requests[1].body
