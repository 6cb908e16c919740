"""Spectators served and latency through the MQTT broker, with one relay and with two.

Run ``.venv/bin/python bench/relay.py [--boards 10] [--seconds 20] [--spectators 200]``.

Each run starts, on this machine and over loopback only, in their own processes:

* **broker**: mosquitto (as the tests start it: persistence on, a free port);
* **farm**: N e-boards with clocks on ptys playing real games at blitz pace
  (:func:`farm.serve_farm`, as ``bench/latency.py``);
* **daemon**: :class:`~daemon.shell.app.Daemon` serving the round and publishing it to the
  broker (``[mqtt]``, retained board states, QoS 1);
* **relays**: 1, then 2 :class:`~broadcast.relay.server.Relay` processes following the broker;
* per relay, **crowd**: ``--spectators`` idle websocket spectators reading every frame,
  and **watch**: one measuring spectator; one more watch on the daemon itself, the
  baseline without broker and relay.

Latency is timed as in ``bench/latency.py``: from the moment the farm handed the last
serial byte of a move (the clock message whose running side changed) to the pty, to the
moment a watch received the ``move`` event naming that board and ply (``time.monotonic()``,
one clock for every process). Through a relay the span adds the publisher's MQTT
round trip (QoS 1, one message acknowledged at a time), the broker, the relay's
subscription, its hub and its websocket send. Moves of the first ``--warmup`` seconds
are not counted; a move that never arrives counts as lost.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import (
    ROOT,
    Child,
    machine,
    median,
    percentile,
    process_cpu_seconds,
    process_rss_kib,
    raise_fd_limit,
    send_line,
    stdin_lines,
    write_round_config,
)
from farm import serve_farm
from latency import idle_crowd, match_moves, watch_feed

from broadcast.outputs.mqtt_client import MqttSettings
from broadcast.relay.server import Relay, RelaySettings
from daemon.shell.app import Daemon, DaemonOptions

sys.path.insert(0, str(ROOT))
from tests.mosquitto import Mosquitto

__all__ = ["PathFigures", "RelayRun", "main", "measure"]

PREFIX = "bench"
GRACE = 3.0


# --- The children ------------------------------------------------------------------------------


async def _farm(args: argparse.Namespace) -> None:
    await serve_farm(args.boards, Path(args.folder), args.seed)


async def _serve(make: Any) -> None:
    """Run ``make()`` (a daemon or a relay) until stdin closes; say its port first."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s %(message)s")
    raise_fd_limit()
    server = await make()
    await server.start()
    stop = asyncio.Event()
    task = asyncio.create_task(server.run(stop))
    send_line({"port": server.server.port})
    async for _ in stdin_lines():
        pass
    stop.set()
    await task


async def _daemon(args: argparse.Namespace) -> None:
    await _serve(lambda: Daemon.open(args.config, DaemonOptions(port=0)))


async def _relay(args: argparse.Namespace) -> None:
    mqtt = MqttSettings(host="127.0.0.1", port=args.broker, prefix=PREFIX, daemon_id=args.relay_id)

    async def make() -> Relay:
        return Relay(RelaySettings(mqtt=mqtt, port=0))

    await _serve(make)


