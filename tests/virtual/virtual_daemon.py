"""The daemon's side of a virtual world's board (tests/virtual/world.py): the real protocol
parser, device core, DGT observer, board session core and round core, woken on the world's
event heap, its journal the world's list of inputs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from broadcast.feed.commands import ArbiterCommand, RebuildFromMemory
from daemon.round.codec import input_of
from daemon.round.core import RoundCore
from daemon.round.inputs import ArbiterInput, RoundInput, StartInput, TickInput
from daemon.session.actions import Action, AskBoard, AskCaughtUp, AskMemory, Say, SetClock
from daemon.session.core import SessionCore, increment_control
from daemon.session.view import RoundBoardView
from drivers.dgt import commands as cmd
from drivers.dgt.device_core import DeviceCore
from drivers.dgt.events import BoardDump, Event, FieldUpdated
from drivers.dgt.observer import DgtObserver
from drivers.dgt.protocol import DgtProtocol
from drivers.observations import LinkObserved, LinkState
from tests.virtual.parts import Alarm, Entry

if TYPE_CHECKING:
    from tests.virtual.world import World

__all__ = ["VirtualDaemon"]


class VirtualDaemon:
    """The daemon's side of one board: protocol, device core, session core, round core."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.killed = False
        self.linked = False
        self._clock_tickets: set[int] = set()
        self._alarm = Alarm(world, self._wake)
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
