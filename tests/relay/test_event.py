"""One event, three daemon processes, two relays, one broker; kills and restarts on the way.

Daemon "hall-a" owns e-boards 1 and 2, "hall-b" e-board 3, "hall-c" e-board 4 and the
manual board 5; each is ``dgtcast run`` in its own process, and the e-boards are emulated
in this process. Relay r1 runs in this process, relay r2 is ``dgtcast relay``; a
spectator follows each. While the games are played, r2 and hall-b are killed with SIGKILL
and started again, and the broker is restarted. In the end both spectators know every
move of every board, in order; both relays show what the daemons show (moves, clocks,
results, PGN) and the alerts that the daemons' journals leave open; arbiter commands sent
to a relay are carried out by the owning daemon, also by one that was down meanwhile.
Every daemon and relay has the event key (``[mqtt] event_key``): everything is signed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess.pgn
import pytest

from broadcast.relay.routing import relay_alert_id
from broadcast.relay.server import Relay
from daemon.journal.store import Journal
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.broadcast.feed_client import http_get
from tests.daemon.support import BoardSpec, journal_moves, read_game, write_config
from tests.mosquitto import Mosquitto, free_port
from tests.relay.support import (
    KEY,
    Arbiter,
    Spectator,
    journal_alerts,
    journal_open_alerts,
    mqtt_table,
    relay_file,
    relay_settings,
    running_relay,
    second_half,
)
from tests.serving import Started, dgtcast_run, start_dgtcast, stop_process

pytestmark = pytest.mark.slow  # games played in real time (docs/development.md)

SPEED = 40.0
TIME_CONTROL = "600+5"  # the e-board clocks' too
HALLS = {"hall-a": (1, 2), "hall-b": (3,), "hall-c": (4, 5)}
CLOCK_FIELDS = ("white_clock", "black_clock", "clock_at", "updated_at")


def truncated(game: chess.pgn.Game, plies: int, result: str) -> chess.pgn.Game:
    """The first ``plies`` of ``game``, ending in ``result``."""
    short = chess.pgn.Game()
    node: chess.pgn.GameNode = short
    for move in list(game.mainline_moves())[:plies]:
        node = node.add_variation(move)
    short.headers["Result"] = result
    return short


def games_of(games_dir: Path) -> dict[int, chess.pgn.Game]:
    kasparov = games_dir / "kasparov-deep-blue-1997.pgn"
    return {
        1: truncated(read_game(kasparov, 5), 20, "1/2-1/2"),  # ends with the kings gesture
        2: truncated(read_game(kasparov, 0), 16, "*"),
        3: truncated(read_game(games_dir / "anastasian-lewis.pgn"), 16, "*"),
        4: read_game(games_dir / "molinari-bordais-1979.pgn"),  # mate in 10 plies
    }


@dataclass
class Event:
    """The running event: folders, broker, e-boards, games, daemons and relay r2."""

    folder: Path
    broker: Mosquitto
    boards: dict[int, EmulatedBoard]
    games: dict[int, chess.pgn.Game]
    daemons: dict[str, Started] = field(default_factory=dict)
    relay2: Started | None = None
    relay2_port: int = 0

    def journal(self, hall: str) -> Path:
        return self.folder / hall / "journal.db"

    def write_configs(self) -> None:
        for hall, numbers in HALLS.items():
            folder = self.folder / hall
            folder.mkdir()
            ports = {n: str(self.boards[n].path) for n in numbers if n in self.boards}
            specs = [BoardSpec(n, ports.get(n)) for n in numbers]
            table = mqtt_table(self.broker, hall, KEY)
            write_config(folder, specs, time_control=TIME_CONTROL, extra=table)

    async def start(self, hall: str) -> None:
        config = str(self.folder / hall / "round.toml")
        args = ("run", "--config", config, "--http-port", "0", "--log-level", "WARNING")
        self.daemons[hall] = await start_dgtcast(*args, log=self.folder / hall / "daemon.log")

    async def kill(self, hall: str) -> None:
        await stop_process(self.daemons.pop(hall).process, kill=True)

    async def start_relay2(self) -> None:
        config = relay_file(self.folder / "r2", self.broker, "r2", key=KEY)
        args = ("relay", "--config", str(config), "--http-port", str(self.relay2_port))
        self.relay2 = await start_dgtcast(*args, log=self.folder / "r2" / "relay.log")

    async def play(self, board: int, first: int, last: int, *, gesture: bool = False) -> None:
        """Plies ``first`` up to ``last`` of the board's game (then the kings, if asked)."""
        game = self.games[board]
        part = game if first == 0 else second_half(game, first)
        plies = None if last == len(self.expected(board)) else last - first
        await self.boards[board].play(
            part, speed=SPEED, plies=plies, start_clock=first == 0, signal_result=gesture
        )

    def expected(self, board: int) -> list[str]:
        return [move.uci() for move in self.games[board].mainline_moves()]

    def moves_journalled(self, hall: str, board: int) -> int:
        path = self.journal(hall)
        return len(journal_moves(path, board)) if path.exists() else 0


