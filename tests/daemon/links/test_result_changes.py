"""Every change of a result reaches every output, or none (issue 33, item 1).

A round of the pairing program's files (round 4 of ``config/tournament-example.trf``,
results by hand) with a real mosquitto broker, a fake lichess on loopback and a PGN
folder. Board 3's result is set, confirmed, corrected, confirmed again, cleared, set to
a forfeit and confirmed; after each change every output says the same: the TRF the
pairing program reads, MQTT (the retained ``/board/3/result`` and the ``/results``
stream), lichess, the PGN folder, ``/standings.json`` and the spectators' ``/round.pgn``.
An output that fails (the TRF cannot be written) leaves the others and the command
whole, and a restart brings the TRF back in line with the journal.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import aiomqtt
import chess.pgn
import httpx
import pytest

from broadcast.feed.commands import ArbiterCommand, ConfirmResult, SetResult
from daemon.pairing import Tournament
from daemon.pairing.scoring import RoundEntry
from daemon.shell.app import Daemon
from tests.broadcast.conftest import RecordingServer
from tests.broadcast.fake_lichess import GOOD, FakeLichess, path_of
from tests.daemon.config_file import BoardSpec, TomlTable, example_round
from tests.daemon.support import running_daemon, wait_for
from tests.mosquitto import Mosquitto

ROUND_ID = "TestRd33"
WHITE, BLACK = 6, 3  # board 3 of round4-pairings.txt: Haddad (6) - Tanaka (3)
PGN_RESULTS = {"1-0": "1-0", "0-1": "0-1", "-+": "0-1", None: "*"}
TRF_CODES = {"1-0": ("1", "0"), "0-1": ("0", "1"), "-+": ("-", "+"), None: None}


def _config(
    folder: Path,
    tables: Mapping[str, TomlTable] | None = None,
    arrays: Mapping[str, Sequence[TomlTable]] | None = None,
) -> Path:
    boards = [BoardSpec(number, None) for number in range(1, 6)]  # no e-boards: by hand
    return example_round(folder, boards, tables=tables, arrays=arrays)


def _lichess(server: RecordingServer) -> dict[str, list[TomlTable]]:
    return {"lichess": [{"rounds": {"4": ROUND_ID}, "token": GOOD, "server": server.url("")}]}


async def _collect(port: int, into: dict[str, list[bytes]], ready: asyncio.Event) -> None:
    async with aiomqtt.Client("127.0.0.1", port, identifier="dgtcast-test-results") as client:
        await client.subscribe("dgtcast/#", qos=1)
        ready.set()
        async for message in client.messages:
            payload = message.payload
            assert isinstance(payload, bytes | bytearray)
            into.setdefault(str(message.topic), []).append(bytes(payload))


def _trf(folder: Path) -> tuple[str, str] | None:
    tournament = Tournament.from_trf(folder / "tournament-example.trf")
    white, black = tournament.player(WHITE).entry(4), tournament.player(BLACK).entry(4)
    if white is None or black is None:
        return None
    return white.result, black.result


def _games(text: str) -> list[chess.pgn.Game]:
    games, handle = [], io.StringIO(text)
    while (game := chess.pgn.read_game(handle)) is not None:
        assert not game.errors, game.errors
        games.append(game)
    return games


def _board_3(text: str) -> chess.pgn.Game | None:
    return next((g for g in _games(text) if g.headers.get("Round") == "4.3"), None)


class Outputs:
    """What each output says of board 3 now."""

    def __init__(self, folder: Path, daemon: Daemon, mqtt: dict[str, list[bytes]]) -> None:
        self.folder, self.daemon, self.mqtt = folder, daemon, mqtt
        self.lichess: FakeLichess | None = None
        self.http: dict[str, Any] = {}

    async def fetch(self) -> None:
        async with httpx.AsyncClient(base_url=self.daemon.address) as client:
            self.http["standings"] = (await client.get("/standings.json")).json()
            self.http["round.pgn"] = (await client.get("/round.pgn")).text

    def pgn_folder(self) -> str | None:
        path = self.folder / "pgn" / "round-4" / "game-3.pgn"
        game = _board_3(path.read_text()) if path.exists() else None
        return None if game is None else game.headers["Result"]

    def lichess_result(self) -> str | None:
        assert self.lichess is not None
        for request in reversed(self.lichess.to(ROUND_ID)):
            game = _board_3(request.body.decode())
            if game is not None:
                return game.headers["Result"]
        return None

    def mqtt_retained(self) -> str | None:
        payloads = self.mqtt.get("dgtcast/board/3/result") or [b""]
        return str(json.loads(payloads[-1])["result"]) if payloads[-1] else None

    def mqtt_stream(self) -> str | None:
        payloads = [json.loads(p) for p in self.mqtt.get("dgtcast/results", [])]
        mine = [p for p in payloads if p["board"] == 3]
        return str(mine[-1]["result"]) if mine else None

    def standings(self) -> tuple[str, bool, float]:
        (section,) = self.http["standings"]["sections"]
        (pairing,) = [p for p in section["pairings"] if p["board"] == 3]
        points = {s["start_rank"]: s["points"] for s in section["standings"]}
        return pairing["result"], pairing["result_final"], points[WHITE]

    def spectators(self) -> str | None:
        game = _board_3(self.http["round.pgn"])
        return None if game is None else game.headers["Result"]

    def snapshot(self) -> dict[str, Any]:
        return {
            "trf": _trf(self.folder),
            "mqtt retained": self.mqtt_retained(),
            "mqtt /results": self.mqtt_stream(),
            "lichess": self.lichess_result(),
            "pgn folder": self.pgn_folder(),
            "standings": self.standings(),
            "spectators": self.spectators(),
        }


def _expected(final: str | None, stream: str | None) -> dict[str, Any]:
    """What every output says once ``final`` is board 3's confirmed result (None: none)."""
    points = {"1-0": 3.0, "0-1": 2.0, "-+": 2.0, None: 2.0}[final]  # Haddad had 2
    return {
        "trf": TRF_CODES[final],
        "mqtt retained": final,
        "mqtt /results": stream,
        "lichess": PGN_RESULTS[final],
        "pgn folder": PGN_RESULTS[final],
        "standings": (final or "*", final is not None, points),
        "spectators": PGN_RESULTS[final],
    }


