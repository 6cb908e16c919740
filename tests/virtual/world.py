"""A DGT board and a dgtcast daemon in virtual time: the real cores, no ptys, no sleeps.

The board side is the emulator's firmware (drivers/emulator/firmware.py) with players
acting a :class:`~drivers.emulator.player.HumanPlayer` schedule; its bytes cross a
9600-baud line (a byte every 1/960 s, in order); the daemon side is the real protocol
parser, the device core (watchdog, refreshes, the clock queue), the DGT observer, the
board session core and the round core, with the journal an in-memory list of inputs.
A :class:`World` runs them on one event heap: every part is woken at its own deadlines,
and minutes of play take milliseconds.

Faults are methods of the world, called at any moment: :meth:`World.kill` (``kill -9``:
the daemon's memory is gone, the journal stays, and the board goes on talking to nobody),
:meth:`World.start_daemon` (a replay of the journal, then a fresh connection),
:meth:`World.unplug` / :meth:`World.replug` (the cable), and the firmware's own losses
(``drop_field_updates``, ``tear_field_updates``, ``drop_clock_reports``).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import chess

from broadcast.feed.commands import ArbiterCommand, RebuildFromMemory
from daemon.config.model import Config
from daemon.round.codec import input_of, payload_of
from daemon.round.core import RoundCore
from daemon.round.inputs import ArbiterInput, RoundInput, StartInput, TickInput
from daemon.session.actions import Action, AskBoard, AskCaughtUp, AskMemory, Say, SetClock
from daemon.session.core import SessionCore, SessionSettings, increment_control
from daemon.session.view import RoundBoardView
from drivers.dgt import commands as cmd
from drivers.dgt.device_core import DeviceCore, DeviceTimeouts
from drivers.dgt.events import BoardDump, Event, FieldUpdated
from drivers.dgt.observer import DgtObserver
from drivers.dgt.protocol import DgtProtocol
from drivers.emulator.clock import Side
from drivers.emulator.firmware import BoardFirmware
from drivers.emulator.player import PressLever, TimedAction
from drivers.observations import ClockSide, LinkObserved, LinkState
from tests.virtual.truth import mode23_truth

__all__ = ["BAUD", "Entry", "VirtualDaemon", "World"]

BAUD = 9600
_BYTE = 10 / BAUD  # a start bit, 8 data bits, a stop bit
_CHUNK = 32  # bytes delivered at once (≈ 33 ms of line)
_COMMAND_DELAY = 0.002  # PC to board
_SIDES: tuple[Side, Side] = ("left", "right")


@dataclass(frozen=True, slots=True)
class Entry:
    """One journalled input; its payload is written when read (a replay, a test), as the
    journal's codec writes it: most inputs of a run are never read back."""

    item: RoundInput

    @property
    def board(self) -> int:
        return self.item.board

    @property
    def kind(self) -> str:
        return self.item.KIND

    @property
    def payload(self) -> Mapping[str, Any]:
        return payload_of(self.item)

    @property
    def at(self) -> float:
        return self.item.at


#: An event on the heap: when, a sequence number (first come, first run), what to run.
_Due = tuple[float, int, Callable[[], object]]


class _Alarm:
    """One wake-up on the world's heap that only moves earlier: :meth:`set` at a later time
    than the pending one does nothing, at an earlier one supersedes it (the superseded heap
    entry then runs nothing). Without it every moved deadline left an entry behind that
    rescheduled itself."""

    def __init__(self, world: World, run: Callable[[], object]) -> None:
        self._world = world
        self._run = run
        self._due = math.inf
        self._token = 0

    def set(self, when: float) -> None:
        if when < self._due:
            self._due = when
            self._token += 1
            self._world.at(when, functools.partial(self._fire, self._token))

    def _fire(self, token: int) -> None:
        if token == self._token:
            self._due = math.inf
            self._run()


