"""The emulated board on a virtual serial port: the asyncio shell around the firmware.

Usage::

    async with EmulatedBoard(rotate=False, baud=None) as board:
        driver = await connect(board.path)          # open it like /dev/ttyACM0
        await board.play(game, speed=20, noise=0.1)
        board.unplug()                              # the driver sees a hang-up
        await board.replug()                        # same path, board back in IDLE

The shell owns three things: the pty (:class:`~drivers.emulator.pty.VirtualSerialPort`), a
reader callback feeding commands to :class:`~drivers.emulator.firmware.BoardFirmware`,
and a ticker that wakes the firmware at its deadlines (the clock's seconds). Bytes go out
through :class:`~drivers.emulator.line.BoardLine`: as fast as the pty takes them, or paced
like a real 9600 baud line when ``baud`` is given. ``now`` is the event loop's clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import os
import random
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import chess
import chess.pgn

from base.waiting import wait_at_most
from drivers.emulator.castling import CastlingOrder
from drivers.emulator.clock import ChessClock, ClockSettings, Side
from drivers.emulator.eeprom import EEPROM_SIZE
from drivers.emulator.firmware import BoardFirmware, BoardIdentity, BoardMode
from drivers.emulator.line import MAX_PENDING_BYTES, BoardLine
from drivers.emulator.physical import PhysicalBoard
from drivers.emulator.player import Action, HumanPlayer, PressLever, StartClock, TimedAction
from drivers.emulator.pty import VirtualSerialPort
from drivers.emulator.record import ClockRecord

__all__ = ["MAX_PENDING_BYTES", "EmulatedBoard"]


class EmulatedBoard:
    """A DGT e-board with a clock, on a pty whose slave end is at :attr:`path`.

    Args:
        path: where to put the symlink the driver opens (default: a fresh temp folder).
        rotate: the board is set up turned by 180° (sensor fields XOR 63, §5.2).
        clock: the clock's settings; its lever starts up on ``white_side``.
        white_side: the clock side White sits at.
        baud: None = bytes go out as fast as possible; 9600 = paced like a real line.
        seed: seeds the players' habits and timings.
        identity: serial numbers and versions the board reports.
        placement: the pieces at power-up (default: the start position).
        earlier: games played on the board before, already in its memory (§6), each
            from the start position, as people play them, then the pieces set up again.
        memory_size: bytes of the board's cyclic EEPROM (§6); a small one wraps soon.
    """

    def __init__(
        self,
        *,
        path: Path | None = None,
        rotate: bool = False,
        clock: ClockSettings | None = None,
        white_side: Side = "left",
        baud: int | None = None,
        seed: int = 0,
        identity: BoardIdentity | None = None,
        placement: chess.BaseBoard | None = None,
        earlier: Sequence[chess.pgn.Game] = (),
        memory_size: int = EEPROM_SIZE,
    ) -> None:
        if baud is not None and baud <= 0:
            raise ValueError("baud must be positive (or None for no pacing)")
        self._given_path = path
        self._folder: Path | None = None
        self._port: VirtualSerialPort | None = None
        self._rotate = rotate
        self._settings = dataclasses.replace(clock or ClockSettings(), lever_up=white_side)
        self.white_side: Side = white_side
        self._rng = random.Random(seed)
        self._identity = identity
        self._placement = placement
        self._earlier = tuple(earlier)
        self._memory_size = memory_size
        self._firmware: BoardFirmware | None = None
        self._line = BoardLine(self._port_or_raise, lambda: self.plugged, self.now, baud)
        self._wake = asyncio.Event()
        self._ahead = 0.0  # seconds the board's time is ahead of the event loop's
        self._flash_until: float | None = None  # a pass_time under way, until then
        self._moved = asyncio.Event()  # time jumped ahead: a waiting perform looks again
        self._caught_up = asyncio.Event()  # a perform reached the end of the jump
        self._performing = 0
        self._tasks: list[asyncio.Task[None]] = []
        #: Set once a driver asks for the board's changes (any update mode, §3).
        self.followed = asyncio.Event()
        #: Told of every lever press and SetNRun when set (``dgtcast emulate --record``).
        self.record: ClockRecord | None = None

    # -- life cycle ---------------------------------------------------------------------

    async def __aenter__(self) -> EmulatedBoard:
        loop = asyncio.get_running_loop()
        if self._given_path is None:
            self._folder = Path(tempfile.mkdtemp(prefix="dgtcast-emulator-"))
        self._port = VirtualSerialPort(self._given_path or self._folder_path() / "dgt-board")
        self._firmware = BoardFirmware(
            physical=PhysicalBoard(self._placement, rotated=self._rotate),
            clock=ChessClock(self._settings),
            identity=self._identity,
            now=loop.time(),
            memory_size=self._memory_size,
        )
        self._play_earlier_games(loop.time())
        self._plug_in()
        self._tasks = [
            asyncio.create_task(self._tick_loop(), name="emulator-ticks"),
            asyncio.create_task(self._line.run(), name="emulator-writes"),
        ]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        self._pull_out()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    # -- what a test or the CLI looks at --------------------------------------------------

    @property
    def path(self) -> Path:
        """The device path to open (a symlink to the pty's slave end)."""
        return self._port_or_raise().path

    @property
    def firmware(self) -> BoardFirmware:
        """The board's firmware: mode, commands received, EEPROM."""
        if self._firmware is None:
            raise RuntimeError("enter the board first: async with EmulatedBoard() as board")
        return self._firmware

    @property
    def physical(self) -> PhysicalBoard:
        """The pieces on the board."""
        return self.firmware.physical

    @property
    def clock(self) -> ChessClock:
        """The clock beside the board (``clock.display_text`` shows what it was told)."""
        return self.firmware.clock

    @property
    def plugged(self) -> bool:
        """Whether the USB cable is in (the path exists)."""
        return self._port is not None and self._port.is_open

    @property
    def baud(self) -> int | None:
        """The line's speed: None = as fast as the pty takes bytes."""
        return self._line.baud

    @property
    def bytes_pending(self) -> int:
        """Bytes waiting for room in the pty (a driver that does not read)."""
        return len(self._line.pending)

    @property
    def bytes_dropped(self) -> int:
        """Bytes lost because nobody read them (beyond :data:`MAX_PENDING_BYTES`)."""
        return self._line.bytes_dropped

    @property
    def bytes_sent(self) -> int:
        """Bytes written to the line so far."""
        return self._line.bytes_sent

    async def drained(self, within: float = 2.0) -> bool:
        """Wait until a driver has read every byte the board sent (at most ``within``
        seconds): what the board said before it goes, it said. The pty is seen empty twice,
        50 ms apart (the kernel moves written bytes to the reader's side a moment later).
        False: nobody read them in time, or the cable is out."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        empty = 0
        while self.plugged and empty < 2:
            if self._line.pending or self._port_or_raise().unread():
                empty = 0
            else:
                empty += 1
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.05)
        return self.plugged

    def now(self) -> float:
        """The emulator's time: the running event loop's clock, plus the time that passed
        at once (:meth:`pass_time`)."""
        return asyncio.get_running_loop().time() + self._ahead

    # -- what people do -----------------------------------------------------------------

    def act(self, action: Action) -> None:
        """Do one physical action now (lift, place, press a lever, start the clock)."""
        now, record, clock = self.now(), self.record, self.firmware.clock
        before = None if record is None else record.before_action(action, clock, now)
        self.firmware.receive_action(action, now)
        if record is not None:
            record.acted(action, before, clock, now)
        self._flush()

    async def perform(self, schedule: list[TimedAction]) -> None:
        """Do the actions of a schedule, each at its time counted from now (during a
        :meth:`pass_time`, at once, each at its own time)."""
        origin = self.now()
        self._performing += 1
        try:
            for timed in schedule:
                await self._until(origin + timed.at)
                self.act(timed.action)
        finally:
            self._performing -= 1
            self._caught_up.set()

    async def pass_time(self, seconds: float) -> None:
        """``seconds`` of the board's time pass at once, the event loop's clock standing
        still: what the players do meanwhile (a :meth:`play` under way) is done at its own
        times, the clock runs down and the memory logs it all, as in ``seconds`` of play.

        For a host that is not listening anyway (a daemon killed and not restarted yet):
        minutes of play take no time of the test's.
        """
        target = self.now() + seconds
        self._flash_until = target
        self._moved.set()
        while self._performing and self.now() < target:
            self._caught_up.clear()
            await self._caught_up.wait()
        self._ahead += max(0.0, target - self.now())
        self._flash_until = None
        self._wake.set()  # the ticker: the clock's deadlines moved

    async def _until(self, due: float) -> None:
        """Return when the board's time is ``due``."""
        while (delay := due - self.now()) > 0:
            flash = self._flash_until
            if flash is not None and self.now() < flash:
                self._ahead += min(delay, flash - self.now())
                if self.now() >= flash:
                    self._caught_up.set()
                continue
            self._moved.clear()
            await wait_at_most(self._moved.wait(), delay)

    async def play(
        self,
        game: chess.pgn.Game,
        *,
        speed: float = 1.0,
        noise: float = 0.0,
        plies: int | None = None,
        late_by: float = 0.0,
        start_clock: bool = True,
        signal_result: bool = False,
        castling: CastlingOrder | None = None,
    ) -> None:
        """Play a game's main line the way people do (see :mod:`drivers.emulator.player`).

        If the pieces do not stand in the game's start position, the arbiter sets them
        up first (all at once).

        Args:
            game: the game to play.
            speed: human timings are divided by this.
            noise: probability per move of an adjusted / knocked-over / slid piece.
            plies: stop moving after this many plies (the mover's flag will fall).
            late_by: real seconds the first mover arrives after the clock starts.
            start_clock: the arbiter starts the clock first.
            signal_result: finish by putting the kings on the centre squares for the
                game's result (§9.1), unless the game ended in mate or stalemate.
            castling: the order the players castle in; None = random each time.
                Chess960 games (a PGN with ``Variant "Chess960"`` and ``FEN``) play too.
        """
        start = chess.BaseBoard(game.board().board_fen())
        if self.physical.placement != start:
            self.set_up(start)
        player = self._player(speed=speed, noise=noise)
        player.castling = castling
        result = _result_to_signal(game, plies) if signal_result else None
        schedule = player.play(
            game, plies=plies, late_by=late_by, start_clock=start_clock, result=result
        )
        await self.perform(schedule)

    async def signal_result(self, result: str, *, speed: float = 1.0) -> None:
        """Put the kings on the centre squares for ``result`` (§9.1)."""
        player = self._player(speed=speed, noise=0.0)
        await self.perform(player.signal_result(self.physical.placement, result))

    def press_lever(self, side: Side | None = None) -> None:
        """A player presses the clock lever (default: the one whose time runs)."""
        if side is None:
            side = self.clock.running or self.clock.lever_up
        self.act(PressLever(side=side))

    def set_up(self, placement: chess.BaseBoard) -> None:
        """The arbiter arranges the pieces (every changed field is reported)."""
        self.firmware.receive_set_up(placement, self.now())
        self._flush()

    def reset_clock(self, settings: ClockSettings | None = None) -> None:
        """The arbiter sets the clock up anew (same settings by default), stopped."""
        if settings is not None:
            self._settings = dataclasses.replace(settings, lever_up=self.white_side)
        self.firmware.receive_new_clock(ChessClock(self._settings), self.now())
        self._flush()

    def start_clock(self) -> None:
        """The arbiter presses play."""
        self.act(StartClock())

    def unplug_clock(self) -> None:
        """Pull the clock's cable out of the board (status D5, §7.2)."""
        self.firmware.set_clock_connected(False, self.now())
        self._flush()

    def plug_clock(self) -> None:
        """Put the clock's cable back."""
        self.firmware.set_clock_connected(True, self.now())
        self._flush()

    def drop_acks(self, count: int = 1) -> None:
        """Lose the next ``count`` clock acks on the way (the driver must resend)."""
        self.firmware.drop_acks += count

    def drop_field_updates(self, count: int = 1, *, torn: bool = False) -> None:
        """Lose the next ``count`` field updates on the way, or (``torn``) their last byte."""
        if torn:
            self.firmware.tear_field_updates += count
        else:
            self.firmware.drop_field_updates += count

    def drop_clock_reports(self, count: int = 1) -> None:
        """Lose the next ``count`` clock readings on the way (a lever press unreported)."""
        self.firmware.drop_clock_reports += count

    def inject_garbage(self, data: bytes) -> None:
        """Send raw bytes among the messages (line noise, a torn message)."""
        self.firmware.inject(data)
        self._flush()

    def unplug(self, *, keep_power: bool = False) -> None:
        """Pull the cable: the path disappears, a reader sees a hang-up (EIO/EOF).

        A USB board loses its power with the cable: it logs nothing until :meth:`replug`
        and then starts its memory with a power-up (§6). With ``keep_power`` only the data
        line goes (a board on its own supply, a Bluetooth board out of range): it goes on
        logging every change and lever press.
        """
        self._pull_out()
        if keep_power:
            self.firmware.disconnect()
        else:
            self.firmware.power_down()

    async def replug(self) -> None:
        """Plug the cable back in: a new pty behind the same path, board in IDLE."""
        if self.plugged:
            return
        if not self.firmware.powered:
            self.firmware.power_up(self.now())
        self._plug_in()
        self._wake.set()

    # -- internals ----------------------------------------------------------------------

    def _play_earlier_games(self, now: float) -> None:
        """Fill the memory with the earlier games, played in the hours before ``now``."""
        if not self._earlier:
            return
        firmware = self.firmware
        at = now - 3600.0 * len(self._earlier)
        for game in self._earlier:
            firmware.receive_new_clock(ChessClock(self._settings), at)
            firmware.receive_set_up(chess.BaseBoard(), at)
            for timed in self._player(speed=1.0, noise=0.0).play(game):
                firmware.receive_action(timed.action, at + timed.at)
            at += 3600.0
        firmware.receive_new_clock(ChessClock(self._settings), now)
        firmware.receive_set_up(self._placement or chess.BaseBoard(), now)
        firmware.presses.clear()
        firmware.data_to_send()  # an idle board sent nothing of it

    def _player(self, *, speed: float, noise: float) -> HumanPlayer:
        seed = self._rng.randrange(1 << 32)
        return HumanPlayer(seed=seed, speed=speed, noise=noise, white_side=self.white_side)

    def _folder_path(self) -> Path:
        assert self._folder is not None
        return self._folder

    def _port_or_raise(self) -> VirtualSerialPort:
        if self._port is None:
            raise RuntimeError("enter the board first: async with EmulatedBoard() as board")
        return self._port

    def _plug_in(self) -> None:
        port = self._port_or_raise()
        port.open()
        asyncio.get_running_loop().add_reader(port.master_fd, self._on_readable)

    def _pull_out(self) -> None:
        port = self._port
        if port is None or not port.is_open:
            return
        loop = asyncio.get_running_loop()
        loop.remove_reader(port.master_fd)
        loop.remove_writer(port.master_fd)
        port.close()
        self._line.clear()

    def _on_readable(self) -> None:
        port = self._port_or_raise()
        try:
            data = os.read(port.master_fd, 4096)
        except BlockingIOError:
            return
        except OSError as error:  # nobody holds the slave end: nothing to read
            if error.errno != errno.EIO:
                raise
            return
        commands = len(self.firmware.commands)
        self.firmware.receive_data(data, self.now())
        if self.record is not None:
            self.record.received(self.firmware.commands[commands:], self.clock, self.now())
        if self.firmware.mode is not BoardMode.IDLE:
            self.followed.set()
        self._flush()

    def _flush(self) -> None:
        """Queue what the firmware produced; let the ticker look at the new deadline."""
        self._line.queue(self.firmware.data_to_send())
        self._wake.set()

    async def _tick_loop(self) -> None:
        """Wake the firmware at its deadlines (clock seconds, UPDATE-mode reports)."""
        while True:
            deadline = self.firmware.next_deadline(self.now())
            timeout = None if deadline is None else max(0.0, deadline - self.now())
            self._wake.clear()
            await wait_at_most(self._wake.wait(), timeout)
            self.firmware.receive_tick(self.now())
            self._line.queue(self.firmware.data_to_send())


def _result_to_signal(game: chess.pgn.Game, plies: int | None) -> str | None:
    """The result worth signalling with the kings, or None (mate shows itself, §9.1)."""
    result = game.headers.get("Result", "*")
    if result not in ("1-0", "0-1", "1/2-1/2") or plies is not None:
        return None
    board = game.end().board()
    if board.is_checkmate() or board.is_stalemate():
        return None
    return result
