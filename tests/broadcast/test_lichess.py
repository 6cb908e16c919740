"""The lichess push: its pure planner, and real requests to a local HTTP server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator

import pytest

from broadcast.hub import Hub
from broadcast.lichess import (
    LichessPusher,
    LichessSettings,
    RoundPushPlanner,
    push_url_for_round,
    summarize_reply,
)
from broadcast.messages import BoardState
from drivers.backoff import Backoff, BackoffPolicy
from tests.broadcast.conftest import Answer, ReceivedRequest, RecordingServer

TOKEN = "lip_secret123"
ROUND_PATH = "/api/broadcast/round/Ab12Cd34/push"


def game(board: int, moves: str = "1. e4 *", *, section: str = "") -> BoardState:
    pgn = (
        f'[Event "Club Open"]\n[Round "3.{board}"]\n[White "White {board}"]\n'
        f'[Black "Black {board}"]\n[Result "*"]\n\n{moves}\n'
    )
    return BoardState(board=board, section=section, round="3", pgn=pgn)


def lichess_reply(*games: dict[str, object]) -> Answer:
    return Answer(body=json.dumps({"games": list(games)}).encode())


def games_in(body: str | bytes) -> int:
    text = body.decode() if isinstance(body, bytes) else body
    return text.count("[Event ")


# --- The pure planner --------------------------------------------------------------------


def test_the_round_goes_in_one_push_ordered_by_board() -> None:
    planner = RoundPushPlanner()
    for board in (3, 1, 2):
        planner.receive_board(game(board))
    push = planner.next_push(0.0)
    assert push is not None
    assert (push.part, push.games) == (0, 3)
    rounds = [line for line in push.body.splitlines() if line.startswith("[Round")]
    assert rounds == ['[Round "3.1"]', '[Round "3.2"]', '[Round "3.3"]']
    assert push.body.endswith("1. e4 *\n")
    assert "\n\n\n" not in push.body


def test_one_push_in_flight_and_the_newest_pgn_wins() -> None:
    planner = RoundPushPlanner()
    planner.receive_board(game(1, "1. e4 *"))
    first = planner.next_push(0.0)
    assert first is not None
    planner.receive_board(game(1, "1. e4 e5 *"))
    planner.receive_board(game(1, "1. e4 e5 2. Nf3 *"))
    assert planner.next_push(0.0) is None  # the first is still in flight
    planner.receive_delivered(first)
    second = planner.next_push(0.0)
    assert second is not None
    assert "2. Nf3" in second.body
    planner.receive_delivered(second)
    assert planner.next_push(0.0) is None  # lichess has it all


def test_more_than_100_games_go_in_slices_and_only_changed_slices_again() -> None:
    planner = RoundPushPlanner()
    for board in range(1, 251):
        planner.receive_board(game(board))
    pushes = []
    while (push := planner.next_push(0.0)) is not None:
        pushes.append(push)
        planner.receive_delivered(push)
    assert [(p.part, p.games, games_in(p.body)) for p in pushes] == [
        (0, 100, 100),
        (1, 100, 100),
        (2, 50, 50),
    ]
    planner.receive_board(game(150, "1. d4 *"))
    again = planner.next_push(0.0)
    assert again is not None
    assert (again.part, again.games) == (1, 100)
    assert "1. d4 *" in again.body


def test_a_failure_waits_with_capped_backoff_and_honours_retry_after() -> None:
    planner = RoundPushPlanner(backoff=Backoff(BackoffPolicy(initial=2.0, maximum=10.0)))
    planner.receive_board(game(1))
    delays = []
    now = 100.0
    for retry_after in (None, None, 30.0, None, None):
        push = planner.next_push(now)
        assert push is not None
        delays.append(planner.receive_failed(push, now, retry_after))
        assert planner.next_push(now + delays[-1] - 0.01) is None
        assert planner.next_attempt_at() == now + delays[-1]
        now += delays[-1]
    assert delays == [2.0, 4.0, 30.0, 10.0, 10.0]
    push = planner.next_push(now)
    assert push is not None
    planner.receive_delivered(push)
    planner.receive_board(game(1, "1. c4 *"))
    push = planner.next_push(now)
    assert push is not None
    assert planner.receive_failed(push, now, None) == 2.0  # a success reset the backoff


def test_a_refused_push_is_not_repeated_until_the_round_changes() -> None:
    planner = RoundPushPlanner()
    planner.receive_board(game(1))
    push = planner.next_push(0.0)
    assert push is not None
    planner.receive_refused(push)
    assert planner.next_push(0.0) is None
    planner.receive_board(game(1, "1. e4 c5 *"))
    assert planner.next_push(0.0) is not None


def test_section_filter_and_boards_without_a_game() -> None:
    planner = RoundPushPlanner(section="U12")
    planner.receive_board(game(1, section="Open"))
    planner.receive_board(game(41, section="U12"))
    planner.receive_board(BoardState(board=42, section="U12"))  # no PGN yet: not pushed
    push = planner.next_push(0.0)
    assert push is not None
    assert (push.games, '[Round "3.41"]' in push.body) == (1, True)


def test_reporting_a_push_that_is_not_in_flight_is_a_bug() -> None:
    planner = RoundPushPlanner()
    planner.receive_board(game(1))
    push = planner.next_push(0.0)
    assert push is not None
    planner.receive_delivered(push)
    with pytest.raises(RuntimeError, match="not in flight"):
        planner.receive_delivered(push)


def test_reply_summary() -> None:
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


def test_settings() -> None:
    url = push_url_for_round("Ab12Cd34")
    assert url == "https://lichess.org/api/broadcast/round/Ab12Cd34/push"
    with pytest.raises(ValueError, match="token"):
        LichessSettings(push_url=url, token="")
    with pytest.raises(ValueError, match="max_games"):
        LichessSettings(push_url=url, token=TOKEN, max_games=101)
    with pytest.raises(ValueError, match="URL"):
        LichessSettings(push_url="lichess.org/api", token=TOKEN)


# --- Against a local HTTP server ---------------------------------------------------------


@contextlib.asynccontextmanager
async def pushing(server: RecordingServer) -> AsyncIterator[LichessPusher]:
    settings = LichessSettings(
        push_url=server.url(ROUND_PATH), token=TOKEN, backoff_initial=0.02, backoff_cap=0.2
    )
    pusher = LichessPusher(settings)
    task = asyncio.create_task(pusher.run())
    try:
        yield pusher
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def check_request(request: ReceivedRequest) -> None:
    assert (request.method, request.path) == ("POST", ROUND_PATH)
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "text/plain; charset=utf-8"


async def test_push_retries_500_and_429_then_succeeds(
    http_server: RecordingServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="broadcast.lichess")
    http_server.script.extend(
        [
            Answer(status=500, reason="Internal Server Error"),
            Answer(status=429, reason="Too Many Requests", headers=(("Retry-After", "1"),)),
            lichess_reply({"tags": {"White": "White 1"}, "moves": 1}),
        ]
    )
    async with pushing(http_server) as pusher:
        pusher.publish_board(game(1))
        await http_server.wait_for_requests(3)
        pusher.publish_board(game(2))  # sent only once the third push was answered
        await http_server.wait_for_requests(4)
    for request in http_server.requests:
        check_request(request)
    assert [r.body for r in http_server.requests[:3]] == [game(1).pgn.encode()] * 3
    messages = [r.getMessage() for r in caplog.records]
    assert any("500 Internal Server Error; retry in 0.0" in m for m in messages)
    assert any("429 Too Many Requests; retry in 1.0s" in m for m in messages)
    assert any("< lichess 200: 1 games: 1 ok (1 plies), 0 with errors" in m for m in messages)
    assert not any(TOKEN in m for m in messages)


async def test_changes_during_a_push_are_coalesced(http_server: RecordingServer) -> None:
    http_server.gate.clear()
    async with pushing(http_server) as pusher:
        pusher.publish_board(game(1, "1. e4 *"))
        await http_server.wait_for_requests(1)
        for moves in ("1. e4 e5 *", "1. e4 e5 2. Nf3 *", "1. e4 e5 2. Nf3 Nc6 *"):
            pusher.publish_board(game(1, moves))
            pusher.publish_board(game(2, moves))
        assert pusher.planner.in_flight is not None  # held: one push at a time, no second
        assert len(http_server.requests) == 1
        http_server.gate.set()
        await http_server.wait_for_requests(2)
        pusher.publish_board(game(3))
        await http_server.wait_for_requests(3)
    bodies = [r.body.decode() for r in http_server.requests]
    assert "Nc6" in bodies[1]
    assert [games_in(b) for b in bodies] == [1, 2, 3]
    assert http_server.max_in_flight == 1


async def test_a_refusal_is_logged_and_not_repeated(
    http_server: RecordingServer, caplog: pytest.LogCaptureFixture
) -> None:
    http_server.script.append(Answer(status=401, reason="Unauthorized", body=b"No such token"))
    async with pushing(http_server) as pusher:
        pusher.publish_board(game(1))
        await http_server.wait_for_requests(1)
        pusher.publish_board(game(1, "1. e4 e6 *"))
        await http_server.wait_for_requests(2)
    assert len(http_server.requests) == 2
    refusals = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(refusals) == 1
    assert "401 Unauthorized" in refusals[0].getMessage()
    assert "No such token" in refusals[0].getMessage()
    caplog.clear()  # the refusal was expected


async def test_a_large_round_is_pushed_in_slices_of_100(http_server: RecordingServer) -> None:
    async with pushing(http_server) as pusher:
        for board in range(1, 121):
            pusher.publish_board(game(board))
        await http_server.wait_for_requests(2)
    assert [games_in(r.body) for r in http_server.requests] == [100, 20]


async def test_following_the_hub(http_server: RecordingServer) -> None:
    hub = Hub()
    pusher = LichessPusher(LichessSettings(push_url=http_server.url(ROUND_PATH), token=TOKEN))
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