class World:
    """One board, its line and a daemon, in virtual time (see the module docstring)."""

    def __init__(
        self,
        config: Config,
        firmware: BoardFirmware,
        *,
        number: int = 1,
        timeouts: DeviceTimeouts | None = None,
        settings: SessionSettings | None = None,
        latency: float = 0.0,
    ) -> None:
        self.config = config
        #: How late the daemon's commands reach the board besides the line's own delay
        #: (a busy computer: the process answers a reading a moment after it came).
        self.latency = latency
        self.firmware = firmware
        self.number = number
        self.timeouts = timeouts or DeviceTimeouts()
        self.settings = settings
        self.now = 0.0
        self.journal: list[Entry] = []
        self.daemon: VirtualDaemon | None = None
        self.plugged = True
        self.logs: list[str] = []
        #: For each move's press: whether the daemon followed it live, when it was made,
        #: and the mover's side and time then. A press that switched the clock, or one
        #: a SETNRUN swallowed: the clock ran the side that had just pressed (a reply
        #: undone by a late SETNRUN), so the other player's lever did nothing.
        self.seen_presses: list[bool] = []
        self.press_times: list[float] = []
        self.presses: list[tuple[str, int]] = []
        #: When dgtcast sent a SETNRUN and when the clock took it (mode 23: both sides set),
        #: and the seconds it gave each side (the time set less the time left then).
        self.clock_sets: list[tuple[float, float]] = []
        self.clock_given: list[dict[str, float]] = []
        self._heap: list[_Due] = []
        self._seq = itertools.count()
        self._line_free = 0.0
        self._line_generation = 0  # bumped when the cable is pulled: bytes in flight lost
        self._pc_buffer = bytearray()  # arrived while no daemon reads (the port's buffer)
        self._firmware_alarm = _Alarm(self, self._firmware_tick)

    # -- the event heap -----------------------------------------------------------------

    def at(self, when: float, run: Callable[[], object]) -> None:
        """Run ``run`` at ``when`` (virtual seconds)."""
        heapq.heappush(self._heap, (max(when, self.now), next(self._seq), run))

    def run_until(self, end: float) -> None:
        """Run every event due up to ``end``; the clock then stands at ``end``."""
        heap = self._heap
        while heap and heap[0][0] <= end:
            self.now, _, run = heapq.heappop(heap)
            run()
        self.now = max(self.now, end)

    def should_have_shown(self, added_after: Callable[[int], int]) -> list[int]:
        """Mode 23: the time each press should have left its mover, from what the clock
        itself showed (:func:`~tests.virtual.truth.mode23_truth`). ``added_after``: what
        the time control adds after a side's move N."""
        return mode23_truth(
            self.presses, self.press_times, self.clock_sets, self.clock_given, added_after
        )

    def play(self, schedule: Sequence[TimedAction], *, origin: float) -> float:
        """Have the players act ``schedule`` from ``origin``; returns when it ends."""
        end = origin
        for timed in schedule:
            end = origin + timed.at
            self.at(end, functools.partial(self._act, timed.action))
        return end

    # -- the board's side ---------------------------------------------------------------

    def _act(self, action: Any) -> None:
        presses = len(self.firmware.presses)
        self.firmware.receive_action(action, self.now)
        if len(self.firmware.presses) > presses:  # a press that switched the clock
            self._pressed(self.firmware.presses[-1])
        elif isinstance(action, PressLever) and self.presses and self.presses[-1][0] != action.side:
            faces = self.firmware.clock.reading(self.now)  # swallowed: the mover's time then
            face = faces.left if action.side == "left" else faces.right
            self._pressed((action.side, face.seconds))
        self._board_sent()

    def _pressed(self, press: tuple[str, int]) -> None:
        daemon = self.daemon
        live = daemon is not None and daemon.linked and daemon.session.state.value == "live"
        self.seen_presses.append(live)
        self.press_times.append(self.now)
        self.presses.append(press)

    def _board_sent(self) -> None:
        """Put what the firmware produced on the line; wake it at its next deadline."""
        data = self.firmware.data_to_send()
        if data and self.plugged:
            self._transmit(data)
        due = self.firmware.next_deadline(self.now)
        if due is not None:
            self._firmware_alarm.set(due)

    def _firmware_tick(self) -> None:
        self.firmware.receive_tick(self.now)
        self._board_sent()

    def _transmit(self, data: bytes) -> None:
        start = max(self._line_free, self.now)
        generation = self._line_generation
        for offset in range(0, len(data), _CHUNK):
            chunk = data[offset : offset + _CHUNK]
            start += len(chunk) * _BYTE
            self.at(start, functools.partial(self._arrive, chunk, generation))
        self._line_free = start

    def _arrive(self, chunk: bytes, generation: int) -> None:
        if generation != self._line_generation:
            return  # the cable was pulled meanwhile
        if self.daemon is None or not self.daemon.linked:
            self._pc_buffer += chunk
            return
        self.daemon.receive_bytes(chunk)

    def send_to_board(self, data: bytes) -> None:
        """The daemon writes ``data``; it reaches the board a moment later."""
        if self.plugged:
            sent = self.now
            self.at(sent + _COMMAND_DELAY + self.latency, lambda: self._board_reads(data, sent))

    def _board_reads(self, data: bytes, sent: float) -> None:
        if self.plugged:
            commands = len(self.firmware.commands)
            clock = self.firmware.clock
            before = {side: clock.remaining(side, self.now) for side in _SIDES}
            self.firmware.receive_data(data, self.now)
            if any(
                isinstance(command, cmd.ClockSetAndRun)
                for command in self.firmware.commands[commands:]
            ):
                self.clock_sets.append((sent, self.now))
                self.clock_given.append(
                    {side: clock.remaining(side, self.now) - before[side] for side in before}
                )
            self._board_sent()

    def set_up(self, placement: chess.BaseBoard) -> None:
        """Someone arranges the pieces at once (every changed square is reported)."""
        self.firmware.receive_set_up(placement, self.now)
        self._board_sent()

    # -- faults -------------------------------------------------------------------------

    def start_daemon(self) -> VirtualDaemon:
        """A daemon starts: the journal replayed into a fresh core, then it connects."""
        self.daemon = VirtualDaemon(self)
        return self.daemon

    def kill(self) -> None:
        """``kill -9``: the daemon is gone, the journal stays, the board talks on."""
        if self.daemon is not None:
            self.daemon.killed = True
            self.daemon.linked = False
        self.daemon = None

    def unplug(self, *, keep_power: bool) -> None:
        """Pull the cable (with ``keep_power`` the board goes on logging, §6)."""
        self.plugged = False
        self._line_generation += 1
        self._line_free = self.now
        if keep_power:
            self.firmware.disconnect()
        else:
            self.firmware.power_down()
        if self.daemon is not None:
            self.daemon.link_lost("the cable was pulled")

    def replug(self) -> None:
        """Plug the cable back in; the daemon's supervisor connects again soon."""
        self.plugged = True
        if not self.firmware.powered:
            self.firmware.power_up(self.now)
        if self.daemon is not None:
            self.daemon.connect_soon(0.5)

    def flush_port(self) -> None:
        """A daemon opens the port: what waited in its buffer is flushed (pyserial)."""
        self._pc_buffer.clear()


