"""The supervisor against the emulator over real ptys: unplug, replug, garbage, a hung board."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import chess
import pytest

from base.backoff import BackoffPolicy
from drivers.dgt.aio.link import DgtLink, LinkClosed
from drivers.dgt.aio.supervisor import (
    BoardSupervisor,
    LinkDown,
    LinkUp,
    Report,
    SerialSightings,
    SupervisorState,
    TimedReport,
)
from drivers.dgt.commands import ClockAscii
from drivers.dgt.device_core import DeviceTimeouts
from drivers.dgt.events import BoardDump, FieldUpdated, ProtocolViolation
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from drivers.emulator.player import Lift, Place
from tests.dgt.test_device import WAIT, game_of
from tests.waiting import wait_until

R = TypeVar("R", bound=Report)

TIMEOUTS = DeviceTimeouts(reply=1.0, long_serial=0.3, clock_ack=0.3, quiet=0.3, probe=0.5)
BACKOFF = BackoffPolicy(initial=0.02, factor=2.0, maximum=0.2)


def supervisor_for(port: str, *, serial: str | None = None) -> BoardSupervisor:
    return BoardSupervisor(port, timeouts=TIMEOUTS, backoff=BACKOFF, serial=serial)


class Reader:
    """Reads a supervisor's reports, remembering all of them."""

    def __init__(self, supervisor: BoardSupervisor) -> None:
        self.reports = supervisor.reports()
        self.seen: list[TimedReport] = []

    async def next(self, kind: type[R]) -> R:
        """Skip to the next report of ``kind``."""
        async with asyncio.timeout(WAIT):
            async for timed in self.reports:
                self.seen.append(timed)
                if isinstance(timed[1], kind):
                    return timed[1]
        raise AssertionError(f"the reports ended before a {kind.__name__}")

    async def rest(self) -> list[Report]:
        """Every report up to the end (after stop)."""
        async with asyncio.timeout(WAIT):
            return [item async for _, item in self.reports]


async def test_unplug_mid_game_then_replug_reconnects_and_resends_the_board(
    board: EmulatedBoard,
) -> None:
    async with supervisor_for(str(board.path)) as supervisor:
        reader = Reader(supervisor)
        up = await reader.next(LinkUp)
        assert (up.serial, up.version, up.long_serial) == ("01025", "1.02", "0000001025")
        assert (await reader.next(BoardDump)).squares == board.physical.fields()
        await board.play(game_of("e4", "e5", "Nf3"), speed=200)
        await reader.next(FieldUpdated)

        board.unplug()
        down = await reader.next(LinkDown)
        assert down.port == up.port
        assert supervisor.device is None
        with pytest.raises(LinkClosed, match="not online"):
            await supervisor.send_clock(ClockAscii(text="x"))
        board.act(Lift(square=chess.B8))  # play goes on while the cable is out: ...Nc6
        board.act(Place(square=chess.C6, piece=chess.Piece.from_symbol("n")))
        await wait_until(lambda: supervisor.counters().failed_connects >= 2)  # backing off

        await board.replug()
        again = await reader.next(LinkUp)
        assert again.serial == "01025"
        dump = await reader.next(BoardDump)
        assert dump.squares == board.physical.fields()
        assert board.physical.piece_at(chess.C6) == chess.Piece.from_symbol("n")
        counters = supervisor.counters()
        assert (counters.connects, counters.disconnects) == (2, 1)
        assert supervisor.state is SupervisorState.ONLINE
    kinds = [type(item) for _, item in reader.seen]
    assert kinds.index(LinkDown) < len(kinds) - 1 - kinds[::-1].index(LinkUp)


async def test_garbage_is_counted_and_the_link_stays_up(board: EmulatedBoard) -> None:
    async with supervisor_for(str(board.path)) as supervisor:
        reader = Reader(supervisor)
        await reader.next(BoardDump)
        board.inject_garbage(b"\x11\x22\x33")
        board.inject_garbage(bytes([0x86, 0x00, 0x43, 0x01, 0x8E]))  # a dump cut short
        await board.play(game_of("c4", "c5"), speed=200)
        await reader.next(ProtocolViolation)
        await reader.next(FieldUpdated)
        assert supervisor.counters().violations >= 2
        ack = await supervisor.send_clock(ClockAscii(text="ok"))
        assert ack.command == 0x0C
        assert supervisor.counters().disconnects == 0
    assert not any(isinstance(item, LinkDown) for _, item in reader.seen)


