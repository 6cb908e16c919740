"""The board firmware, sans I/O: modes, answers, clock reports and acks, golden bytes."""

from __future__ import annotations

import base64
from pathlib import Path

import chess
import pytest

from drivers.dgt import commands as cmd
from drivers.dgt.eeprom import EETag, EETagCode
from drivers.dgt.events import (
    BatteryStatus,
    BoardDump,
    BusAddress,
    ClockAck,
    ClockTimes,
    EEMoves,
    Event,
    FieldUpdated,
    LongSerialNumber,
    SerialNumber,
    Trademark,
    Version,
)
from drivers.dgt.protocol import DgtProtocol
from drivers.emulator.clock import ChessClock, ClockModel, ClockSettings
from drivers.emulator.firmware import BoardFirmware, BoardIdentity, BoardMode, battery_status
from drivers.emulator.physical import PhysicalBoard
from drivers.emulator.player import Lift, Place, PressLever, StartClock

BLITZ = ClockSettings(base_seconds=180, increment_seconds=2)


def decode(data: bytes) -> list[Event]:
    protocol = DgtProtocol()
    protocol.receive_data(data)
    events = protocol.events_received()
    assert protocol.violations == 0
    return events


def send(firmware: BoardFirmware, *commands: cmd.Command, now: float = 0.0) -> list[Event]:
    firmware.receive_data(b"".join(cmd.encode(c) for c in commands), now)
    return decode(firmware.data_to_send())


def recording(recordings_dir: Path, name: str) -> list[bytes]:
    lines = (recordings_dir / name).read_text().split()
    return [base64.b64decode(line) for line in lines]


def test_an_idle_board_says_nothing_unasked() -> None:
    firmware = BoardFirmware(clock=ChessClock(BLITZ))
    assert firmware.mode is BoardMode.IDLE
    firmware.receive_action(StartClock(), 0.0)
    firmware.receive_action(Lift(square=chess.E2), 1.0)
    firmware.receive_tick(5.0)
    assert firmware.data_to_send() == b""
    assert firmware.next_deadline(5.0) is None


def test_requests_are_answered_in_any_mode() -> None:
    identity = BoardIdentity(serial="01025", long_serial="3.25012345", version=(3, 10))
    firmware = BoardFirmware(identity=identity.bluetooth(84, charging=True))
    events = send(
        firmware,
        cmd.RequestBoard(),
        cmd.RequestSerialNumber(),
        cmd.RequestLongSerialNumber(),
        cmd.RequestBusAddress(),
        cmd.RequestTrademark(),
        cmd.RequestVersion(),
        cmd.RequestBattery(),
        cmd.RequestClock(),
    )
    assert events[:7] == [
        BoardDump(squares=PhysicalBoard().fields()),
        SerialNumber(text="01025"),
        LongSerialNumber(text="3.25012345"),
        BusAddress(address=1025),  # §4: serial "01025" → 0x08 0x01
        Trademark(text=identity.trademark),
        Version(major=3, minor=10),
        battery_status(84, charging=True),
    ]
    assert isinstance(events[6], BatteryStatus)
    assert events[6].charging
    assert events[6].percent == 84
    clock = events[7]
    assert isinstance(clock, ClockTimes)
    assert clock.left.total_seconds == 90 * 60 + 30
    assert firmware.mode is BoardMode.IDLE  # requests never change the mode (§3)


def test_a_usb_board_stays_silent_when_asked_its_battery() -> None:
    firmware = BoardFirmware()  # battery=None: a USB board (§4.1: Bluetooth boards answer)
    assert send(firmware, cmd.RequestBattery(), cmd.RequestSerialNumber()) == [
        SerialNumber(text="01025")
    ]


def test_bus_address_bytes_are_the_serials_binary_value() -> None:
    firmware = BoardFirmware(identity=BoardIdentity(serial="01025"))
    firmware.receive_data(cmd.encode(cmd.RequestBusAddress()), 0.0)
    assert firmware.data_to_send() == bytes.fromhex("90 00 05 08 01")


