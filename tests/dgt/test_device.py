"""A connected board against the emulator over a real pty: handshake, events, clock, watchdog."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import chess
import chess.pgn
import pytest

from drivers.dgt.aio.device import DgtDevice
from drivers.dgt.aio.link import ClockRefused, ClockTimeout, HandshakeFailed, LinkClosed
from drivers.dgt.commands import (
    ClockAscii,
    ClockBeep,
    ClockSetAndRun,
    ClockVersion,
    RequestBattery,
    RequestBoard,
    RequestLongSerialNumber,
    RequestSerialNumber,
    RequestVersion,
    Reset,
    StartUpdateNice,
)
from drivers.dgt.device_core import DeviceTimeouts
from drivers.dgt.events import (
    BoardDump,
    ClockAck,
    ClockTimes,
    Event,
    FieldUpdated,
    ProtocolViolation,
    Trademark,
)
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardMode
from drivers.emulator.player import Lift, Place

#: Fast enough for tests, slow enough for a busy 2-core CI machine.
TIMEOUTS = DeviceTimeouts(reply=1.0, long_serial=0.5, clock_ack=0.25, quiet=5.0, probe=1.0)
WAIT = 10.0  # upper bound for a condition to come true; never reached when things work


@pytest.fixture
async def device(board: EmulatedBoard) -> AsyncIterator[DgtDevice]:
    connected = await DgtDevice.open(str(board.path), timeouts=TIMEOUTS)
    await connected.handshake()
    yield connected
    await connected.close()


def game_of(*sans: str) -> chess.pgn.Game:
    board = chess.Board()
    for san in sans:
        board.push_san(san)
    return chess.pgn.Game.from_board(board)


class Sensors:
    """The board as the driver sees it: the last dump with every field update applied."""

    def __init__(self) -> None:
        self.squares: list[int] | None = None
        self.events: list[Event] = []

    def receive(self, events: list[tuple[float, Event]]) -> None:
        for _, event in events:
            self.events.append(event)
            if isinstance(event, BoardDump):
                self.squares = list(event.squares)
            elif isinstance(event, FieldUpdated) and self.squares is not None:
                self.squares[event.field] = event.piece


async def read_until(device: DgtDevice, sensors: Sensors, done: Callable[[], bool]) -> None:
    async with asyncio.timeout(WAIT):
        while not done():
            sensors.receive(await device.events_received())


async def drain(device: DgtDevice) -> None:
    """Read events until the link closes (raises LinkClosed)."""
    async with asyncio.timeout(WAIT):
        while True:
            await device.events_received()


async def test_handshake_identifies_the_board_and_starts_update_nice(
    board: EmulatedBoard, device: DgtDevice
) -> None:
    identity = device.identity
    assert identity is not None
    assert (identity.serial.text, identity.version_text) == ("01025", "1.02")
    assert identity.long_serial is not None
    assert identity.long_serial.text == "0000001025"
    assert identity.board.squares == board.physical.fields()
    sensors = Sensors()  # the clock version ack comes only in update-nice mode (§7.4)
    await read_until(device, sensors, lambda: any(_is_ack(e, 0x09) for e in sensors.events))
    assert board.firmware.mode is BoardMode.UPDATE_NICE
    assert board.firmware.commands[:8] == [
        Reset(),
        RequestVersion(),
        RequestSerialNumber(),
        RequestLongSerialNumber(),
        StartUpdateNice(),  # before the dump: nothing moved in between goes unreported
        RequestBoard(),
        RequestBattery(),  # once at the connection (a USB board: no answer, no harm)
        ClockVersion(),
    ]


async def test_field_updates_follow_the_game_and_clock_times_flow(
    board: EmulatedBoard, device: DgtDevice
) -> None:
    sensors = Sensors()
    sensors.receive(await device.events_received())  # the handshake's replies, dump included
    await board.play(
        game_of("e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Bxc6", "dxc6", "O-O"), speed=200
    )
    await read_until(device, sensors, lambda: sensors.squares == list(board.physical.fields()))
    assert board.physical.placement.king(chess.WHITE) == chess.G1
    assert sum(isinstance(event, FieldUpdated) for event in sensors.events) >= 18
    readings = [event for event in sensors.events if isinstance(event, ClockTimes)]
    assert any(reading.running for reading in readings)


async def test_a_clock_command_is_acked(board: EmulatedBoard, device: DgtDevice) -> None:
    ack = await device.send_clock(ClockAscii(text="board 3"))
    assert (ack.command, ack.is_error) == (0x0C, False)
    assert board.clock.display_text == "board 3 "


async def test_a_lost_ack_is_resent(board: EmulatedBoard, device: DgtDevice) -> None:
    await device.send_clock(ClockAscii(text="ready"))  # the handshake's clock version is done
    board.drop_acks(1)
    ack = await device.send_clock(ClockBeep(duration_ms=128))
    assert ack.command == 0x0B
    assert board.firmware.commands.count(ClockBeep(duration_ms=128)) >= 2
    assert len(board.clock.beeps) >= 2


async def test_a_clock_that_never_acks_times_out_after_three_resends(
    board: EmulatedBoard, device: DgtDevice
) -> None:
    await device.send_clock(ClockAscii(text="ready"))
    board.drop_acks(4)
    with pytest.raises(ClockTimeout, match="4 sends"):
        await device.send_clock(ClockBeep(duration_ms=64))
    assert board.firmware.commands.count(ClockBeep(duration_ms=64)) == 4
    ack = await device.send_clock(ClockAscii(text="again"))  # the queue goes on
    assert ack.command == 0x0C


async def test_set_and_run_outside_mode_23_is_refused(device: DgtDevice) -> None:
    with pytest.raises(ClockRefused, match="ack0 0x40") as refused:
        await device.send_clock(ClockSetAndRun(left_seconds=5400, right_seconds=5400, run="left"))
    assert refused.value.ack.command == 0x0A


async def test_set_and_run_in_mode_23_sets_the_clock() -> None:
    async with EmulatedBoard(clock=ClockSettings(mode=23)) as board:
        device = await DgtDevice.open(str(board.path), timeouts=TIMEOUTS)
        try:
            await device.handshake()
            command = ClockSetAndRun(left_seconds=3725, right_seconds=600, run="paused")
            ack = await device.send_clock(command)
            assert not ack.is_error
            reading = await device.request_clock()
            assert (reading.left.total_seconds, reading.right.total_seconds) == (3725, 600)
            assert not reading.running
        finally:
            await device.close()


async def test_garbage_on_the_line_is_counted_and_events_keep_flowing(
    board: EmulatedBoard, device: DgtDevice
) -> None:
    sensors = Sensors()
    sensors.receive(await device.events_received())
    board.inject_garbage(b"\x01\x02\x03\x8e\x00")  # noise, then a torn field update
    await board.play(game_of("d4", "d5", "c4", "e6"), speed=200)
    board.inject_garbage(b"\x7f\x7f")
    await read_until(device, sensors, lambda: sensors.squares == list(board.physical.fields()))
    assert device.link.protocol.violations >= 2
    assert any(isinstance(event, ProtocolViolation) for event in sensors.events)
    assert device.close_reason is None


async def test_request_helpers_answer(device: DgtDevice) -> None:
    trademark = await device.request_trademark()
    assert isinstance(trademark, Trademark)
    assert "emulated" in trademark.text
    assert (await device.request_board()).squares[:8] == (8, 9, 10, 12, 11, 10, 9, 8)
    assert (await device.request_long_serial_number()).text == "0000001025"


async def test_the_watchdog_probes_a_quiet_line_that_stays_alive(board: EmulatedBoard) -> None:
    timeouts = DeviceTimeouts(reply=1.0, quiet=0.05, probe=1.0)
    device = await DgtDevice.open(str(board.path), timeouts=timeouts)
    try:
        await device.handshake()
        async with asyncio.timeout(WAIT):
            while board.firmware.commands.count(RequestSerialNumber()) < 4:
                await device.events_received()
        assert device.close_reason is None
    finally:
        await device.close()


async def test_the_watchdog_ends_a_silent_line(board: EmulatedBoard) -> None:
    device = await DgtDevice.open(str(board.path), timeouts=_fast_dog())
    try:
        await device.handshake()
        await device.send_clock(ClockAscii(text="ready"))
        board.firmware.power_down()  # the board hangs: the port stays, nothing answers
        with pytest.raises(LinkClosed, match="watchdog"):
            await drain(device)
        with pytest.raises(LinkClosed):
            await device.request_version()
    finally:
        await device.close()


async def test_field_updates_before_the_handshake_dump_are_dropped(
    board: EmulatedBoard, device: DgtDevice
) -> None:
    # The daemon dies (no reset sent): the board stays in update mode. As the next one
    # opens the port, a hand lifts a piece: its field update is on the line before the
    # reset is heard, ahead of every reply. The dump after it says the same, and more.
    await device.close()
    again = await DgtDevice.open(str(board.path), timeouts=TIMEOUTS)
    try:
        board.act(Lift(square=chess.E2))
        await again.handshake()
        sensors = Sensors()  # the clock version ack: update-nice mode again (§7.4)
        await read_until(again, sensors, lambda: any(_is_ack(e, 0x09) for e in sensors.events))
        board.act(Place(square=chess.E2, piece=chess.Piece(chess.PAWN, chess.WHITE)))
        await read_until(again, sensors, lambda: any(_is_update(e) for e in sensors.events))
        first = next(e for e in sensors.events if isinstance(e, BoardDump | FieldUpdated))
        assert isinstance(first, BoardDump), "a field update before the handshake's dump"
        assert sensors.squares == list(board.physical.fields())
    finally:
        await again.close()


def _is_update(event: Event) -> bool:
    return isinstance(event, FieldUpdated)


async def test_a_silent_board_fails_the_handshake(board: EmulatedBoard) -> None:
    board.firmware.power_down()
    device = await DgtDevice.open(str(board.path), timeouts=_fast_dog())
    try:
        with pytest.raises(HandshakeFailed, match="Version"):
            await device.handshake()
    finally:
        await device.close()


async def test_an_unplug_fails_a_waiting_clock_command(
    board: EmulatedBoard, device: DgtDevice
) -> None:
    await device.send_clock(ClockAscii(text="ready"))
    board.drop_acks(10)
    waiting = asyncio.create_task(device.send_clock(ClockBeep(duration_ms=64)))
    await asyncio.sleep(0)  # the task writes the command and waits for its ack
    assert not waiting.done()
    board.unplug()
    with pytest.raises(LinkClosed):
        await waiting
    with pytest.raises(LinkClosed):
        await device.send_clock(ClockBeep(duration_ms=64))


async def test_a_sink_that_raises_ends_the_stream_with_its_error(
    board: EmulatedBoard, device: DgtDevice
) -> None:
    def broken(events: list[tuple[float, Event]]) -> None:
        raise ValueError("a bug in the consumer")

    stream = asyncio.create_task(device.stream_to(broken))
    device.request_refresh()  # a dump comes, at the latest
    with pytest.raises(ValueError, match="a bug in the consumer"):
        await asyncio.wait_for(stream, WAIT)


def _fast_dog() -> DeviceTimeouts:
    return DeviceTimeouts(reply=0.5, long_serial=0.2, clock_ack=0.25, quiet=0.2, probe=0.3)


def _is_ack(event: Event, command_id: int) -> bool:
    return isinstance(event, ClockAck) and event.command == command_id


async def test_a_stream_hands_on_every_event_then_ends_when_unplugged(
    board: EmulatedBoard, device: DgtDevice
) -> None:
    sensors = Sensors()  # the handshake's replies are still waiting: the stream's first batch
    played = game_of("e4", "e5", "Nf3")
    caught_up = asyncio.Event()

    def receive(events: list[tuple[float, Event]]) -> None:
        sensors.receive(events)
        if sensors.squares == list(board.physical.fields()):
            caught_up.set()

    stream = asyncio.create_task(device.stream_to(receive))
    await board.play(played, speed=200)
    if sensors.squares != list(board.physical.fields()):  # the last updates still coming
        caught_up.clear()
        await asyncio.wait_for(caught_up.wait(), WAIT)
    assert any(isinstance(e, BoardDump) for e in sensors.events)  # the handshake's
    assert sum(isinstance(e, FieldUpdated) for e in sensors.events) >= 6
    with pytest.raises(RuntimeError, match="one stream"):
        await device.stream_to(sensors.receive)
    board.unplug()
    with pytest.raises(LinkClosed):
        await asyncio.wait_for(stream, WAIT)
