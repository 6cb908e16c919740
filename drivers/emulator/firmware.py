"""The e-board's firmware, sans I/O: commands in, physical actions in, messages out.

What it emulates (docs/protocol.md):

* Modes (§3), an enum plus a transition table: IDLE after power-up and DGT_SEND_RESET,
  UPDATE_BOARD (field updates only), UPDATE (field updates, and the clock at least once a
  second), UPDATE_NICE (field updates, and the clock whenever it changed — so once a
  second while it runs). In IDLE nothing is sent unasked.
* Answers to every request: board dump, clock, serial numbers, bus address, trademark,
  version, battery, EE moves (§3, §4, §6).
* The clock cabled to the board (§7): clock commands are executed and acknowledged, the
  acks only in UPDATE / UPDATE_NICE (§7.4); an unplugged clock reads as status D5.

Usage::

    firmware = BoardFirmware()
    firmware.receive_data(bytes_from_pc, now)   # commands
    firmware.receive_action(Lift(square=chess.E2), now)   # a hand on the board
    firmware.receive_tick(now)                  # when next_deadline() has come
    port.write(firmware.data_to_send())

After each ``receive_*`` call, send :meth:`data_to_send` and wake up again at
:meth:`next_deadline`.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import chess

from drivers.dgt import commands as cmd
from drivers.dgt.boardside import CommandParser, encode_event, frame_message
from drivers.dgt.events import (
    BatteryStatus,
    BoardDump,
    BusAddress,
    ClockAck,
    ClockFace,
    ClockTimes,
    Event,
    FieldUpdated,
    LongSerialNumber,
    ProtocolViolation,
    SerialNumber,
    Trademark,
    Version,
)
from drivers.dgt.protocol import MessageId
from drivers.emulator.clock import ChessClock, ClockAckReply, ClockReading, FaceReading
from drivers.emulator.eeprom import EEPROM_SIZE, EepromLog
from drivers.emulator.physical import PhysicalBoard, SensorChange
from drivers.emulator.player import Action, Lift, Place, PressLever, StartClock

__all__ = [
    "MODE_TRANSITIONS",
    "BoardFirmware",
    "BoardIdentity",
    "BoardMode",
    "battery_status",
    "clock_times",
]

_UPDATE_PERIOD = 1.0  # UPDATE mode: BWTIME "at least every second" (§3)


class BoardMode(enum.Enum):
    """What the board sends unasked (docs/protocol.md §3)."""

    IDLE = "idle"
    UPDATE_BOARD = "update_board"
    UPDATE = "update"
    UPDATE_NICE = "update_nice"


#: Mode commands and the mode they select; every other command keeps the mode (§3).
MODE_TRANSITIONS: Mapping[type[cmd.Command], BoardMode] = {
    cmd.Reset: BoardMode.IDLE,
    cmd.StartUpdateBoard: BoardMode.UPDATE_BOARD,
    cmd.StartUpdate: BoardMode.UPDATE,
    cmd.StartUpdateNice: BoardMode.UPDATE_NICE,
}
_REPORTS_FIELDS = frozenset({BoardMode.UPDATE_BOARD, BoardMode.UPDATE, BoardMode.UPDATE_NICE})
_REPORTS_CLOCK = frozenset({BoardMode.UPDATE, BoardMode.UPDATE_NICE})


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardIdentity:
    """What the board says about itself (§4).

    Attributes:
        serial: 5 decimal digits (SERIALNR); the bus address is its binary value (§4).
        long_serial: 10 characters (LONG_SERIALNR).
        trademark: TRADEMARK text.
        version: firmware (major, minor) for VERSION.
        battery: the BATTERY_STATUS a Bluetooth board answers 0x4C with (§4.1); None
            for a USB board, which stays silent (the default).
    """

    serial: str = "01025"
    long_serial: str = "0000001025"
    trademark: str = "dgtcast emulated e-board"
    version: tuple[int, int] = (1, 2)
    battery: BatteryStatus | None = None

    @classmethod
    def from_serial(cls, serial: str) -> BoardIdentity:
        """The default identity with another serial number (and a long one to match)."""
        if len(serial) != 5 or not serial.isdigit():
            raise ValueError(f"a DGT serial number is 5 digits, not {serial!r}")
        return cls(serial=serial, long_serial=serial.rjust(10, "0"))

    def bluetooth(self, percent: int, *, charging: bool = False) -> BoardIdentity:
        """This identity as a Bluetooth board whose battery is at ``percent``."""
        return dataclasses.replace(self, battery=battery_status(percent, charging=charging))

    @property
    def bus_address(self) -> int:
        """The 14-bit bus address: the serial number's decimal value (§4 BUSADRES)."""
        return int(self.serial) & 0x3FFF


