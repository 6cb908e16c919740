"""The LiveChess API of a running daemon, driven by a real websocket client through
whole emulated games on ptys: every call, a flip, a setup from a position, and a board
unplugged (``NOTRESPONDING``) and plugged back in."""

from __future__ import annotations

import itertools
import json
import socket
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest
from websockets.asyncio.client import connect

from broadcast.feed.commands import ConfirmResult
from broadcast.livechess.server import LiveChessServer
from broadcast.web.listen import ListenError
from daemon.shell.app import Daemon, DaemonOptions
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from tests.broadcast.feed_client import http_get
from tests.daemon.support import BoardSpec, read_game, running_daemon, wait_for, write_config
from tests.livechess.client import LiveChessClient

SPEED = 25.0
LIVECHESS = {"livechess": {"enabled": True}}


def _sans(game: chess.pgn.Game) -> list[str]:
    board, sans = game.board(), []
    for move in game.mainline_moves():
        sans.append(board.san(move))
        board.push(move)
    return sans


def _check_types(event: dict[str, Any]) -> None:
    """The field types of docs/integrations.md, "The websocket API"."""
    assert isinstance(event["serialnr"], str)
    assert isinstance(event["flipped"], bool)
    assert isinstance(event["san"], list)
    assert all(isinstance(san, str) for san in event["san"])
    assert isinstance(event["start"], str)
    assert isinstance(event["match"], bool)
    if "board" in event:
        assert chess.BaseBoard(event["board"]).board_fen() == event["board"]
    clock = event.get("clock")
    if clock is not None:
        assert set(clock) == {"white", "black", "run", "time"}
        assert all(isinstance(clock[side], int) for side in ("white", "black", "time"))
        assert clock["run"] in (True, False, None)


async def _livechess(server: LiveChessServer | None) -> LiveChessClient:
    assert server is not None
    await wait_for(server.listening.is_set, 10, "LiveChess API listening")
    ws = await connect(f"ws://127.0.0.1:{server.port}/api/v1.0", open_timeout=10)
    return LiveChessClient(ws)


async def test_a_whole_emulated_game_through_the_livechess_api(
    tmp_path: Path, games_dir: Path
) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")  # 10 plies, ends in mate
    sans = _sans(game)
    clock = ClockSettings.from_text("3+2")
    async with (
        EmulatedBoard(clock=clock, seed=3, identity=BoardIdentity(serial="23946")) as one,
        EmulatedBoard(clock=clock, seed=4, identity=BoardIdentity(serial="07425")) as two,
    ):
        specs = [BoardSpec(1, str(one.path)), BoardSpec(2, str(two.path))]
        config = write_config(tmp_path, specs, tables=LIVECHESS)  # results = "confirmed"
        async with running_daemon(config, livechess_port=0) as daemon:
            for number in (1, 2):
                await wait_for(daemon.sessions[number].online.is_set, 10, f"board {number} up")
            client = await _livechess(daemon.livechess)
            listed = await client.call("eboards", {})
            assert [b["serialnr"] for b in listed["param"]] == ["23946", "07425"]
            assert {b["state"] for b in listed["param"]} == {"ACTIVE"}
            assert listed["param"][0]["source"]
            sources = await client.call("sources")
            assert len(sources["param"]) == 2

            param = {"feed": "eboardevent", "id": 5, "param": {"serialnr": "23946"}}
            answer = await client.call("subscribe", param)
            assert (answer["response"], answer["param"]) == ("call", None)
            first = await client.feed_until(5, lambda e: True)
            assert (first["san"], first["start"], first["match"]) == ([], chess.STARTING_FEN, True)
            assert first["board"] == chess.BaseBoard().board_fen()

            await one.play(game, speed=SPEED, noise=0.2)
            final = await client.feed_until(5, lambda e: e["san"] == sans)
            assert final["board"] == game.end().board().board_fen()
            events = client.events[5]
            for event in events:
                _check_types(event)
            lists = [e["san"] for e in events]
            for before, after in itertools.pairwise(lists):
                assert after == sans[: len(after)]  # never a move that was not played
                assert len(after) >= len(before)  # never one taken back (none was)
            clocked = [e["clock"] for e in events if e.get("clock")]
            assert clocked, "the clock is in the feed"

            after_four = chess.Board()
            for san in sans[:4]:
                after_four.push_san(san)
            setup = {"id": 5, "method": "setup", "param": {"fen": after_four.fen()}}
            assert (await client.call("call", setup))["response"] == "call"
            from_four = await client.feed_until(5, lambda e: e["start"] == after_four.fen())
            assert (from_four["san"], from_four["match"]) == (sans[4:], True)

            flip = {"id": 5, "method": "flip", "param": {"flip": True}}
            assert (await client.call("call", flip))["response"] == "call"
            assert (await client.feed_until(5, lambda e: e["flipped"]))["san"] == sans[4:]

            server = daemon.livechess
            assert server is not None
            game_uuid = await _game_uuid(server)
            resource = await http_get(server.port, f"/api/v1.0/game/{game_uuid}")
            data = json.loads(resource.body)
            assert [m.split(" ")[0] for m in data["moves"]] == sans
            assert all(len(m.split(" ")) == 2 for m in data["moves"])  # every move has a clock
            assert data["result"] is None  # mate on the board: public once confirmed
            assert (await daemon.service.execute(ConfirmResult(board=1))).ok
            resource = await http_get(server.port, f"/api/v1.0/game/{game_uuid}")
            assert json.loads(resource.body)["result"] == "BLACKWIN"

            param = {"feed": "eboardevent", "id": 6, "param": {"serialnr": "07425"}}
            await client.call("subscribe", param)
            await client.feed_until(6, lambda e: True)
            two.unplug()
            await wait_for(lambda: _state_of(daemon, 2) == "offline", 15, "board 2 offline")
            gone = await client.call("eboards")
            lost = gone["param"][1]
            assert (lost["state"], lost["source"], lost["clock"]) == ("NOTRESPONDING", None, None)
            await two.replug()
            await wait_for(lambda: _state_of(daemon, 2) != "offline", 20, "board 2 back")
            back = await client.call("eboards")
            assert back["param"][1]["state"] == "ACTIVE"
            assert back["param"][1]["source"]

            assert (await client.call("unsubscribe", {"id": 6}))["response"] == "call"
            await client.ws.close()


def _state_of(daemon: Any, board: int) -> str:
    state = daemon.hub.state(board)
    return "" if state is None else str(state.status.value)


async def _game_uuid(server: LiveChessServer) -> str:
    tournaments = json.loads((await http_get(server.port, "/api/v1.0/tournaments")).body)
    uuid = tournaments[0]["uuid"]
    rounds = tournaments[0]["rounds"]
    answer = await http_get(server.port, f"/api/v1.0/round/{uuid}/{rounds}")
    pairings = json.loads(answer.body)["pairings"]
    assert pairings[0]["white"]["lname"] == "White"
    return str(pairings[0]["uuid"])


async def test_a_busy_livechess_port_stops_the_start_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:  # DGT LiveChess itself, say
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        livechess = {"livechess": {"enabled": True, "port": port}}
        config = write_config(tmp_path, [BoardSpec(1, None)], tables=livechess)
        daemon = await Daemon.open(config, DaemonOptions(port=0))
        try:
            with pytest.raises(ListenError) as raised:
                await daemon.start()
        finally:
            daemon.journal.close()
    assert str(raised.value) == (
        f"[livechess] cannot listen on 127.0.0.1:{port}: the port is in use"
        " (another dgtcast, or another program, listens there)"
    )