class VirtualDaemon:
    """The daemon's side of one board: protocol, device core, session core, round core."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.killed = False
        self.linked = False
        self._clock_tickets: set[int] = set()
        self._alarm = _Alarm(world, self._wake)
        self._device: DeviceCore | None = None
        self.core = RoundCore(world.config)
        for entry in world.journal:  # the replay of a restart
            self.core.apply(input_of(entry.board, entry.kind, entry.payload, entry.at))
        section = world.config.section_of(world.number)
        view = RoundBoardView(self.core, world.number)
        increments = increment_control(world.config.board(world.number), section, view)
        self.session = SessionCore(
            world.number,
            view,
            self._record_input,
            increments=increments,
            settings=world.settings,
        )
        self._record_input(StartInput(at=world.now, silence=30.0))
        self._protocol = DgtProtocol()
        self._observer = DgtObserver()
        self._handshaking = False
        self._early: list[Event] = []  # handshake replies before the board dump
        self._dumped = False
        self.connect_soon(0.3)

    # -- connecting ---------------------------------------------------------------------

    def connect_soon(self, delay: float) -> None:
        """The supervisor tries the port after ``delay`` (its back-off)."""
        self.world.at(self.world.now + delay, self._connect)

    def _connect(self) -> None:
        if self.killed or self.linked:
            return
        if not self.world.plugged:  # no board on the port: the supervisor tries again
            self.connect_soon(2.0)
            return
        self.world.flush_port()
        self.linked, self._handshaking, self._dumped = True, True, False
        self._protocol = DgtProtocol()
        self._early = []
        self._observer = DgtObserver()
        self._device = DeviceCore(self.world.timeouts, now=self.world.now)
        for command in (
            cmd.Reset(),
            cmd.RequestVersion(),
            cmd.RequestSerialNumber(),
            cmd.StartUpdateNice(),  # before the dump, as DgtDevice.handshake does
            cmd.RequestBoard(),
        ):
            self._write(command)
        self._handshake_deadline = self.world.now + 3.0
        self.world.at(self._handshake_deadline, self._handshake_timeout)
        self._pump()

    def _handshake_timeout(self) -> None:
        if self.killed:
            return
        if self.linked and self._handshaking and self.world.now >= self._handshake_deadline:
            self.linked = self._handshaking = False
            self.connect_soon(1.0)

    def link_lost(self, reason: str) -> None:
        """The link died (a pulled cable, a silent line)."""
        if not self.linked:
            return
        was_up = not self._handshaking
        self.linked = self._handshaking = False
        self._device = None
        if was_up:
            down = LinkObserved(state=LinkState.OFFLINE, at=self.world.now)
            self.session.receive_link(down, reason=reason)
            self._carry_out()
        if self.world.plugged:
            self.connect_soon(0.5)

    def read_board(self) -> None:
        """Read the whole board now (a refresh, as after a protocol violation)."""
        if self._device is not None and self.linked:
            self._device.request_refresh(self.world.now)
            self._pump()

    # -- bytes in -----------------------------------------------------------------------

    def receive_bytes(self, data: bytes) -> None:
        """Bytes arrived from the board."""
        device = self._device
        assert device is not None
        now = self.world.now
        self._protocol.receive_data(data)
        events = self._protocol.events_received()
        device.receive_bytes(now)
        if not events:  # part of a message (the memory's dump): the line is alive, no more
            return  # (DgtDevice wakes on whole messages only)
        device.receive_events([(now, event) for event in events])
        for event in events:
            if not self.linked:
                return
            self._receive_event(event)
        self._pump()

    def _receive_event(self, event: Event) -> None:
        if isinstance(event, BoardDump) and not self._dumped:
            self._dumped = True
            if self._handshaking:
                self._handshake_done()
        if isinstance(event, FieldUpdated) and not self._dumped:
            return  # before the handshake's dump: dropped, as DgtDevice does
        if self._handshaking:
            self._early.append(event)
            return
        self._observe(event)

    def _handshake_done(self) -> None:
        assert self._device is not None
        self._handshaking = False
        self._device.start_refresh(self.world.now)
        up = LinkObserved(state=LinkState.ONLINE, at=self.world.now)
        self.session.receive_link(up, serial="01025", port="virtual")
        early, self._early = self._early, []
        for event in early:
            self._observe(event)

    def _observe(self, event: Event) -> None:
        observed = self._observer.receive_event(event, self.world.now)
        if observed is not None:
            self.session.receive(observed)
        self._carry_out()

    # -- what the session asks ----------------------------------------------------------

    def _carry_out(self) -> None:
        for action in self.session.actions_to_send():
            self._act(action)

    def _act(self, action: Action) -> None:
        device, now = self._device, self.world.now
        if isinstance(action, Say):
            self.world.logs.append(action.text)
        elif device is None:
            if isinstance(action, AskMemory):
                self.session.receive_memory_refused("board not online", now)
            elif isinstance(action, SetClock):
                self.session.receive_clock_done(now)
        elif isinstance(action, AskMemory):
            device.request_memory(now)
            self._write(cmd.RequestEEMoves())
        elif isinstance(action, AskBoard):
            device.request_refresh(now)
            self._send_queued()  # at once, as DgtDevice.request_refresh does
        elif isinstance(action, AskCaughtUp):
            self._write(cmd.RequestVersion())
        elif isinstance(action, SetClock):
            self._clock_tickets.add(device.submit_clock(action.command, now))
            self._send_queued()  # at once, as DgtDevice.submit_clock does

    def _write(self, command: cmd.Command) -> None:
        self.world.send_to_board(self._protocol.send(command))

    # -- time ---------------------------------------------------------------------------

    def _pump(self) -> None:
        """The device's deadlines and outputs, the session's and the round's deadlines."""
        now = self.world.now
        device = self._device
        if device is not None and self.linked:
            self._send_queued()
            for done in device.clock_results():
                if done.ticket in self._clock_tickets:
                    self._clock_tickets.discard(done.ticket)
                    if done.ack is not None and done.ack.is_error:  # as DgtDevice raises
                        self.session.receive_clock_refused(now)
                    self.session.receive_clock_done(now)
            if device.dead_reason is not None:
                self.link_lost(device.dead_reason)
        self._carry_out()
        self._wake_at_next_deadline()

    def _send_queued(self) -> None:
        """Let the device core's deadlines pass and write the commands it asks for."""
        device = self._device
        if device is not None and self.linked:
            device.receive_time(self.world.now)
            for command in device.commands_to_send():
                self._write(command)

    def _wake_at_next_deadline(self) -> None:
        alarm = self._alarm
        for due in (self.session.next_deadline(), self.core.next_deadline()):
            if due is not None:
                alarm.set(due)
        if self._device is not None and self.linked:
            alarm.set(self._device.next_deadline())  # maybe inf: never due

    def _wake(self) -> None:
        if self.killed:
            return
        now = self.world.now
        core_due = self.core.next_deadline()
        if core_due is not None and core_due <= now:
            self._record_input(TickInput(at=now))
        self.session.receive_time(now)
        self._carry_out()
        self._pump()

    def _record_input(self, item: RoundInput) -> None:
        """Journal one input, then apply it (the service's order, without the commit)."""
        self.world.journal.append(Entry(item))
        self.core.apply(item)
        core_due = self.core.next_deadline()  # only the round's deadlines moved
        if core_due is not None:
            self._alarm.set(core_due)

    def execute(self, command: ArbiterCommand) -> str | None:
        """An arbiter's command, journalled and applied as the service does; a
        ``rebuild_from_memory`` then goes to the session (why it cannot be done, or None)."""
        self._record_input(ArbiterInput(at=self.world.now, command=command))
        if not isinstance(command, RebuildFromMemory):
            return None
        refused = self.session.rebuild(self.world.now)
        self._pump()
        return refused

    # -- what the daemon shows ----------------------------------------------------------

    def moves(self) -> list[tuple[str, float | None]]:
        """The board's record: each move's UCI and ``[%clk]``."""
        game = self.core.games[self.world.number]
        return [(move.uci, move.clock) for move in game.record.moves]

    def open_alerts(self) -> list[str]:
        """The kinds of the alerts open on the board."""
        return sorted(
            str(alert.kind.value)
            for alert in self.core.engine.open_alerts
            if alert.board == self.world.number
        )


def side_of(white_side: str, color: chess.Color) -> ClockSide:
    """The clock side of ``color``'s player."""
    side = ClockSide(white_side)
    if color == chess.WHITE:
        return side
    return ClockSide.RIGHT if side is ClockSide.LEFT else ClockSide.LEFT
