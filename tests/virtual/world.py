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
from collections.abc import Callable, Sequence
from typing import Any

import chess

from daemon.config.model import Config
from daemon.session.core import SessionSettings
from drivers.dgt import commands as cmd
from drivers.dgt.device_core import DeviceTimeouts
from drivers.emulator.clock import Side
from drivers.emulator.firmware import BoardFirmware
from drivers.emulator.player import PressLever, TimedAction
from drivers.observations import ClockSide
from tests.virtual.parts import Alarm, Entry
from tests.virtual.truth import mode23_truth
from tests.virtual.virtual_daemon import VirtualDaemon

__all__ = ["BAUD", "World", "side_of"]

BAUD = 9600
_BYTE = 10 / BAUD  # a start bit, 8 data bits, a stop bit
_CHUNK = 32  # bytes delivered at once (≈ 33 ms of line)
_COMMAND_DELAY = 0.002  # PC to board
_SIDES: tuple[Side, Side] = ("left", "right")


#: An event on the heap: when, a sequence number (first come, first run), what to run.
_Due = tuple[float, int, Callable[[], object]]


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
        self._firmware_alarm = Alarm(self, self._firmware_tick)

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


def side_of(white_side: str, color: chess.Color) -> ClockSide:
    """The clock side of ``color``'s player."""
    side = ClockSide(white_side)
    if color == chess.WHITE:
        return side
    return ClockSide.RIGHT if side is ClockSide.LEFT else ClockSide.LEFT
