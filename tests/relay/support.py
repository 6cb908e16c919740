"""Helpers of the relay tests: configurations, processes, spectators and arbiters."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from base.backoff import BackoffPolicy
from broadcast.feed.signing import EventKey
from broadcast.outputs.mqtt_client import MqttSettings
from broadcast.relay.server import Relay, RelaySettings
from daemon.journal.store import Journal
from tests.daemon.support import second_half
from tests.mosquitto import Mosquitto
from tests.serving import serving

__all__ = [
    "KEY",
    "PREFIX",
    "TOKEN",
    "Arbiter",
    "Spectator",
    "journal_alerts",
    "journal_open_alerts",
    "mqtt_table",
    "relay_file",
    "relay_settings",
    "running_relay",
    "second_half",
]

PREFIX = "event"
TOKEN = "arbiter-secret"
#: The event key of the tests that sign (``[mqtt] event_key``).
KEY = "the-event-key-of-open-2026"


def mqtt_table(broker: Mosquitto, daemon_id: str, key: str | None = None) -> str:
    """The ``[mqtt]`` table of a daemon on ``broker`` (signing with ``key``)."""
    return (
        f'\n[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\nprefix = "{PREFIX}"\n'
        f'daemon_id = "{daemon_id}"\n' + ("" if key is None else f'event_key = "{key}"\n')
    )


def relay_file(
    folder: Path, broker: Mosquitto, relay_id: str, extra: str = "", key: str | None = None
) -> Path:
    """A relay's configuration file (with ``key`` as its event key)."""
    folder.mkdir(parents=True, exist_ok=True)
    signing = "" if key is None else f'event_key = "{key}"\n'
    text = (
        f'[server]\nhost = "127.0.0.1"\nport = 8080\narbiter_token = "{TOKEN}"\n\n'
        f'[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\nprefix = "{PREFIX}"\n{signing}\n'
        f'[relay]\nid = "{relay_id}"\ncommand_timeout = "5s"\n{extra}'
    )
    path = folder / "relay.toml"
    path.write_text(text)
    return path


def relay_settings(
    broker: Mosquitto, relay_id: str, key: str | None = None, **changes: Any
) -> RelaySettings:
    """An in-process relay on a free port, reconnecting fast (with ``key`` as its event key)."""
    mqtt = MqttSettings(
        event_key=None if key is None else EventKey(key),
        host="127.0.0.1",
        port=broker.port,
        prefix=PREFIX,
        daemon_id=relay_id,
        keepalive=5,
        retry=BackoffPolicy(initial=0.05, maximum=0.5),
        time_limit=5.0,
    )
    base = RelaySettings(mqtt=mqtt, port=0, arbiter_token=TOKEN, command_timeout=5.0)
    return replace(base, **changes)


def running_relay(settings: RelaySettings) -> contextlib.AbstractAsyncContextManager[Relay]:
    """A relay serving until the block ends."""
    return serving(Relay(settings))


def journal_alerts(path: Path) -> dict[int, dict[str, Any]]:
    """The latest version of every alert in a daemon's journal, by the daemon's own id."""
    latest: dict[int, dict[str, Any]] = {}
    with Journal(path, read_only=True) as journal:
        for record in journal.records(kinds={"alert"}):
            alert = record.payload["alert"]
            latest[alert["id"]] = alert
    return latest


def journal_open_alerts(path: Path) -> dict[int, dict[str, Any]]:
    """The alerts a daemon's journal leaves open, by the daemon's own id."""
    return {i: a for i, a in journal_alerts(path).items() if a["state"] == "open"}