def test_ee_moves_is_a_whole_eeprom_ending_with_eof() -> None:
    firmware = BoardFirmware()
    firmware.receive_action(Lift(square=chess.E2), 1.0)
    firmware.receive_action(Place(square=chess.E4, piece=chess.Piece(chess.PAWN, chess.WHITE)), 2.0)
    firmware.receive_data(cmd.encode(cmd.RequestEEMoves()), 3.0)
    raw = firmware.data_to_send()
    assert raw[:3] == bytes.fromhex("8F 3E 03")  # §2.2: total length 0x1F03
    (event,) = decode(raw)
    assert isinstance(event, EEMoves)
    assert event.records[-1] == EETag(tag=EETagCode.EOF)
    assert event.raw[-5:] == bytes((0x40, 52, 0x41, 36, 0x6B))


def test_update_board_mode_sends_fields_but_no_clock() -> None:
    firmware = BoardFirmware(clock=ChessClock(BLITZ))
    assert send(firmware, cmd.StartUpdateBoard()) == []
    firmware.receive_action(StartClock(), 0.0)
    firmware.receive_action(Lift(square=chess.E2), 0.5)
    firmware.receive_tick(3.0)
    assert decode(firmware.data_to_send()) == [FieldUpdated(field=52, piece=0)]


def test_update_nice_mode_reports_the_clock_only_when_it_changes() -> None:
    firmware = BoardFirmware(clock=ChessClock(BLITZ))
    first = send(firmware, cmd.StartUpdateNice())
    assert len(first) == 1
    assert isinstance(first[0], ClockTimes)
    firmware.receive_tick(10.0)
    assert firmware.data_to_send() == b""  # stopped: nothing changes
    firmware.receive_action(StartClock(), 10.0)
    assert firmware.next_deadline(10.0) == pytest.approx(11.0)
    firmware.receive_tick(10.5)
    firmware.receive_tick(11.0)
    events = decode(firmware.data_to_send())
    assert [e.left.total_seconds for e in events if isinstance(e, ClockTimes)] == [182, 181]


def test_update_mode_reports_the_clock_every_second_even_when_stopped() -> None:
    firmware = BoardFirmware(clock=ChessClock(BLITZ))
    send(firmware, cmd.StartUpdate(), now=0.0)
    for second in range(1, 4):
        assert firmware.next_deadline(second - 0.5) == pytest.approx(second)
        firmware.receive_tick(float(second))
    events = decode(firmware.data_to_send())
    assert len(events) == 3
    assert len(set(events)) == 1


def test_reset_returns_to_idle() -> None:
    firmware = BoardFirmware()
    send(firmware, cmd.StartUpdateNice(), cmd.Reset())
    assert firmware.mode is BoardMode.IDLE
    firmware.receive_action(Lift(square=chess.E2), 1.0)
    assert firmware.data_to_send() == b""


def test_the_real_recording_starts_like_the_emulator(recordings_dir: Path) -> None:
    # Recording 1: 3 min + 2 s, White on the left; dump, stopped, started, a second later.
    lines = recording(recordings_dir, "1.inbytes")
    firmware = BoardFirmware(clock=ChessClock(BLITZ))
    firmware.receive_data(cmd.encode(cmd.RequestBoard()) + cmd.encode(cmd.StartUpdateNice()), 0.0)
    firmware.receive_action(StartClock(), 0.0)
    firmware.receive_tick(1.0)
    assert firmware.data_to_send() == b"".join(lines[:4])


