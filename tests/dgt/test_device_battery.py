"""The battery asked during the round, over a pty against the emulator (docs/protocol.md
§4.1): a Bluetooth board's level comes with the other events and never disturbs the
move and clock stream or the memory dump; a USB board's silence costs two bytes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from drivers.dgt.aio.device import DgtDevice
from drivers.dgt.battery import BATTERY_MISSES
from drivers.dgt.commands import RequestBattery, RequestEEMoves
from drivers.dgt.device_core import DeviceTimeouts
from drivers.dgt.events import BatteryStatus, BoardDump, ClockTimes, EEMoves, Event, FieldUpdated
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from tests.emulator.support import read_game

#: Battery asked every 0.2 s: many requests during a short game.
TIMEOUTS = DeviceTimeouts(reply=1.0, long_serial=0.5, clock_ack=0.25, quiet=5.0, battery=0.2)
WAIT = 20.0  # upper bound for a condition; never reached when things work


class Heard:
    """Every event the driver handed out, and the sensed squares."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.squares: list[int] | None = None

    def receive(self, batch: list[tuple[float, Event]]) -> None:
        for _, event in batch:
            self.events.append(event)
            if isinstance(event, BoardDump):
                self.squares = list(event.squares)
            elif isinstance(event, FieldUpdated) and self.squares is not None:
                self.squares[event.field] = event.piece

    def levels(self) -> list[int]:
        return [e.percent for e in self.events if isinstance(e, BatteryStatus)]


async def read_until(device: DgtDevice, heard: Heard, done: Callable[[], bool]) -> None:
    async with asyncio.timeout(WAIT):
        while not done():
            heard.receive(await device.events_received())


def asked(board: EmulatedBoard) -> int:
    return sum(isinstance(c, RequestBattery) for c in board.firmware.commands)


async def test_a_bluetooth_board_reports_its_level_while_a_game_streams_on(
    games_dir: Path,
) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")
    identity = BoardIdentity().bluetooth(84)
    async with EmulatedBoard(identity=identity, baud=9600, seed=5) as board:
        device = await DgtDevice.open(str(board.path), timeouts=TIMEOUTS)
        try:
            await device.handshake()
            heard = Heard()
            await read_until(device, heard, lambda: 84 in heard.levels())
            playing = asyncio.create_task(board.play(game, speed=40, plies=16, noise=0.0))
            while not playing.done():
                heard.receive(await device.events_received())
            await playing
            board.firmware.identity = identity.bluetooth(61, charging=True)
            await read_until(device, heard, lambda: 61 in heard.levels())
            await read_until(device, heard, lambda: heard.squares == list(board.physical.fields()))
        finally:
            await device.close()
    statuses = [e for e in heard.events if isinstance(e, BatteryStatus)]
    assert len(statuses) >= 3
    assert statuses[-1].charging
    assert not statuses[0].charging
    assert device.link.protocol.violations == 0
    assert any(isinstance(e, ClockTimes) and e.running for e in heard.events)
    assert asked(board) >= 3


async def test_a_usb_board_is_asked_twice_then_left_alone() -> None:
    async with EmulatedBoard(baud=9600) as board:
        device = await DgtDevice.open(str(board.path), timeouts=TIMEOUTS)
        try:
            await device.handshake()
            heard = Heard()
            await read_until(device, heard, lambda: asked(board) >= BATTERY_MISSES)
            await read_until(device, heard, lambda: device.battery_silent)
            # Ten periods and more later (the board keeps streaming its clock):
            board.start_clock()
            loop = asyncio.get_running_loop()
            later = loop.time() + 10 * TIMEOUTS.battery + TIMEOUTS.reply
            await read_until(device, heard, lambda: loop.time() >= later)
        finally:
            await device.close()
    assert asked(board) == BATTERY_MISSES
    assert heard.levels() == []
    assert device.close_reason == "closed by us"  # silence on 0x4C is no link fault


async def test_no_battery_request_reaches_the_board_during_its_memory_dump() -> None:
    fast = DeviceTimeouts(reply=1.0, long_serial=0.5, quiet=5.0, battery=0.05)
    identity = BoardIdentity().bluetooth(77)
    async with EmulatedBoard(identity=identity, baud=9600, memory_size=2500) as board:
        device = await DgtDevice.open(str(board.path), timeouts=fast)
        try:
            await device.handshake()
            heard = Heard()
            await read_until(device, heard, lambda: len(heard.levels()) >= 2)
            device.request_memory()
            dumped = lambda: any(isinstance(e, EEMoves) for e in heard.events)  # noqa: E731
            await read_until(device, heard, dumped)
            received = list(board.firmware.commands)  # what the board got before the dump was in
            before = len(heard.levels())
            await read_until(device, heard, lambda: len(heard.levels()) > before)
        finally:
            await device.close()
    after_request = received[received.index(RequestEEMoves()) + 1 :]
    assert RequestBattery() not in after_request
    dump = next(e for e in heard.events if isinstance(e, EEMoves))
    assert dump.raw == board.firmware.eeprom.dump()
    assert device.link.protocol.violations == 0
