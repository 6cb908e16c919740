"""Games on emulated e-boards for daemon tests: boards plugged in by serial, rounds played."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path

import chess.pgn

from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from tests.relay.support import Arbiter
from tests.waiting import wait_until

__all__ = ["next_round_after_cables_out", "open_alerts", "pgn_game", "play_round", "plugged"]


def pgn_game(text: str) -> chess.pgn.Game:
    """The game of PGN ``text``."""
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    return game


@contextlib.asynccontextmanager
async def plugged(
    places: Mapping[int, Path], serials: Mapping[int, str], clock: ClockSettings, *, seed: int = 0
) -> AsyncIterator[dict[int, EmulatedBoard]]:
    """Board number to an emulated e-board at its place (device path) with its serial
    number, seeded ``number + seed``; unplugged on exit."""
    async with contextlib.AsyncExitStack() as stack:
        yield {
            number: await stack.enter_async_context(
                EmulatedBoard(
                    path=place,
                    clock=clock,
                    seed=number + seed,
                    identity=BoardIdentity.from_serial(serials[number]),
                )
            )
            for number, place in places.items()
        }


async def play_round(daemon: Daemon, boards: Mapping[int, EmulatedBoard], text: str) -> None:
    """Every board, once online, plays the game of PGN ``text``; returns when the daemon
    has its result on each."""
    for number in boards:
        await wait_until(daemon.sessions[number].online.is_set, 20, f"board {number} online")
    await asyncio.gather(*(board.play(pgn_game(text), speed=20) for board in boards.values()))
    result = pgn_game(text).headers["Result"]

    def decided() -> bool:
        states = [daemon.core.engine.result_of(n) for n in boards]
        return all(s is not None and s.result == result for s in states)

    await wait_until(decided, 20, f"every game ends {result}")


def open_alerts(daemon: Daemon) -> list[tuple[int, str]]:
    """Each open alert of ``daemon`` as (board, kind)."""
    return [(a.board, a.kind.value) for a in daemon.core.engine.open_alerts]


async def next_round_after_cables_out(
    daemon: Daemon, round_number: int, boards: Iterable[int], *, within: float
) -> None:
    """Cables out: every one of ``boards`` offline (waited for up to ``within`` seconds);
    then every section moves on over the arbiter channel."""
    offline = [(board, "board_offline") for board in sorted(boards)]
    await wait_until(lambda: sorted(open_alerts(daemon)) == offline, within, "every board offline")
    async with Arbiter.connected(daemon.server.port) as arbiter:
        reply = await arbiter.command({"type": "next_round"})
    assert reply["type"] == "ok", reply
    assert daemon.core.board_state(1, 0.0).round == f"{round_number + 1}.1"