async def _settled(outputs: Outputs, expected: dict[str, Any], what: str) -> None:
    seen: dict[str, Any] = {}

    async def check() -> bool:
        await outputs.fetch()
        seen.update(outputs.snapshot())
        return seen == expected

    for _ in range(100):
        if await check():
            return
        await asyncio.sleep(0.1)
    assert seen == expected, what


#: Each change: the command, board 3's confirmed result after it, the last ``/results``.
STEPS: list[tuple[ArbiterCommand, str | None, str | None]] = [
    (SetResult(board=3, result="1-0"), None, None),  # provisional: nothing public yet
    (ConfirmResult(board=3), "1-0", "1-0"),
    (SetResult(board=3, result="0-1"), None, "*"),  # corrected: withdrawn until confirmed
    (ConfirmResult(board=3), "0-1", "0-1"),
    (SetResult(board=3, result="*"), None, "*"),  # cleared
    (SetResult(board=3, result="-+"), None, "*"),  # a forfeit, provisional
    (ConfirmResult(board=3), "-+", "-+"),
]


async def test_every_change_of_a_result_reaches_every_output(tmp_path: Path) -> None:
    received: dict[str, list[bytes]] = {}
    server = RecordingServer()
    await server.start()
    fake = FakeLichess(server)
    try:
        with Mosquitto(tmp_path / "broker") as broker:
            ready = asyncio.Event()
            subscriber = asyncio.create_task(_collect(broker.port, received, ready))
            await asyncio.wait_for(ready.wait(), 10)
            tables: dict[str, TomlTable] = {
                "mqtt": {"host": "127.0.0.1", "port": broker.port},
                "pgn_folder": {"path": str(tmp_path / "pgn")},
            }
            config = _config(tmp_path, tables, _lichess(server))
            async with running_daemon(config) as daemon:
                outputs = Outputs(tmp_path, daemon, received)
                outputs.lichess = fake
                await wait_for(lambda: bool(fake.to(ROUND_ID)), 10, "lichess's first push")
                await _settled(outputs, _expected(None, None), "before any result")
                for step, (command, final, stream) in enumerate(STEPS, 1):
                    reply = await daemon.service.execute(command)
                    assert reply.ok, (step, reply.reason)
                    await _settled(outputs, _expected(final, stream), f"step {step}: {command}")
            subscriber.cancel()  # and stopped while the broker is up: it disconnects cleanly
            with contextlib.suppress(asyncio.CancelledError):
                await subscriber
    finally:
        await server.close()
    assert path_of(ROUND_ID) in {r.path for r in server.requests}


def _journal_says(daemon: Daemon) -> str | None:
    state = daemon.core.engine.result_of(3)
    return state.result if state is not None and state.confirmed else None


