"""The LiveChess API over a real websocket client and raw HTTP, fed from a real hub."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
from collections.abc import AsyncIterator
from typing import Any

import chess
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

import broadcast.livechess.eboards as eboards_module
from broadcast.feed.events import encode_json
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardStatus
from broadcast.livechess.resources import Pairing, Player, Tournament
from broadcast.livechess.server import LiveChessServer, LiveChessSettings
from broadcast.web.connection_limits import ConnectionPolicy
from tests.broadcast.feed_client import http_get
from tests.livechess.client import LiveChessClient, board_state
from tests.waiting import wait_until

EVENT = Tournament(
    name="Club Open",
    site="Oslo",
    date="2026-12-01",
    round=4,
    pairings=(
        Pairing(
            board=1,
            white=Player(name="Carlsen, Magnus", title="GM", fide_id=1503014),
            black=Player(name="Ian Nepomniachtchi", title="GM"),
        ),
        Pairing(board=2, white=Player(name="Doe, Jane"), black=Player(name="Roe, Rick")),
    ),
)
OPENING = ["e4", "e5", "Nf3", "Nc6", "Bb5"]


@pytest.fixture
async def server() -> AsyncIterator[LiveChessServer]:
    hub = Hub()
    hub.publish_board(board_state(1, [], clock_at=None))
    hub.publish_board(board_state(2, [], serial="10002"))
    settings = LiveChessSettings(port=0, tournaments=(EVENT,))
    async with LiveChessServer(hub, settings, policy=ConnectionPolicy(write_limit=4096)) as live:
        yield live


async def _client(server: LiveChessServer) -> LiveChessClient:
    ws = await connect(f"ws://127.0.0.1:{server.port}/api/v1.0", open_timeout=10)
    return LiveChessClient(ws)


def _clocked(board: int, sans: list[str], **fields: Any) -> Any:
    base: dict[str, Any] = {
        "white_clock": 5399.4,
        "black_clock": 5400.0,
        "running": "white",
        "clock_at": 1_764_000_000.25,
    }
    base.update(fields)
    return board_state(board, sans, **base)


async def test_eboards_lists_every_heard_board_with_the_documented_fields(
    server: LiveChessServer,
) -> None:
    server.hub.publish_board(_clocked(1, OPENING[:1]))
    client = await _client(server)
    await client.send_raw('{"id":1,"call":"eboards"}')  # lichess sends no param
    answer = await client.answer_to(1)
    assert answer["response"] == "call"
    assert answer["id"] == 1
    first, second = answer["param"]
    assert first == {
        "serialnr": "10001",
        "source": "/dev/ttyACM1",
        "state": "ACTIVE",
        "battery": None,
        "comment": None,
        "board": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR",
        "flipped": False,
        "clock": {"white": 5399, "black": 5400, "run": True, "time": 1_764_000_000_250},
    }
    assert second["serialnr"] == "10002"
    assert second["battery"] is None  # never reported: a USB board
    server.hub.publish_board(board_state(2, [], serial="10002", battery=84, battery_charging=True))
    listed = await client.call("eboards", {})
    # A Bluetooth board (docs/integrations.md, "Battery levels").
    assert listed["param"][1]["battery"] == "84%"
    sources = await client.call("sources", {})
    assert [s["device"] for s in sources["param"]] == ["/dev/ttyACM1", "/dev/ttyACM2"]
    assert sources["param"][0] == {
        "type": "serial",
        "device": "/dev/ttyACM1",
        "name": "ttyACM1",
        "present": True,
        "active": True,
        "status": "ACTIVE",
    }
    await client.ws.close()


async def test_a_subscription_gets_the_full_state_then_changes_and_corrections(
    server: LiveChessServer,
) -> None:
    hub = server.hub
    hub.publish_board(_clocked(1, OPENING[:2]))
    client = await _client(server)
    param = {"feed": "eboardevent", "id": 7, "param": {"serialnr": "10001"}}
    answer = await client.call("subscribe", param)
    assert (answer["response"], answer["param"]) == ("call", None)
    first = await client.feed_until(7, lambda e: True)
    assert first == {
        "serialnr": "10001",
        "flipped": False,
        "board": chess.Board("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w").board_fen(),
        "clock": {"white": 5399, "black": 5400, "run": True, "time": 1_764_000_000_250},
        "start": chess.STARTING_FEN,
        "san": ["e4", "e5"],
        "match": True,
    }
    hub.publish_board(_clocked(1, OPENING[:3], running="black"))
    moved = await client.feed_until(7, lambda e: len(e["san"]) == 3)
    assert moved["san"] == ["e4", "e5", "Nf3"]
    assert moved["clock"]["run"] is False
    assert "board" in moved
    hub.publish_board(_clocked(1, OPENING[:3], running="black", black_clock=5390.0))
    ticked = await client.feed_until(7, lambda e: "clock" in e and e["clock"]["black"] == 5390)
    assert "board" not in ticked  # unchanged fields are left out (§4)
    assert ticked["san"] == ["e4", "e5", "Nf3"]
    corrected = ["e4", "e5", "Nc3"]
    hub.publish_board(_clocked(1, corrected, running="black", black_clock=5390.0))
    fixed = await client.feed_until(7, lambda e: e["san"][-1] == "Nc3")
    assert fixed["san"] == corrected  # changed in place, as LiveChess does
    out = _clocked(1, corrected, status=BoardStatus.OUT_OF_SYNC, black_clock=5390.0)
    hub.publish_board(out)
    assert (await client.feed_until(7, lambda e: not e["match"]))["san"] == corrected
    await client.ws.close()


async def test_setup_counts_moves_from_the_position_given(server: LiveChessServer) -> None:
    hub = server.hub
    hub.publish_board(_clocked(1, OPENING[:4]))
    client = await _client(server)
    await client.call("subscribe", {"feed": "eboardevent", "id": 3, "param": {"serialnr": "10001"}})
    await client.feed_until(3, lambda e: len(e["san"]) == 4)
    after_two = chess.Board()
    for san in OPENING[:2]:
        after_two.push_san(san)
    setup = {"id": 3, "method": "setup", "param": {"fen": after_two.fen()}}
    assert (await client.call("call", setup))["param"] is None
    event = await client.feed_until(3, lambda e: e["start"] == after_two.fen())
    assert (event["san"], event["match"]) == (["Nf3", "Nc6"], True)
    later = after_two.copy()
    for san in ["Nf3", "Nc6", "Bb5", "a6"]:
        later.push_san(san)
    await client.call("call", {"id": 3, "method": "setup", "param": {"fen": later.fen()}})
    waiting = await client.feed_until(3, lambda e: e["start"] == later.fen())
    assert (waiting["san"], waiting["match"]) == ([], False)  # not reached yet
    hub.publish_board(_clocked(1, [*OPENING[:5], "a6", "Ba4"]))
    reached = await client.feed_until(3, lambda e: e["san"] == ["Ba4"])
    assert reached["match"] is True
    await client.ws.close()


def _flipped_is(flipped: bool, event: dict[str, Any]) -> bool:
    return event["flipped"] is flipped


async def test_flip_in_every_form_turns_the_board_for_its_own_connection_only(
    server: LiveChessServer,
) -> None:
    one, two = await _client(server), await _client(server)
    for client, feeds in ((one, (1, 2)), (two, (9,))):
        for feed in feeds:
            param = {"feed": "eboardevent", "id": feed, "param": {"serialnr": "10001"}}
            await client.call("subscribe", param)
            await client.feed_until(feed, lambda e: True)
    forms = [
        ("flip", {"flip": True}, True),
        ("setup", {"flip": False}, False),  # herohde/livechess-go sends it so
        ("flip", {"fen": True}, True),  # luno1977/dgt names the field fen
    ]
    for method, args, flipped in forms:
        answer = await one.call("call", {"id": 1, "method": method, "param": args})
        assert answer["response"] == "call", answer
        for feed in (1, 2):  # every feed of the connection on that board
            mine = await one.feed_until(feed, functools.partial(_flipped_is, flipped))
            assert mine["board"] == chess.STARTING_BOARD_FEN  # a full event
    assert (await one.call("eboards"))["param"][0]["flipped"] is True
    assert (await two.call("eboards"))["param"][0]["flipped"] is False
    server.hub.publish_board(_clocked(1, OPENING[:1]))
    seen = await two.feed_until(9, lambda e: e["san"] == ["e4"])
    assert seen["flipped"] is False, "another connection's flip is not this one's"
    assert all(event["flipped"] is False for event in two.events[9])
    await one.ws.close()
    await two.ws.close()


async def test_unsubscribe_in_both_forms_stops_the_feed(server: LiveChessServer) -> None:
    client = await _client(server)
    for feed, serial in ((1, "10001"), (2, "10002"), (3, "10001")):
        param = {"feed": "eboardevent", "id": feed, "param": {"serialnr": serial}}
        await client.call("subscribe", param)
    assert (await client.call("unsubscribe", {"id": 1}))["response"] == "call"
    answer = await client.call("call", {"id": 2, "method": "unsubscribe", "param": {}})
    assert answer["response"] == "call"
    counts = {feed: len(client.events.get(feed, [])) for feed in (1, 2)}
    server.hub.publish_board(_clocked(1, OPENING[:1]))
    server.hub.publish_board(_clocked(2, OPENING[:1], serial="10002"))
    await client.feed_until(3, lambda e: e["san"] == ["e4"])
    await client.call("eboards")  # anything still on its way has arrived by now
    assert {feed: len(client.events.get(feed, [])) for feed in (1, 2)} == counts
    again = await client.call("unsubscribe", {"id": 1})
    assert again["response"] == "error"
    await client.ws.close()


@pytest.mark.parametrize(
    ("frame", "answer_id", "words"),
    [
        ("{not json", None, "malformed JSON"),
        ("[" * 5000, None, "malformed JSON"),  # nested deeper than the parser recurses
        ("[1, 2]", None, "JSON object"),
        ('{"call": "eboards", "id": "1"}', None, "id must be an integer"),
        ('{"call": "teleport", "id": 5}', 5, "unknown call 'teleport'"),
        ('{"call": "eboards", "id": 5, "param": 3}', 5, "param must be an object"),
        (
            '{"call":"subscribe","id":6,"param":{"feed":"eboardevent","id":1,'
            '"param":{"serialnr":"99999"}}}',
            6,
            "no e-board with serial number 99999",
        ),
        ('{"call":"subscribe","id":6,"param":{"feed":"clock","id":1}}', 6, "unknown feed"),
        (
            '{"call":"call","id":8,"param":{"id":42,"method":"flip","param":{"flip":true}}}',
            8,
            "no feed with id 42",
        ),
        (
            '{"call":"call","id":8,"param":{"id":42,"method":"dance","param":{}}}',
            8,
            "unknown method",
        ),
    ],
)
async def test_bad_calls_get_livechess_error_answers(
    server: LiveChessServer, frame: str, answer_id: int | None, words: str
) -> None:
    client = await _client(server)
    await client.send_raw(frame)
    answer = await client.answer_to(answer_id)
    assert answer["response"] == "error"
    assert set(answer["param"]) == {"message", "stacktrace"}
    assert words in answer["param"]["message"]
    assert (await client.call("eboards"))["response"] == "call"  # the connection goes on
    await client.ws.close()


async def test_bad_setups_feed_ids_and_frames_are_refused(server: LiveChessServer) -> None:
    client = await _client(server)
    param = {"feed": "eboardevent", "id": 4, "param": {"serialnr": "10001"}}
    await client.call("subscribe", param)
    assert "in use" in (await client.call("subscribe", param))["param"]["message"]
    bad = await client.call("call", {"id": 4, "method": "setup", "param": {"fen": "8/8 w"}})
    assert "invalid FEN" in bad["param"]["message"]
    await client.send_raw(b"\x00binary")
    assert "binary" in (await client.answer_to(None))["param"]["message"]
    await client.send_raw(json.dumps({"call": "eboards", "id": 1, "pad": "x" * 20_000}))
    with pytest.raises(ConnectionClosed) as closed:
        await client.answer_to(1)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1009  # message too big
    still = await _client(server)
    assert (await still.call("eboards"))["response"] == "call"
    await still.ws.close()


async def test_a_board_that_stops_answering_is_listed_notresponding(
    server: LiveChessServer,
) -> None:
    client = await _client(server)
    await client.call("subscribe", {"feed": "eboardevent", "id": 2, "param": {"serialnr": "10001"}})
    server.hub.publish_board(_clocked(1, OPENING[:2]))
    await client.feed_until(2, lambda e: bool(e.get("clock")))
    server.hub.publish_board(_clocked(1, OPENING[:2], status=BoardStatus.OFFLINE))
    gone = await client.feed_until(2, lambda e: e["san"] != [] and e.get("clock", 0) is None)
    assert gone["san"] == ["e4", "e5"]
    listed = (await client.call("eboards"))["param"][0]
    assert (listed["state"], listed["source"], listed["clock"]) == ("NOTRESPONDING", None, None)
    server.hub.publish_board(_clocked(1, OPENING[:2]))
    back = await client.feed_until(2, lambda e: bool(e.get("clock")))
    assert back["clock"]["white"] == 5399
    assert (await client.call("eboards"))["param"][0]["state"] == "ACTIVE"
    await client.ws.close()


async def test_http_resources_are_json_with_cors(server: LiveChessServer) -> None:
    state = _clocked(1, OPENING[:3], result="1-0")
    server.hub.publish_board(state)
    await asyncio.sleep(0)  # the follower takes the state
    reply = await http_get(server.port, "/api/v1.0/eboards", "Origin: https://lichess.org")
    assert reply.status == 200
    assert reply.headers["access-control-allow-origin"] == "*"
    assert reply.headers["content-type"] == "application/json"
    assert [b["serialnr"] for b in json.loads(reply.body)] == ["10001", "10002"]
    tournaments = json.loads((await http_get(server.port, "/api/v1.0/tournaments")).body)
    assert tournaments == [{"uuid": EVENT.uuid, "description": "Club Open", "rounds": 4}]
    tournament = json.loads(
        (await http_get(server.port, f"/api/v1.0/tournament/{EVENT.uuid}")).body
    )
    assert tournament == {
        "uuid": EVENT.uuid,
        "name": "Club Open",
        "description": "Club Open",
        "location": "Oslo",
        "country": None,
        "rounds": 4,
        "eboards": ["10001", "10002"],
    }
    round_ = json.loads((await http_get(server.port, f"/api/v1.0/round/{EVENT.uuid}/4")).body)
    assert round_["nr"] == 4
    assert round_["date"] == "2026-12-01"
    first = round_["pairings"][0]
    assert first["white"] == {
        "fname": "Magnus",
        "mname": None,
        "lname": "Carlsen",
        "title": "GM",
        "federation": None,
        "gender": None,
        "fideid": 1503014,
    }
    assert (first["black"]["fname"], first["black"]["lname"]) == ("Ian", "Nepomniachtchi")
    assert (first["nr"], first["live"], first["result"]) == (1, False, "WHITEWIN")
    assert round_["pairings"][1]["result"] is None
    game = json.loads((await http_get(server.port, f"/api/v1.0/game/{first['uuid']}")).body)
    assert game == {
        "chess960": 518,
        "result": "WHITEWIN",
        "comment": None,
        "clock": {"white": 5399, "black": 5400, "run": True, "time": 1_764_000_000_250},
        "moves": ["e4 600", "e5 599", "Nf3 598"],
    }
    for missing in ("/api/v1.0/game/nope", f"/api/v1.0/round/{EVENT.uuid}/3", "/elsewhere"):
        answer = await http_get(server.port, missing)
        assert answer.status == 404
        assert "message" in json.loads(answer.body)


async def test_a_client_that_never_reads_is_bounded_and_delays_no_one(
    server: LiveChessServer,
) -> None:
    # close_timeout: its closing handshake would wait behind all it never read
    url = f"ws://127.0.0.1:{server.port}/api/v1.0"
    stuck = await connect(url, max_size=None, close_timeout=0.5)
    stuck.transport.pause_reading()  # reads nothing from now on
    for feed in range(1, 4):
        call = {"feed": "eboardevent", "id": feed, "param": {"serialnr": "10001"}}
        await stuck.send(json.dumps({"call": "subscribe", "id": feed, "param": call}))
    reader = await _client(server)
    await reader.call("subscribe", {"feed": "eboardevent", "id": 1, "param": {"serialnr": "10001"}})
    line = chess.Board()
    sans: list[str] = []
    for ply in range(120):
        move = next(iter(line.legal_moves)) if ply % 2 else list(line.legal_moves)[-1]
        sans.append(line.san(move))
        line.push(move)
        server.hub.publish_board(_clocked(1, list(sans), white_clock=5000.0 - ply))
        await asyncio.sleep(0)
    last = await reader.feed_until(1, lambda e: len(e["san"]) == len(sans))
    assert last["san"] == sans
    limit = server.policy.write_limit
    frame = len(json.dumps(last)) + 200
    assert max(server.client_buffers()) <= limit + 3 * frame  # a write buffer, no backlog
    stuck.transport.resume_reading()
    await stuck.close()
    await reader.ws.close()


async def test_many_subscribers_cost_one_encode_per_event(
    server: LiveChessServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    clients = [await _client(server) for _ in range(5)]
    for client in clients:
        for feed in range(10):
            param = {"feed": "eboardevent", "id": feed, "param": {"serialnr": "10001"}}
            await client.call("subscribe", param)
            await client.feed_until(feed, lambda e: True)
    encoded: list[Any] = []
    original = encode_json

    def counting(value: Any) -> str:
        encoded.append(value)
        return original(value)

    monkeypatch.setattr(eboards_module, "encode_json", counting)
    server.hub.publish_board(_clocked(1, OPENING[:1]))
    for client in clients:
        for feed in range(10):
            await client.feed_until(feed, lambda e: e["san"] == ["e4"])
    assert len(encoded) == 1
    for client in clients:
        await client.ws.close()


def test_the_state_a_test_builds_is_consistent() -> None:
    state = board_state(1, OPENING)
    replayed = chess.Board()
    for move in state.moves:
        replayed.push_uci(move.uci)
    assert replayed.fen() == state.fen
    assert dataclasses.replace(state, serial=None).serial is None


async def test_a_board_configured_by_serial_is_listed_before_it_answers(
    server: LiveChessServer,
) -> None:
    waiting = board_state(3, [], serial="30003", port=None, status=BoardStatus.WAITING)
    server.hub.publish_board(waiting)
    client = await _client(server)
    listed = (await client.call("eboards"))["param"]
    third = next(board for board in listed if board["serialnr"] == "30003")
    assert (third["state"], third["source"], third["clock"]) == ("NOTRESPONDING", None, None)
    await client.ws.close()


async def test_a_connection_holds_a_bounded_number_of_feeds() -> None:
    hub = Hub()
    hub.publish_board(board_state(1, []))
    settings = LiveChessSettings(port=0, max_feeds=3)
    async with LiveChessServer(hub, settings) as server:
        client = await _client(server)
        answers = []
        for feed in range(4):
            param = {"feed": "eboardevent", "id": feed, "param": {"serialnr": "10001"}}
            answers.append(await client.call("subscribe", param))
        assert [a["response"] for a in answers] == ["call", "call", "call", "error"]
        assert answers[-1]["param"]["message"] == "at most 3 feeds per connection"
        assert (await client.call("unsubscribe", {"id": 0}))["response"] == "call"
        param = {"feed": "eboardevent", "id": 9, "param": {"serialnr": "10001"}}
        assert (await client.call("subscribe", param))["response"] == "call"
        await client.ws.close()


async def test_eboards_and_sources_answers_encode_each_board_once_per_change(
    server: LiveChessServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await _client(server)
    first = await client.call("eboards")
    assert first["param"] == server.eboards.eboards()
    encoded: list[Any] = []
    original = encode_json

    def counting(value: Any) -> str:
        encoded.append(value)
        return original(value)

    monkeypatch.setattr(eboards_module, "encode_json", counting)
    sources = (await client.call("sources"))["param"]
    assert sources == server.eboards.sources()
    encoded.clear()
    for _ in range(20):
        assert (await client.call("eboards"))["param"] == first["param"]
        assert json.loads((await http_get(server.port, "/api/v1.0/eboards")).body) == first["param"]
        assert (await client.call("sources"))["param"] == sources
    assert encoded == [], "the entries were encoded once, before"
    server.hub.publish_board(_clocked(1, OPENING[:1]))
    await wait_until(lambda: server.eboards.eboards() != first["param"], 10, "board 1 taken")
    for _ in range(5):
        changed = await client.call("eboards")
    assert changed["param"] == server.eboards.eboards()
    assert len(encoded) == 1, "only the changed board's entry again"
    await client.ws.close()