@contextlib.asynccontextmanager
async def emulated(numbers: tuple[int, ...]) -> AsyncIterator[dict[int, EmulatedBoard]]:
    clock = ClockSettings.from_text("10+5")  # TIME_CONTROL
    async with contextlib.AsyncExitStack() as stack:
        yield {
            n: await stack.enter_async_context(EmulatedBoard(clock=clock, seed=n)) for n in numbers
        }


@contextlib.asynccontextmanager
async def following(*spectators: Spectator) -> AsyncIterator[None]:
    tasks = [asyncio.create_task(s.run()) for s in spectators]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def until(check: Callable[[], Awaitable[bool]], within: float, what: str) -> None:
    """Poll ``check`` until it holds; fail with ``what`` after ``within`` seconds."""
    try:
        async with asyncio.timeout(within):
            while not await check():  # noqa: ASYNC110 - polls other processes over HTTP
                await asyncio.sleep(0.1)
    except TimeoutError:
        raise AssertionError(what) from None


def is_true(predicate: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return predicate()

    return check


def link_records(journal: Path) -> int:
    with Journal(journal) as opened:
        return sum(1 for _ in opened.records(kinds={"link"}))


# -- what is compared ----------------------------------------------------------------------


async def boards_at(port: int) -> dict[int, dict[str, Any]]:
    answer = await http_get(port, "/status.json")
    assert answer.status == 200, answer
    return {b["board"]: b for b in json.loads(answer.body)["boards"]}


def shown_time(board: dict[str, Any], side: str, at: float) -> float | None:
    """The time a viewer shows for ``side`` at ``at`` (docs/broadcast.md, showing clocks)."""
    value = board[f"{side}_clock"]
    if value is None:
        return None
    if board["running"] != side or board["clock_at"] is None:
        return float(value)
    return float(value) - (at - float(board["clock_at"]))


def without_clocks(board: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in board.items() if name not in CLOCK_FIELDS}


def same_board(relayed: dict[str, Any], live: dict[str, Any]) -> bool:
    """Everything equal; clocks as a viewer would show them (within the feed's 1.5 s)."""
    if without_clocks(relayed) != without_clocks(live):
        return False
    at = live["clock_at"] or 0.0
    for side in ("white", "black"):
        one, two = shown_time(relayed, side, at), shown_time(live, side, at)
        if one is None or two is None:
            if one is not two:
                return False
        elif abs(one - two) > 1.5:
            return False
    return True


async def relay_matches_daemons(event: Event, port: int) -> bool:
    live: dict[int, dict[str, Any]] = {}
    for started in event.daemons.values():
        live.update(await boards_at(started.port))
    relayed = await boards_at(port)
    if sorted(relayed) != sorted(live) or not all(same_board(relayed[b], live[b]) for b in live):
        return False
    for hall, numbers in HALLS.items():
        for board in numbers:
            mine = await http_get(port, f"/board/{board}.pgn")
            theirs = await http_get(event.daemons[hall].port, f"/board/{board}.pgn")
            if mine.body != theirs.body:
                return False
    return True


def open_alerts(event: Event) -> set[int]:
    """The relay ids of every alert the daemons' journals leave open."""
    ids = set()
    for hall in HALLS:
        opened = journal_open_alerts(event.journal(hall))
        ids |= {relay_alert_id(alert["board"], i, hall) for i, alert in opened.items()}
    return ids


# -- the scenario ----------------------------------------------------------------------------------


async def restart_relay2(event: Event) -> None:
    await asyncio.sleep(0.5)  # the games under way
    assert event.relay2 is not None
    await stop_process(event.relay2.process, kill=True)
    await event.start_relay2()


def alert_kinds(journal: Path) -> list[str]:
    with Journal(journal) as opened:
        return [r.payload["alert"]["kind"] for r in opened.records(kinds={"alert"})]


def board_2_back(journal: Path) -> bool:
    """Board 2's offline alert resolved: it answers again."""
    return any(
        (alert["board"], alert["kind"], alert["state"]) == (2, "board_offline", "resolved")
        for alert in journal_alerts(journal).values()
    )


async def broker_away(event: Event) -> None:
    """The broker stops; meanwhile e-board 2 is unplugged and plugged in again."""
    await asyncio.sleep(0.5)
    await asyncio.to_thread(event.broker.stop)
    kinds = is_true(lambda: board_2_back(event.journal("hall-a")))
    event.boards[2].unplug()
    await until(is_true(lambda: "board_offline" in alert_kinds(event.journal("hall-a"))), 10, "")
    await event.boards[2].replug()
    await until(kinds, 15, "board 2 back while the broker is away")
    await asyncio.to_thread(event.broker.start)


def result_signalled(journal: Path, board: int) -> bool:
    """The board's kings gesture raised its alert (it must stand 2 s first)."""
    return any(
        (alert["board"], alert["kind"]) == (board, "result_signalled")
        for alert in journal_alerts(journal).values()
    )


async def restart_hall_b(event: Event) -> None:
    links = link_records(event.journal("hall-b"))
    await event.kill("hall-b")
    await event.start("hall-b")
    await until(is_true(lambda: link_records(event.journal("hall-b")) > links), 20, "board 3 back")


async def play_with_kills(event: Event) -> None:
    """The games, with a relay killed, a daemon killed and the broker restarted meanwhile."""
    await asyncio.gather(
        event.play(1, 0, 8),
        event.play(2, 0, 8),
        event.play(3, 0, 8),
        event.play(4, 0, 6),
        restart_relay2(event),
    )
    await until(is_true(lambda: event.moves_journalled("hall-b", 3) == 8), 15, "board 3 at ply 8")
    await asyncio.gather(
        event.play(1, 8, 14),
        event.play(2, 8, 16),
        event.play(4, 6, 10),
        restart_hall_b(event),
    )
    await asyncio.gather(
        event.play(1, 14, 20, gesture=True), event.play(3, 8, 16), broker_away(event)
    )
    signalled = is_true(lambda: result_signalled(event.journal("hall-a"), 1))
    await until(signalled, 10, "board 1's result gesture signalled")


async def commands_through_relays(event: Event, r1: Relay) -> None:
    """Acknowledge and confirm on r1; a result for a daemon that is down, on r2."""
    await until(is_true(lambda: bool(r1.hub.open_alerts())), 20, "an alert on r1")
    async with Arbiter.connected(r1.server.port) as arbiter:
        first = min(arbiter.alerts)
        assert (await arbiter.command({"type": "ack_alert", "id": first}))["type"] == "ok"
        confirm = await arbiter.command({"type": "confirm_result", "board": 4})
        assert confirm["type"] == "ok", confirm
    await event.kill("hall-c")
    await until(is_true(lambda: not r1.view.is_online("hall-c")), 10, "hall-c offline on r1")
    assert event.relay2 is not None
    async with Arbiter.connected(event.relay2.port) as arbiter:
        queued = await arbiter.command({"type": "set_result", "board": 5, "result": "+-"})
    assert queued["details"] == {"queued": True, "daemon": "hall-c"}, queued
    await event.start("hall-c")

    def board_5_done() -> bool:
        state = r1.hub.state(5)
        return state is not None and state.result == "+-"

    await until(is_true(board_5_done), 20, "the queued result carried out")


async def check_clash_is_refused(event: Event) -> None:
    folder = event.folder / "hall-d"
    folder.mkdir()
    specs = [BoardSpec(3, None), BoardSpec(6, None)]
    config = write_config(folder, specs, extra=mqtt_table(event.broker, "hall-d", KEY))
    process = await asyncio.create_subprocess_exec(
        *dgtcast_run(config),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 20)
    assert process.returncode == 2
    assert err.decode().splitlines()[-1] == (
        f'{config}: mqtt: board 3 already belongs to daemon "hall-b", online on the broker:'
        " give each daemon its own boards"
    )


def knows_every_move(spectator: Spectator, event: Event) -> Callable[[], bool]:
    return lambda: all(spectator.moves(b) == event.expected(b) for b in event.games)


async def watch_the_event(event: Event, r1: Relay) -> list[Spectator]:
    """Spectators on both relays while the games are played; then the commands, and
    meanwhile a daemon claiming hall-b's board is refused."""
    s1 = Spectator(f"ws://127.0.0.1:{r1.server.port}/ws")
    s2 = Spectator(f"ws://127.0.0.1:{event.relay2_port}/ws")
    async with following(s1, s2):
        await s1.wait_for(lambda: len(s1.boards) == 5, 15, "every board on r1")
        await play_with_kills(event)
        for spectator in (s1, s2):
            await spectator.wait_for(knows_every_move(spectator, event), 20, "every move")
        await asyncio.gather(commands_through_relays(event, r1), check_clash_is_refused(event))
    assert s2.connections >= 2  # r2 was killed: its spectator came back (and resumed)
    return [s1, s2]


async def relays_show_what_daemons_show(event: Event, r1: Relay) -> None:
    for port in (r1.server.port, event.relay2_port):
        await until(functools.partial(relay_matches_daemons, event, port), 15, f":{port} = daemons")
    expected = open_alerts(event)
    assert expected  # board 2's offline alert resolved when it came back: not among them
    assert {alert.id for alert in r1.hub.open_alerts()} == expected
    async with Arbiter.connected(event.relay2_port) as arbiter:
        assert set(arbiter.alerts) == expected


async def test_three_daemons_two_relays_through_kills_and_a_broker_restart(
    tmp_path: Path, mosquitto: Mosquitto, games_dir: Path
) -> None:
    async with emulated((1, 2, 3, 4)) as boards:
        event = Event(tmp_path, mosquitto, boards, games_of(games_dir), relay2_port=free_port())
        event.write_configs()
        try:
            await asyncio.gather(*(event.start(hall) for hall in HALLS), event.start_relay2())
            async with running_relay(relay_settings(mosquitto, "r1", KEY)) as r1:
                spectators = await watch_the_event(event, r1)
                await relays_show_what_daemons_show(event, r1)
        finally:
            running = [*event.daemons.values(), *([event.relay2] if event.relay2 else [])]
            codes = [await stop_process(started.process) for started in running]
    assert codes == [0] * len(running)
    for spectator in spectators:
        assert spectator.violations == [], spectator.violations
        assert {b: spectator.moves(b) for b in event.games} == {
            b: event.expected(b) for b in event.games
        }
    for hall, numbers in HALLS.items():
        for board in set(numbers) & set(event.games):
            line = journal_moves(event.journal(hall), board)
            assert [move["uci"] for move in line] == event.expected(board)