def battery_status(percent: int, *, charging: bool = False) -> BatteryStatus:
    """A Bluetooth board's BATTERY_STATUS (§4.1): ``percent`` left, charging or discharging.

    Raises:
        ValueError: ``percent`` is not 0..100.
    """
    if not 0 <= percent <= 100:
        raise ValueError(f"a battery level is 0..100 %, not {percent}")
    return BatteryStatus(
        percent=percent,
        time_left_hours=0x7F,
        time_left_minutes=0x7F,
        on_hours=0,
        on_minutes=0,
        standby_days=0,
        standby_hours=0,
        standby_minutes=0,
        status=0x01 if charging else 0x02,
    )


def clock_times(reading: ClockReading | None) -> ClockTimes:
    """A BWTIME clock-times event for a reading; ``None`` = no clock connected (D5, §7.2)."""
    if reading is None:
        zero = _face(FaceReading(seconds=0))
        return ClockTimes(right=zero, left=zero, status=0x20)
    return ClockTimes(right=_face(reading.right), left=_face(reading.left), status=reading.status())


def _face(face: FaceReading) -> ClockFace:
    hours, minutes, seconds = face.hms
    return ClockFace(
        hours=hours,
        minutes=minutes,
        seconds=seconds,
        flag_fallen=face.flag_fallen,
        time_per_move=face.time_per_move,
        flag_shown=face.flag_shown,
    )


def _segments_text(segments: tuple[int, ...]) -> str:
    glyphs: dict[int, str] = {}
    for char, bits in cmd.SEGMENT_FONT.items():
        glyphs.setdefault(bits, char)
    return "".join(glyphs.get(bits, "?") for bits in segments)