@dataclass
class Spectator:
    """A ``/ws`` client that reconnects (resuming) and checks what it is told.

    Every board's moves may only grow: a snapshot or event that changes a move already
    seen, or loses one, is a violation; so is a gap in the sequence numbers.
    """

    url: str
    boards: dict[int, dict[str, Any]] = field(default_factory=dict)
    seq: int | None = None
    snapshots: int = 0
    connections: int = 0
    violations: list[str] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def moves(self, board: int) -> list[str]:
        """The board's moves as UCI."""
        state = self.boards.get(board)
        return [] if state is None else [m["uci"] for m in state["moves"]]

    async def run(self) -> None:
        """Follow the feed until cancelled, reconnecting after each loss."""
        while True:
            since = "" if self.seq is None else f"?since={self.seq}"
            with contextlib.suppress(OSError, ConnectionClosed, InvalidHandshake, TimeoutError):
                async with connect(self.url + since, open_timeout=2) as ws:
                    self.connections += 1
                    async for text in ws:
                        assert isinstance(text, str)
                        self.receive(json.loads(text))
            await asyncio.sleep(0.05)

    def receive(self, message: dict[str, Any]) -> None:
        """Apply one feed message."""
        kind = message["type"]
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if kind == "snapshot":
            self._receive_snapshot(message)
        elif kind not in ("resumed", "pong"):
            if message["seq"] != (self.seq or 0) + 1:
                self.violations.append(f"seq {message['seq']} after {self.seq}")
            self.seq = message["seq"]
            self._receive_event(kind, message)
        self.changed.set()

    def _receive_snapshot(self, message: dict[str, Any]) -> None:
        self.snapshots += 1
        self.seq = message["seq"]
        for state in message["boards"]:
            self._check_grows(state["board"], [m["uci"] for m in state["moves"]], "snapshot")
            self.boards[state["board"]] = state

    def _receive_event(self, kind: str, message: dict[str, Any]) -> None:
        board = message["board"]
        if kind == "board":
            new = message["state"]
            self._check_grows(board, [m["uci"] for m in new["moves"]], "board event")
            self.boards[board] = new
            return
        state = self.boards[board]
        if kind in ("move", "correction", "takeback"):
            if kind == "move" and len(state["moves"]) != message["ply"]:
                self.violations.append(f"board {board}: move at ply {message['ply']}")
            if kind != "move":
                self.violations.append(f"board {board}: {kind} at ply {message['ply']}")
            state["moves"] = state["moves"][: message["ply"]] + message.get("moves", [])
            state["fen"], state["last_move"] = message["fen"], message["last_move"]
            return
        fields = {
            "clock": ("white_clock", "black_clock", "running", "clock_at"),
            "result": ("result", "result_final"),
            "status": ("status",),
        }[kind]
        state.update({name: message[name] for name in fields})

    def _check_grows(self, board: int, moves: list[str], where: str) -> None:
        known = self.moves(board)
        if moves[: len(known)] != known:
            self.violations.append(f"board {board}: {where} changed seen moves {known} → {moves}")

    async def wait_for(self, condition: Callable[[], bool], time_limit: float, what: str) -> None:
        """Wait until ``condition`` holds; fail with ``what`` after ``time_limit`` seconds."""
        try:
            async with asyncio.timeout(time_limit):
                while not condition():
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            raise AssertionError(f"{self.url}: {what}; boards {self.summary()}") from None

    def summary(self) -> dict[int, int]:
        """Plies known per board."""
        return {board: len(state["moves"]) for board, state in sorted(self.boards.items())}


class Arbiter:
    """An authenticated ``/ws/arbiter`` client that sends commands and reads alerts."""

    def __init__(self, ws: ClientConnection, snapshot: dict[str, Any]) -> None:
        self.ws = ws
        self.snapshot = snapshot
        self.alerts: dict[int, dict[str, Any]] = {a["id"]: a for a in snapshot["alerts"]}
        self._refs = 0

    @classmethod
    @contextlib.asynccontextmanager
    async def connected(cls, port: int) -> AsyncIterator[Arbiter]:
        """Connect to ``port`` and authenticate."""
        async with connect(f"ws://127.0.0.1:{port}/ws/arbiter") as ws:
            await ws.send(json.dumps({"type": "auth", "token": TOKEN}))
            async with asyncio.timeout(5):
                snapshot = json.loads(await ws.recv())
            assert snapshot["type"] == "snapshot", snapshot
            yield cls(ws, snapshot)

    async def command(self, command: dict[str, Any], time_limit: float = 15.0) -> dict[str, Any]:
        """Send ``command`` and return its answer (alerts seen meanwhile are kept)."""
        self._refs += 1
        ref = f"r{self._refs}"
        await self.ws.send(json.dumps({**command, "ref": ref}))
        async with asyncio.timeout(time_limit):
            while True:
                message = json.loads(await self.ws.recv())
                if message.get("ref") == ref:
                    return dict(message)
                if message["type"] == "alert":
                    self.alerts[message["id"]] = message
