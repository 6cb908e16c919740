#!/usr/bin/env -S sh -c 'exec "$(dirname "$0")/../.venv/bin/python" "$0" "$@"'

"""MQTT traffic of a running round: bytes a minute the broker receives from one daemon.

``bench/mqtt_traffic.py [--boards 6] [--seconds 60]`` starts mosquitto (as the tests do,
on a free loopback port), a daemon with ``--boards`` emulated e-boards playing real games
with human timings and running clocks (90 min + 30 s), and a subscriber to
``dgtcast/#``. After every board's clock runs, it counts for ``--seconds`` what the
subscriber receives (topic + payload bytes, by topic leaf) and prints it scaled to one
minute. Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import logging
import sys
import tempfile
import time
from pathlib import Path

import aiomqtt
import chess.pgn
from common import ROOT, shared_dir

from daemon.shell.app import Daemon, DaemonOptions
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard

sys.path.insert(0, str(ROOT))
from tests.mosquitto import Mosquitto


def _games(count: int) -> list[chess.pgn.Game]:
    games: list[chess.pgn.Game] = []
    for path in sorted((shared_dir() / "data" / "games").glob("*.pgn")):
        with path.open() as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                if len(list(game.mainline_moves())) >= 40:
                    games.append(game)
    return [games[i % len(games)] for i in range(count)]


def _config(folder: Path, ports: list[str], broker: int) -> Path:
    lines = [
        '[event]\nname = "Traffic"\nround = 1\ntime_control = "5400+30"\ndefault_time = "1h"\n',
        '[server]\nhost = "127.0.0.1"\nport = 8080\n',
        f'[storage]\npath = "{folder / "journal.db"}"\n',
        f'[mqtt]\nhost = "127.0.0.1"\nport = {broker}\ndaemon_id = "bench"\n',
    ]
    for number, port in enumerate(ports, start=1):
        lines.append(
            f'[[boards]]\nnumber = {number}\nport = "{port}"\n'
            f'white = "White {number}"\nblack = "Black {number}"\n'
        )
    path = folder / "round.toml"
    path.write_text("\n".join(lines))
    return path


class Counter:
    """What the subscriber received, by topic leaf, while counting."""

    def __init__(self) -> None:
        self.counting = False
        self.bytes: collections.Counter[str] = collections.Counter()
        self.messages: collections.Counter[str] = collections.Counter()

    def receive(self, topic: str, payload: bytes) -> None:
        if self.counting:
            leaf = topic.split("/")[-1] if "/board/" in topic else topic.split("/", 1)[1]
            self.bytes[leaf] += len(topic) + len(payload)
            self.messages[leaf] += 1


async def _subscribe(port: int, counter: Counter, ready: asyncio.Event) -> None:
    async with aiomqtt.Client("127.0.0.1", port, identifier="bench-traffic") as client:
        await client.subscribe("dgtcast/#", qos=1)
        ready.set()
        async for message in client.messages:
            payload = message.payload
            if isinstance(payload, bytes | bytearray):
                counter.receive(message.topic.value, bytes(payload))


async def measure(boards: int, seconds: float) -> Counter:
    """Play ``boards`` games and count the broker's traffic for ``seconds``."""
    counter = Counter()
    with tempfile.TemporaryDirectory(prefix="dgtcast-mqtt-bench-") as folder:
        work = Path(folder)
        with Mosquitto(work / "broker") as broker:
            ready = asyncio.Event()
            subscriber = asyncio.create_task(_subscribe(broker.port, counter, ready))
            await asyncio.wait_for(ready.wait(), 10)
            clock = ClockSettings.from_text("90+30")
            emulated = [EmulatedBoard(clock=clock, seed=n) for n in range(boards)]
            for board in emulated:
                await board.__aenter__()
            try:
                config = _config(work, [str(b.path) for b in emulated], broker.port)
                daemon = await Daemon.open(config, DaemonOptions(port=0))
                await daemon.start()
                stop = asyncio.Event()
                running = asyncio.create_task(daemon.run(stop))
                plays = [
                    asyncio.create_task(b.play(g, speed=1.0))
                    for b, g in zip(emulated, _games(boards), strict=True)
                ]
                await asyncio.sleep(10)  # every clock started, first moves made
                counter.counting = True
                started = time.monotonic()
                await asyncio.sleep(seconds)
                counter.counting = False
                elapsed = time.monotonic() - started
                for play in plays:
                    play.cancel()
                stop.set()
                await asyncio.wait_for(running, 15)
            finally:
                for board in emulated:
                    await board.__aexit__(None, None, None)
                subscriber.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await subscriber
    scale = 60.0 / elapsed
    for leaf in counter.bytes:
        counter.bytes[leaf] = round(counter.bytes[leaf] * scale)
        counter.messages[leaf] = round(counter.messages[leaf] * scale)
    return counter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    counter = asyncio.run(measure(args.boards, args.seconds))
    total = sum(counter.bytes.values())
    print(
        f"MQTT traffic, {args.boards} boards, per minute: {total:,} bytes,"
        f" {sum(counter.messages.values()):,} messages"
    )
    for leaf, count in counter.bytes.most_common():
        print(f"  {leaf:<16} {count:>10,} bytes {counter.messages[leaf]:>6,} messages")


if __name__ == "__main__":
    main()