@pytest.mark.error_log(r"result not written to the TRF")
async def test_a_failing_trf_leaves_the_rest_whole_and_a_restart_mends_it(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    trf = tmp_path / "tournament-example.trf"
    async with running_daemon(config) as daemon:
        assert (await daemon.service.execute(SetResult(board=3, result="1-0"))).ok
        assert (await daemon.service.execute(ConfirmResult(board=3))).ok
        assert _trf(tmp_path) == ("1", "0")
        saved = trf.read_bytes()
        # the TRF cannot be replaced (a folder where the file was): the clear is refused
        # by the TRF alone; the command, the journal and the spectators have it
        trf.unlink()
        trf.mkdir()
        reply = await daemon.service.execute(SetResult(board=3, result="*"))
        assert reply.ok, reply.reason
        assert _journal_says(daemon) is None
        state = daemon.hub.state(3)
        assert state is not None
        assert state.result == "*"
    trf.rmdir()
    trf.write_bytes(saved)  # as the TRF was: 1-0, which the journal cleared
    # and board 4 (7 - 12) entered in the TRF by hand, which the journal knows nothing of
    by_hand = Tournament.from_trf(trf).with_round(
        4,
        {
            7: RoundEntry(opponent=12, colour="w", code="="),
            12: RoundEntry(opponent=7, colour="b", code="="),
        },
    )
    trf.write_bytes(by_hand.to_bytes())
    async with running_daemon(config) as daemon:
        assert _journal_says(daemon) is None
        assert _trf(tmp_path) is None, "the TRF follows the journal after a restart"
        assert daemon.pairing is not None
        assert daemon.pairing.handoff.results.result_of(4) == "1/2-1/2"


async def test_a_restart_writes_what_the_journal_confirmed(tmp_path: Path) -> None:
    config = _config(tmp_path)
    trf = tmp_path / "tournament-example.trf"
    async with running_daemon(config) as daemon:
        before = trf.read_bytes()
        assert (await daemon.service.execute(SetResult(board=3, result="0-1"))).ok
        assert (await daemon.service.execute(ConfirmResult(board=3))).ok
        assert _trf(tmp_path) == ("0", "1")
    trf.write_bytes(before)  # a stop between the journal's commit and the TRF's write
    async with running_daemon(config):
        assert _trf(tmp_path) == ("0", "1")


async def test_forfeits_are_standard_pgn_everywhere_and_plus_minus_in_the_trf(
    tmp_path: Path,
) -> None:
    """Issue 33, item 2: a forfeit is its winner's PGN result, a double forfeit ``*``,
    each with the forfeit in ``Termination``; python-chess reads every file whole."""
    server = RecordingServer()
    await server.start()
    fake = FakeLichess(server)
    forfeits = {1: "+-", 2: "-+", 4: "--"}
    expected = {1: ("1-0", "forfeit"), 2: ("0-1", "forfeit"), 4: ("*", "double forfeit")}
    tables: dict[str, TomlTable] = {"pgn_folder": {"path": str(tmp_path / "pgn")}}
    try:
        async with running_daemon(_config(tmp_path, tables, _lichess(server))) as daemon:
            for board, result in forfeits.items():
                assert (await daemon.service.execute(SetResult(board=board, result=result))).ok
                assert (await daemon.service.execute(ConfirmResult(board=board))).ok

            def pushed() -> str:
                sent = fake.to(ROUND_ID)
                return sent[-1].body.decode() if sent else ""

            def told(text: str) -> dict[int, tuple[str, str]]:
                return {
                    int(g.headers["Round"].split(".")[1]): (
                        g.headers["Result"],
                        g.headers.get("Termination", ""),
                    )
                    for g in _games(text)
                    if int(g.headers["Round"].split(".")[1]) in forfeits
                }

            await wait_for(lambda: told(pushed()) == expected, 10, "lichess has the forfeits")
            async with httpx.AsyncClient(base_url=daemon.address) as client:
                spectators = (await client.get("/round.pgn")).text
            folder = tmp_path / "pgn" / "round-4"
            await wait_for(
                lambda: (
                    (folder / "games.pgn").exists()
                    and told((folder / "games.pgn").read_text()) == expected
                ),
                10,
                "the PGN folder has the forfeits",
            )
    finally:
        await server.close()
    assert told(spectators) == expected
    for board in forfeits:
        assert told((folder / f"game-{board}.pgn").read_text()) == {board: expected[board]}
    for text in (spectators, pushed(), (folder / "games.pgn").read_text()):
        for game in _games(text):  # every game read whole, with a standard result
            assert game.headers["Result"] in {"1-0", "0-1", "1/2-1/2", "*"}
            assert not {"+-", "-+", "--"} & set(text.split())
    tournament = Tournament.from_trf(tmp_path / "tournament-example.trf")
    codes = {
        board: (tournament.player(w).entry(4), tournament.player(b).entry(4))
        for board, (w, b) in {1: (2, 1), 2: (13, 4), 4: (7, 12)}.items()
    }
    assert {
        board: (white.result, black.result)
        for board, (white, black) in codes.items()
        if white is not None and black is not None
    } == {1: ("+", "-"), 2: ("-", "+"), 4: ("-", "-")}


@pytest.mark.error_log(r"board 3: an output failed to take the result")
async def test_an_output_that_fails_leaves_the_others_and_the_command_whole(
    tmp_path: Path,
) -> None:
    async with running_daemon(_config(tmp_path)) as daemon:

        def broken(_state: object, _decision: object) -> None:
            raise RuntimeError("an output with a bug")

        daemon.service.result_listeners.insert(0, broken)
        assert (await daemon.service.execute(SetResult(board=3, result="1-0"))).ok
        reply = await daemon.service.execute(ConfirmResult(board=3))
        assert reply.ok, reply.reason
        assert _trf(tmp_path) == ("1", "0")
        state = daemon.hub.state(3)
        assert state is not None
        assert (state.result, state.result_final) == ("1-0", True)