# --- Measuring ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PathFigures:
    """Latency of one measuring spectator (through a relay, or on the daemon)."""

    name: str
    latencies: list[float]
    lost: int
    wrong: int

    def line(self) -> str:
        """One line of text."""
        values = self.latencies + [float("inf")] * self.lost
        return (
            f"  {self.name:<10} median {median(values) * 1000:6.1f} ms, "
            f"p99 {percentile(values, 0.99) * 1000:6.1f} ms, "
            f"max {percentile(values, 1.0) * 1000:6.1f} ms over {len(values)} moves "
            f"({self.lost} lost, {self.wrong} misread)"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RelayRun:
    """The figures of one run."""

    relays: int
    boards: int
    spectators: int  # connected to the relays, the measuring ones included
    paths: list[PathFigures]
    relay_cpu: list[float]  # cores, while playing
    relay_rss_kib: list[int]

    def summary(self) -> str:
        """A few lines of text."""
        cpu = ", ".join(f"{c:.0%}" for c in self.relay_cpu)
        rss = ", ".join(f"{r / 1024:.0f} MiB" for r in self.relay_rss_kib)
        head = (
            f"{self.relays} relay(s), {self.boards} boards, {self.spectators} spectators served"
            f" by the relays; relay CPU {cpu} of a core, RSS {rss}"
        )
        return "\n".join([head, *(path.line() for path in self.paths)])


@dataclass(frozen=True, slots=True, kw_only=True)
class Load:
    """One run: ``relays`` relays, ``spectators`` idle spectators on each."""

    relays: int
    boards: int
    seconds: float
    spectators: int
    warmup: float = 5.0
    seed: int = 1


async def measure(load: Load) -> RelayRun:
    """Start everything, play, match the moves of every measuring spectator."""
    with tempfile.TemporaryDirectory(prefix="dgtcast-relay-bench-") as folder:
        work = Path(folder)
        with Mosquitto(work / "broker") as broker:
            children: list[Child] = []
            try:
                return await _run(load, work, broker, children)
            finally:
                for child in children:
                    await child.finish()


async def _start(children: list[Child], work: Path, name: str, role: str, **options: Any) -> Child:
    """A child ``relay.py --role <role> --<option> <value> ...``, logging to ``<name>.log``."""
    args = ["--role", role]
    for option, value in options.items():
        args += [f"--{option.replace('_', '-')}", str(value)]
    child = await Child.start("relay.py", args, work / f"{name}.log")
    children.insert(0, child)
    return child


async def _run(load: Load, work: Path, broker: Mosquitto, children: list[Child]) -> RelayRun:
    farm = await _start(
        children, work, "farm", "farm", boards=load.boards, folder=work, seed=load.seed
    )
    config = write_round_config(work, (await farm.receive(60))["ports"])
    with config.open("a") as text:
        text.write(f'\n[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\nprefix = "{PREFIX}"\n')
        text.write('daemon_id = "bench-daemon"\n')
    daemon = await _start(children, work, "daemon", "daemon", config=config)
    ports = {"daemon": (await daemon.receive(60))["port"]}
    relays = []
    for n in range(1, load.relays + 1):
        relay = await _start(
            children, work, f"relay-{n}", "relay", broker=broker.port, relay_id=f"r{n}"
        )
        relays.append(relay)
        port = ports[f"relay {n}"] = (await relay.receive(60))["port"]
        crowd = await _start(
            children, work, f"crowd-{n}", "crowd", port=port, spectators=load.spectators
        )
        await crowd.receive(60 + load.spectators * 0.02)
    watches = {
        name: await _start(
            children,
            work,
            f"watch-{name.replace(' ', '-')}",
            "watch",
            port=port,
            boards=load.boards,
        )
        for name, port in ports.items()
    }
    for watch in watches.values():
        await watch.receive(60 + load.boards * 0.2)
    return await _play(load, farm, relays, watches)


async def _play(
    load: Load, farm: Child, relays: list[Child], watches: dict[str, Child]
) -> RelayRun:
    cpu = [process_cpu_seconds(relay.pid) for relay in relays]
    farm.send({"go": load.seconds, "stagger": 3.0})
    played = await farm.receive(load.seconds + 60)
    await asyncio.sleep(GRACE)
    cpu = [
        (process_cpu_seconds(r.pid) - before) / (load.seconds + GRACE)
        for r, before in zip(relays, cpu, strict=True)
    ]
    rss = [process_rss_kib(relay.pid) for relay in relays]
    paths = []
    for name, watch in watches.items():
        watch.send({"stop": True})
        arrivals = (await watch.receive(60))["moves"]
        latencies, lost, wrong = match_moves(
            played["presses"], arrivals, played["go"] + load.warmup
        )
        paths.append(PathFigures(name=name, latencies=latencies, lost=lost, wrong=wrong))
    return RelayRun(
        relays=load.relays,
        boards=load.boards,
        spectators=load.relays * (load.spectators + 1),
        paths=paths,
        relay_cpu=cpu,
        relay_rss_kib=rss,
    )


# --- Command line ---------------------------------------------------------------------------


_ROLES = {
    "farm": _farm,
    "daemon": _daemon,
    "relay": _relay,
    "crowd": idle_crowd,
    "watch": watch_feed,
}


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--boards", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0, help="play time per run")
    parser.add_argument("--spectators", type=int, default=200, help="idle spectators per relay")
    parser.add_argument("--relays", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--role", choices=sorted(_ROLES), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--broker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--relay-id", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run a role (in a child), or measure with each relay count (the command line)."""
    args = _parse(argv)
    if args.role is not None:
        asyncio.run(_ROLES[args.role](args))
        return 0
    print(machine(), flush=True)
    for relays in args.relays:
        load = Load(
            relays=relays, boards=args.boards, seconds=args.seconds, spectators=args.spectators
        )
        print(asyncio.run(measure(load)).summary(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