def test_the_real_rotated_recording_starts_like_the_emulator(recordings_dir: Path) -> None:
    # Recording 2: the board turned by 180°, White on the right of the clock (status 0x12).
    lines = recording(recordings_dir, "2.inbytes")
    clock = ChessClock(ClockSettings(base_seconds=180, increment_seconds=2, lever_up="right"))
    firmware = BoardFirmware(physical=PhysicalBoard(rotated=True), clock=clock)
    firmware.receive_data(cmd.encode(cmd.RequestBoard()) + cmd.encode(cmd.StartUpdateNice()), 0.0)
    firmware.receive_action(StartClock(), 0.0)
    assert firmware.data_to_send() == b"".join(lines[:3])


def test_a_flag_falls_like_on_the_real_clock(recordings_dir: Path) -> None:
    # The end of `johan`: right counts 0:00:06 … 0:00:01, then 0x30 (flag) and status 0x12.
    tail = recording(recordings_dir, "johan.inbytes")[-12:-5]
    settings = ClockSettings(
        base_seconds=300, increment_seconds=5, start_left=16, start_right=7, lever_up="right"
    )
    firmware = BoardFirmware(clock=ChessClock(settings))
    send(firmware, cmd.StartUpdateNice())
    firmware.receive_action(StartClock(), 100.0)
    firmware.data_to_send()  # 0:00:07, running
    now = 100.0
    while (deadline := firmware.next_deadline(now)) is not None:
        now = deadline
        firmware.receive_tick(now)
    assert firmware.data_to_send() == b"".join(tail)
    assert firmware.clock.flagged == "right"


def test_a_lever_press_is_one_message_with_the_increment() -> None:
    firmware = BoardFirmware(clock=ChessClock(BLITZ))
    send(firmware, cmd.StartUpdateNice())
    firmware.receive_action(StartClock(), 0.0)
    firmware.data_to_send()
    firmware.receive_action(PressLever(side="left"), 0.4)
    (event,) = decode(firmware.data_to_send())
    assert isinstance(event, ClockTimes)
    assert (event.left.total_seconds, event.right.total_seconds, event.status) == (184, 182, 0x13)


def test_clock_commands_are_acked_in_update_modes() -> None:
    firmware = BoardFirmware(clock=ChessClock(ClockSettings(model=ClockModel.DGT3000)))
    send(firmware, cmd.StartUpdateNice())
    events = send(firmware, cmd.ClockVersion())
    assert events == [ClockAck(ack0=0x10, ack1=0x09, ack2=0x20, ack3=0)]
    events = send(firmware, cmd.ClockAscii(text="BOARD 3", beep=0))
    assert events == [ClockAck(ack0=0x10, ack1=0x0C, ack2=0, ack3=0)]
    assert firmware.clock.display_text == "BOARD 3 "
    assert send(firmware, cmd.ClockEnd()) == [ClockAck(ack0=0x10, ack1=0x03, ack2=0, ack3=0)]
    assert firmware.clock.display_text is None


def test_version_ack_golden_bytes() -> None:
    # §7.3 constructed example: version ack 0x10/0x09/0x20/0x00.
    firmware = BoardFirmware(clock=ChessClock(ClockSettings(model=ClockModel.DGT3000)))
    send(firmware, cmd.StartUpdateNice())
    firmware.receive_data(cmd.encode(cmd.ClockVersion()), 0.0)
    assert firmware.data_to_send() == bytes.fromhex("8D 00 0A 0A 10 09 0A 20 00 00")


def test_seven_segment_text_is_read_back() -> None:
    firmware = BoardFirmware()
    send(firmware, cmd.StartUpdateNice())
    events = send(firmware, cmd.ClockDisplay.from_text("bd 12"))
    assert events == [ClockAck(ack0=0x10, ack1=0x01, ack2=0, ack3=0)]
    assert firmware.clock.display_text == "bd 12 "


def test_clock_commands_in_idle_are_executed_but_not_acked() -> None:
    firmware = BoardFirmware()
    assert send(firmware, cmd.ClockAscii(text="hello")) == []
    assert firmware.clock.display_text == "hello   "