async def test_a_hung_board_is_noticed_by_the_watchdog_and_reconnected(
    board: EmulatedBoard,
) -> None:
    async with supervisor_for(str(board.path)) as supervisor:
        reader = Reader(supervisor)
        await reader.next(LinkUp)
        board.firmware.power_down()  # the port stays; the board stops answering
        down = await reader.next(LinkDown)
        assert "watchdog" in down.reason
        await wait_until(lambda: supervisor.counters().failed_connects >= 1)
        board.firmware.power_up(board.now())
        await reader.next(LinkUp)
        assert (await reader.next(BoardDump)).squares == board.physical.fields()


async def test_stop_reports_link_down_ends_the_reports_and_frees_the_port(
    board: EmulatedBoard,
) -> None:
    supervisor = supervisor_for(str(board.path))
    async with supervisor:
        reader = Reader(supervisor)
        await reader.next(LinkUp)
    rest = await reader.rest()
    assert isinstance(rest[-1], LinkDown)
    assert rest[-1].reason == "supervisor stopped"
    assert supervisor.state is SupervisorState.STOPPED
    link = await DgtLink.open(str(board.path))  # the port is free again
    await link.close()
    with pytest.raises(RuntimeError, match="once"):
        await supervisor.run()


async def test_a_port_that_never_appears_is_retried_until_stopped(tmp_path: Path) -> None:
    supervisor = supervisor_for(str(tmp_path / "ttyACM0"))
    runner = asyncio.create_task(supervisor.run())
    await wait_until(lambda: supervisor.counters().failed_connects >= 3)
    assert supervisor.state in (SupervisorState.DISCONNECTED, SupervisorState.CONNECTING)
    await supervisor.stop()
    await runner
    assert await Reader(supervisor).rest() == []


@contextlib.contextmanager
def silent_port(path: Path) -> Iterator[None]:
    """A pty at ``path`` that takes bytes and never answers (a modem, a dead board)."""
    master, slave = os.openpty()
    path.symlink_to(os.ttyname(slave))
    try:
        yield
    finally:
        os.close(master)
        os.close(slave)


async def test_discovery_skips_a_silent_port_and_picks_the_board_by_serial(
    tmp_path: Path,
) -> None:
    first = EmulatedBoard(path=tmp_path / "ttyACM1", identity=BoardIdentity(serial="11111"))
    second = EmulatedBoard(path=tmp_path / "ttyACM2", identity=BoardIdentity(serial="22222"))
    with silent_port(tmp_path / "ttyACM0"):
        async with first, second:
            pattern = f"{tmp_path}/ttyACM*"
            async with supervisor_for(pattern) as anyone, supervisor_for(pattern) as other:
                found = {(await Reader(s).next(LinkUp)).serial for s in (anyone, other)}
            assert found == {"11111", "22222"}  # each board once: ports are locked
            async with supervisor_for(pattern, serial="22222") as chosen:
                up = await Reader(chosen).next(LinkUp)
            assert up.serial == "22222"
            assert up.port == str((tmp_path / "ttyACM2").resolve())


def test_boards_by_serial_try_first_where_their_serial_answered() -> None:
    """Two supervisors by serial on the same ports never hold each other's board in turn:
    each tries first the port its serial answered on, last those of other serials."""
    seen = SerialSightings()
    seen.saw("/dev/pts/3", "12388")
    seen.saw("/dev/pts/4", "20455")
    ports = ["/dev/pts/2", "/dev/pts/3", "/dev/pts/4"]
    assert seen.order(ports, "20455") == ["/dev/pts/4", "/dev/pts/2", "/dev/pts/3"]
    assert seen.order(ports, "12388") == ["/dev/pts/3", "/dev/pts/2", "/dev/pts/4"]
    seen.saw("/dev/pts/4", "12388")  # the cables were swapped
    assert seen.order(ports, "12388")[:2] == ["/dev/pts/3", "/dev/pts/4"]