class BoardFirmware:
    """An e-board with a clock cabled to it, speaking the protocol from the board's side.

    Args:
        physical: the pieces (default: start position, normal orientation).
        clock: the clock (default: a DGT XL set to 90 min + 30 s).
        identity: serial numbers, version, battery.
        now: power-up time.
        memory_size: bytes of the EEPROM's cyclic buffer (§6; small ones wrap soon).

    Attributes:
        commands: every command received, in order (for tests and traces).
        violations: command bytes that made no sense.
        drop_acks: the next this-many clock acks are lost on the way (to test resends).
        drop_field_updates: the next this-many FIELD_UPDATE messages are lost on the way
            (to test that the driver reads the board again).
        tear_field_updates: the next this-many FIELD_UPDATE messages arrive torn: their
            last byte is lost, so the PC sees a protocol violation.
        drop_clock_reports: the next this-many clock readings (BWTIME) are lost.
        clock_connected: False when the clock's cable is pulled out of the board.
        presses: every lever press that changed the running side, with the pressing
            side's time after it in whole seconds (what the clock showed; for tests).
    """

    def __init__(
        self,
        *,
        physical: PhysicalBoard | None = None,
        clock: ChessClock | None = None,
        identity: BoardIdentity | None = None,
        now: float = 0.0,
        memory_size: int = EEPROM_SIZE,
    ) -> None:
        self.physical = physical or PhysicalBoard()
        self.clock = clock or ChessClock()
        self.identity = identity or BoardIdentity()
        self.eeprom = EepromLog(size=memory_size)
        self.commands: list[cmd.Command] = []
        self.violations: list[ProtocolViolation] = []
        self.drop_acks = 0
        self.drop_field_updates = 0
        self.tear_field_updates = 0
        self.drop_clock_reports = 0
        self.clock_connected = True
        self.presses: list[tuple[str, int]] = []
        self._parser = CommandParser()
        self._out = bytearray()
        self._mode = BoardMode.IDLE
        self._last_clock: ClockTimes | None = None
        self._last_clock_at = now
        self._times_of: tuple[ClockReading | None, ClockTimes] | None = None  # the last
        self._powered = False
        self.power_up(now)

    @property
    def mode(self) -> BoardMode:
        """The current mode (§3)."""
        return self._mode

    # -- inputs -------------------------------------------------------------------------

    def power_up(self, now: float) -> None:
        """The board (re)gets power: IDLE mode, a power-up entry in the EEPROM (§3, §6).

        Call :meth:`data_to_send` next (it is empty: an idle board says nothing).
        """
        self._parser = CommandParser()
        self._out.clear()
        self._mode = BoardMode.IDLE
        self._last_clock = None
        self._powered = True
        self.eeprom.record_power_up(self.physical.fields(), now)

    def power_down(self) -> None:
        """The board loses power (USB cable pulled): it forgets its mode and says nothing.

        The pieces and the clock (which has its own batteries) carry on; actions are
        still accepted but neither reported nor logged until :meth:`power_up`.
        """
        self._powered = False
        self._mode = BoardMode.IDLE
        self._out.clear()

    def disconnect(self) -> None:
        """The data line drops but the board keeps its power (its own supply, a Bluetooth
        board out of range): it goes back to IDLE and its memory goes on logging (§6)."""
        self._mode = BoardMode.IDLE
        self._out.clear()

    @property
    def powered(self) -> bool:
        """Whether the board has power (is plugged in)."""
        return self._powered

    def receive_data(self, data: bytes, now: float) -> None:
        """Bytes from the PC. Call :meth:`data_to_send` next."""
        if not self._powered:
            return
        self._parser.receive_data(data)
        for command in self._parser.commands_received():
            if isinstance(command, ProtocolViolation):
                self.violations.append(command)
            else:
                self.commands.append(command)
                self._execute(command, now)
        self._report_clock(now)

    def receive_action(self, action: Action, now: float) -> None:
        """A hand moved a piece or pressed the clock. Call :meth:`data_to_send` next."""
        if isinstance(action, Lift):
            _, changes = self.physical.lift(action.square)
            self._report_fields(changes, now)
        elif isinstance(action, Place):
            self._report_fields(self.physical.place(action.square, action.piece), now)
        elif isinstance(action, PressLever):
            running = self.clock.running
            self.clock.press_lever(action.side, now)
            if running == action.side and self.clock.running != running:
                face = self._reading(now, action.side)
                self.presses.append((action.side, face.seconds))
                if self.clock_connected and self._powered:
                    self.eeprom.record_clock(action.side, face)  # §6: at lever change only
        elif isinstance(action, StartClock):
            self.clock.start(now)
        self._report_clock(now)

    def receive_set_up(self, placement: chess.BaseBoard, now: float) -> None:
        """The arbiter arranged the whole board at once. Call :meth:`data_to_send` next."""
        self._report_fields(self.physical.set_up(placement), now)

    def receive_new_clock(self, clock: ChessClock, now: float) -> None:
        """The arbiter set the clock up anew. Call :meth:`data_to_send` next."""
        self.clock = clock
        self._report_clock(now)

    def receive_tick(self, now: float) -> None:
        """Time passed (at least up to :meth:`next_deadline`). Call :meth:`data_to_send`."""
        self._report_clock(now)

    def set_clock_connected(self, connected: bool, now: float) -> None:
        """Plug the clock's cable into the board, or pull it out (status D5, §7.2)."""
        self.clock_connected = connected
        self._report_clock(now)

    def inject(self, data: bytes) -> None:
        """Queue raw bytes (line noise, a broken message) among the messages."""
        if self._powered:
            self._out += data

    # -- outputs ------------------------------------------------------------------------

    def data_to_send(self) -> bytes:
        """Return and forget the bytes for the PC produced so far."""
        data, self._out = bytes(self._out), bytearray()
        return data

    def next_deadline(self, now: float) -> float | None:
        """When :meth:`receive_tick` must be called next, or None if nothing is due."""
        if self._mode not in _REPORTS_CLOCK:
            return None
        change = self.clock.next_change(now)
        if self._mode is not BoardMode.UPDATE:
            return change
        periodic = self._last_clock_at + _UPDATE_PERIOD
        return periodic if change is None else min(change, periodic)

    def clock_times(self, now: float) -> ClockTimes:
        """The BWTIME the board would send now."""
        reading = self.clock.reading(now) if self.clock_connected else None
        cached = self._times_of
        if cached is not None and cached[0] is reading:  # the clock shows the same
            return cached[1]
        times = clock_times(reading)
        self._times_of = (reading, times)
        return times

    # -- internals ----------------------------------------------------------------------

    def _send(self, event: Event) -> None:
        self._out += encode_event(event)

    def _reading(self, now: float, side: str) -> FaceReading:
        reading = self.clock.reading(now)
        return reading.left if side == "left" else reading.right

    def _report_fields(self, changes: list[SensorChange], now: float) -> None:
        if not self._powered:
            return
        self.eeprom.record_changes(changes, self.physical.fields(), now)
        if self._mode in _REPORTS_FIELDS:
            for change in changes:
                self._send_field_update(FieldUpdated(field=change.field, piece=change.code))

    def _send_field_update(self, update: FieldUpdated) -> None:
        if self.drop_field_updates > 0:
            self.drop_field_updates -= 1
        elif self.tear_field_updates > 0:
            self.tear_field_updates -= 1
            self._out += encode_event(update)[:-1]
        else:
            self._send(update)

    def _report_clock(self, now: float) -> None:
        if self._mode not in _REPORTS_CLOCK:
            return
        times = self.clock_times(now)
        periodic = self._mode is BoardMode.UPDATE and now - self._last_clock_at >= _UPDATE_PERIOD
        if (times is not self._last_clock and times != self._last_clock) or periodic:
            if self.drop_clock_reports > 0:
                self.drop_clock_reports -= 1
            else:
                self._send(times)
            self._last_clock = times
            self._last_clock_at = now

    def _execute(self, command: cmd.Command, now: float) -> None:
        mode = MODE_TRANSITIONS.get(type(command))
        if mode is not None:
            self._mode = mode
            self._last_clock = None  # the first report in an update mode is unconditional
            return
        answer = _ANSWERS.get(type(command))
        if answer is not None:
            event = answer(self, now)
            if event is not None:  # None: a request this board does not answer
                self._send(event)
        elif isinstance(command, cmd.RequestEEMoves):
            # Framed directly: the same bytes as encode_event(EEMoves.from_raw(dump)),
            # without building a record object for each of its ~7900 bytes.
            self._out += frame_message(MessageId.EE_MOVES, self.eeprom.dump())
        elif isinstance(command, cmd.ClockCommand):
            self._clock_command(command, now)

    def _clock_command(self, command: cmd.ClockCommand, now: float) -> None:
        if not self.clock_connected:
            return  # nobody to execute it, nobody to answer (§7.2 D5)
        reply = _run_clock_command(self.clock, command, now)
        if self._mode not in _REPORTS_CLOCK:
            return  # executed, but acks only travel in UPDATE / UPDATE_NICE (§7.4)
        if self.drop_acks > 0:
            self.drop_acks -= 1
            return
        self._send(ClockAck(ack0=reply.ack0, ack1=reply.ack1, ack2=reply.ack2, ack3=reply.ack3))