def test_set_and_run_outside_mode_23_is_an_error_ack() -> None:
    firmware = BoardFirmware(clock=ChessClock(ClockSettings(mode=12)))
    send(firmware, cmd.StartUpdateNice())
    events = send(firmware, cmd.ClockSetAndRun(left_seconds=60, right_seconds=60, run="left"))
    assert events == [ClockAck(ack0=0x40, ack1=0x0A, ack2=0, ack3=0)]
    assert firmware.clock.running is None


def test_set_and_run_in_mode_23_acks_then_reports_the_new_times() -> None:
    firmware = BoardFirmware(clock=ChessClock(ClockSettings(mode=23)))
    send(firmware, cmd.StartUpdateNice())
    run = cmd.ClockSetAndRun(left_seconds=3723, right_seconds=60, run="right", toggle_on_lever=True)
    ack, times = send(firmware, run)
    assert ack == ClockAck(ack0=0x10, ack1=0x0A, ack2=0, ack3=0)
    assert isinstance(times, ClockTimes)
    assert (times.left.hours, times.left.minutes, times.left.seconds) == (1, 2, 3)
    assert times.running
    assert times.right_high


def test_a_dropped_ack_is_lost_once() -> None:
    firmware = BoardFirmware()
    send(firmware, cmd.StartUpdateNice())
    firmware.drop_acks = 1
    assert send(firmware, cmd.ClockBeep(duration_ms=128)) == []
    assert send(firmware, cmd.ClockBeep(duration_ms=128)) == [
        ClockAck(ack0=0x10, ack1=0x0B, ack2=0, ack3=0)
    ]
    assert firmware.clock.beeps == [0.128, 0.128]


def test_an_unplugged_clock_reads_as_no_clock_and_answers_nothing() -> None:
    firmware = BoardFirmware()
    send(firmware, cmd.StartUpdateNice())
    firmware.set_clock_connected(False, 1.0)
    (event,) = decode(firmware.data_to_send())
    assert isinstance(event, ClockTimes)
    assert event.no_clock
    assert event.status == 0x20
    assert send(firmware, cmd.ClockVersion(), now=2.0) == []
    firmware.set_clock_connected(True, 3.0)
    (event,) = decode(firmware.data_to_send())
    assert isinstance(event, ClockTimes)
    assert not event.no_clock


def test_bytes_that_are_no_command_are_counted_and_skipped() -> None:
    firmware = BoardFirmware()
    firmware.receive_data(b"\x4e\x99" + cmd.encode(cmd.RequestVersion()), 0.0)
    assert decode(firmware.data_to_send()) == [Version(major=1, minor=2)]
    assert len(firmware.violations) == 2
    assert firmware.commands == [cmd.RequestVersion()]


def test_a_board_without_power_ignores_everything_and_wakes_up_idle() -> None:
    firmware = BoardFirmware()
    send(firmware, cmd.StartUpdateNice())
    firmware.power_down()
    firmware.receive_data(cmd.encode(cmd.RequestBoard()), 1.0)
    firmware.receive_action(Lift(square=chess.E2), 1.0)  # the pieces still move
    assert firmware.data_to_send() == b""
    firmware.power_up(2.0)
    assert firmware.mode is BoardMode.IDLE
    (dump,) = send(firmware, cmd.RequestBoard(), now=3.0)
    assert dump == BoardDump(squares=firmware.physical.fields())
    assert dump.squares[52] == 0
    powerups = [r for r in firmware.eeprom.records() if r == EETag(tag=EETagCode.POWERUP)]
    assert len(powerups) == 2


def test_rotated_board_updates_use_the_sensor_numbering() -> None:
    firmware = BoardFirmware(physical=PhysicalBoard(rotated=True))
    send(firmware, cmd.StartUpdateBoard())
    firmware.receive_action(Lift(square=chess.E2), 1.0)
    assert decode(firmware.data_to_send()) == [FieldUpdated(field=52 ^ 63, piece=0)]