def _run_clock_command(clock: ChessClock, command: cmd.ClockCommand, now: float) -> ClockAckReply:
    """Execute a clock command on the clock; return its ack (§7.3, §7.5)."""
    command_id = cmd.CLOCK_COMMAND_IDS[type(command)]
    if isinstance(command, cmd.ClockSetAndRun):
        return clock.set_and_run(
            left_seconds=command.left_seconds,
            right_seconds=command.right_seconds,
            run=command.run,
            toggle_on_lever=command.toggle_on_lever,
            now=now,
        )
    if isinstance(command, cmd.ClockAscii | cmd.ClockRev2Ascii):
        return clock.show_text(command.text, command_id=command_id)
    if isinstance(command, cmd.ClockDisplay):
        return clock.show_text(_segments_text(command.segments), command_id=command_id)
    if isinstance(command, cmd.ClockEnd):
        return clock.end_display()
    if isinstance(command, cmd.ClockVersion):
        return clock.version()
    if isinstance(command, cmd.ClockBeep):
        return clock.beep(command.duration_ms / 1000)
    return clock.acknowledge(command_id)


_ANSWERS: Mapping[type[cmd.Command], Callable[[BoardFirmware, float], Event | None]] = {
    cmd.RequestClock: lambda board, now: board.clock_times(now),
    cmd.RequestBoard: lambda board, now: BoardDump(squares=board.physical.fields()),
    cmd.RequestSerialNumber: lambda board, now: SerialNumber(text=board.identity.serial),
    cmd.RequestLongSerialNumber: lambda board, now: LongSerialNumber(
        text=board.identity.long_serial
    ),
    cmd.RequestBusAddress: lambda board, now: BusAddress(address=board.identity.bus_address),
    cmd.RequestTrademark: lambda board, now: Trademark(text=board.identity.trademark),
    cmd.RequestVersion: lambda board, now: Version(
        major=board.identity.version[0], minor=board.identity.version[1]
    ),
    cmd.RequestBattery: lambda board, now: board.identity.battery,
}
