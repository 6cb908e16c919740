"""A DGT XL / DGT 3000 chess clock: two Fischer times, a lever, a display, acks.

Pure model: every method takes ``now`` (seconds, any monotonic origin) and nothing here
reads a clock or sleeps. What it implements (docs/protocol.md):

* Fischer "from move 1": both sides start at base + one increment, and the mover gains
  the increment on each lever press (§7.2 "Observed").
* Multi-period controls, as the DGT clocks' own period options run them (§8, e.g. XL
  option 13): each side's lever presses are counted, and after the press that ends a
  period's quota the next period's time is added.
* The side whose lever is up runs; a lever press while one's own time runs hands the
  move over. The display changes on whole seconds; at 0:00:00 the flag falls and the
  clock blocks (flag bit 0x10, D0 cleared, §7.2).
* Clock commands answer with acks (§7.3): ack0 0x10, ack1 = the command id; the version
  ack carries the version nibbles in ack2; SetNRun runs only in mode 23, else ack0 0x40.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "ACK_ERROR",
    "ACK_OK",
    "COMPUTER_MODE",
    "ChessClock",
    "ClockAckReply",
    "ClockModel",
    "ClockReading",
    "ClockSettings",
    "CommandId",
    "FaceReading",
    "RunState",
    "Side",
    "other_side",
]

Side = Literal["left", "right"]
RunState = Literal["left", "right", "paused"]

#: ack0 of an accepted clock command, and of a refused one (§7.3).
ACK_OK = 0x10
ACK_ERROR = 0x40
#: Option number of the computer-controlled mode in which SetNRun is executed (§8).
COMPUTER_MODE = 23

_EPSILON = 1e-9


class CommandId(enum.IntEnum):
    """Clock command ids echoed in ack1 (docs/protocol.md §7.5)."""

    DISPLAY = 0x01
    ICONS = 0x02
    END = 0x03
    BUTTON = 0x08
    VERSION = 0x09
    SET_AND_RUN = 0x0A
    BEEP = 0x0B
    ASCII = 0x0C


class ClockModel(enum.Enum):
    """Which clock stands beside the board; drivers tell them apart by the version ack."""

    XL = "xl"
    DGT3000 = "dgt3000"

    @property
    def version(self) -> tuple[int, int]:
        """Firmware (main, sub); main 2 means a DGT 3000 (§7.3, ISS #108)."""
        return (2, 0) if self is ClockModel.DGT3000 else (1, 4)


def other_side(side: Side) -> Side:
    """The opposite side of the clock."""
    return "right" if side == "left" else "left"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockSettings:
    """How the arbiter set the clock up.

    Attributes:
        base_seconds / increment_seconds: the Fischer time control.
        mode: the clock's option number; only 23 accepts SetNRun (§8).
        model: XL (7-segment display) or DGT 3000 (text display).
        start_left / start_right: a start time that differs from base + increment, to
            emulate a clock set up wrongly.
        lever_up: the side whose lever is up before the start (whose time runs first).
        periods: (move number, seconds) pairs: after a side's press for that move, the
            side also gains those seconds (a new period), e.g. ``((40, 1800),)`` for
            "40 moves in 90 min, then 30 min".
    """

    base_seconds: int = 90 * 60
    increment_seconds: int = 30
    mode: int = 12
    model: ClockModel = ClockModel.XL
    start_left: int | None = None
    start_right: int | None = None
    lever_up: Side = "left"
    periods: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.base_seconds < 0 or self.increment_seconds < 0:
            raise ValueError("clock times cannot be negative")
        if any(move < 1 or seconds < 0 for move, seconds in self.periods):
            raise ValueError("periods are (move number >= 1, seconds >= 0) pairs")
        if self.start_seconds > 9 * 3600 + 59 * 60 + 59:
            raise ValueError("a DGT clock shows at most 9:59:59")

    @property
    def start_seconds(self) -> int:
        """Time on each side before the first move: base plus one increment (§7.2)."""
        return self.base_seconds + self.increment_seconds

    @classmethod
    def from_text(cls, text: str) -> ClockSettings:
        """Parse ``"90+30"`` (minutes + seconds) or ``"3"``; other fields keep defaults.

        Raises:
            ValueError: the text is not ``MINUTES[+SECONDS]``.
        """
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(?:\+\s*(\d+)\s*)?", text)
        if match is None:
            raise ValueError(f"time control {text!r} is not MINUTES[+SECONDS]")
        base = round(float(match.group(1)) * 60)
        increment = int(match.group(2) or 0)
        return cls(base_seconds=base, increment_seconds=increment)


@dataclass(frozen=True, slots=True, kw_only=True)
class FaceReading:
    """One side of the display, as the clock reports it over the board (§7.2)."""

    seconds: int
    flag_fallen: bool = False
    time_per_move: bool = False
    flag_shown: bool = False

    @property
    def hms(self) -> tuple[int, int, int]:
        """Hours, minutes and seconds shown."""
        minutes, seconds = divmod(self.seconds, 60)
        hours, minutes = divmod(minutes, 60)
        return hours, minutes, seconds


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockReading:
    """Both faces, which side runs and where the lever is."""

    left: FaceReading
    right: FaceReading
    running: Side | None
    lever_up: Side
    battery_low: bool = False

    def status(self) -> int:
        """The BWTIME status byte (§7.2): D0 running, D1 right high, D2 battery low,
        D3 left high, D4 right high (the pairing the real recordings show)."""
        status = 0x01 if self.running is not None else 0x00
        status |= 0x12 if self.lever_up == "right" else 0x08
        return status | (0x04 if self.battery_low else 0x00)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockAckReply:
    """The four ack bytes a clock sends for a command (§7.3)."""

    ack0: int
    ack1: int
    ack2: int = 0
    ack3: int = 0


@dataclass(slots=True)
class _Faces:
    remaining: dict[Side, float]
    time_per_move: bool
    flagged: Side | None = None
    beeps: list[float] = field(default_factory=list)


class ChessClock:
    """The clock's state machine: STOPPED → RUNNING(side) → BLOCKED after a flag.

    Args:
        settings: the time control and clock options.
        battery_low: show the battery-low indicator (status D2).
    """

    def __init__(self, settings: ClockSettings | None = None, *, battery_low: bool = False) -> None:
        self.settings = settings or ClockSettings()
        start = self.settings.start_seconds
        left = start if self.settings.start_left is None else self.settings.start_left
        right = start if self.settings.start_right is None else self.settings.start_right
        self._faces = _Faces(
            remaining={"left": float(left), "right": float(right)},
            time_per_move=self.settings.increment_seconds > 0,
        )
        self._increment = self.settings.increment_seconds
        self._periods = dict(self.settings.periods)
        self._moves: dict[Side, int] = {"left": 0, "right": 0}
        self._running: Side | None = None
        self._since = 0.0
        self._lever_up: Side = self.settings.lever_up
        self._toggle_on_lever = True
        self.battery_low = battery_low
        #: Text the display shows instead of the times (ClockAscii / ClockDisplay).
        self.display_text: str | None = None
        self._shown: tuple[object, ...] = ()  # what :attr:`_reading` shows
        self._reading: ClockReading | None = None

    # -- what the clock shows -------------------------------------------------------

    @property
    def running(self) -> Side | None:
        """The side whose time counts down, or None when stopped or blocked."""
        return self._running

    @property
    def flagged(self) -> Side | None:
        """The side whose flag fell (the clock is then blocked)."""
        return self._faces.flagged

    @property
    def lever_up(self) -> Side:
        """The side whose lever is up."""
        return self._lever_up

    @property
    def beeps(self) -> list[float]:
        """Durations (seconds) of the beeps asked for so far."""
        return list(self._faces.beeps)

    def remaining(self, side: Side, now: float) -> float:
        """Exact time left on ``side`` at ``now``."""
        self._advance(now)
        return self._faces.remaining[side]

    def reading(self, now: float) -> ClockReading:
        """What the clock reports at ``now`` (whole seconds, rounded up); the same object
        as the last time while the display shows the same (it is read many times a
        second, its display changes once)."""
        self._advance(now)
        faces = self._faces
        shown = (
            _shown_seconds(faces.remaining["left"]),
            _shown_seconds(faces.remaining["right"]),
            faces.flagged,
            faces.time_per_move,
            self._running,
            self._lever_up,
            self.battery_low,
        )
        reading = self._reading
        if reading is None or shown != self._shown:
            self._shown = shown
            reading = self._reading = ClockReading(
                left=self._face("left"),
                right=self._face("right"),
                running=self._running,
                lever_up=self._lever_up,
                battery_low=self.battery_low,
            )
        return reading

    def next_change(self, now: float) -> float | None:
        """When the display next changes by itself (a second ticks or a flag falls)."""
        self._advance(now)
        if self._running is None:
            return None
        left = self._faces.remaining[self._running]
        shown = _shown_seconds(left)
        return now + (left if shown <= 1 else left - (shown - 1))

    # -- what people do with it -----------------------------------------------------

    def start(self, now: float) -> None:
        """Press play: the side whose lever is up starts running (no-op when blocked)."""
        self._advance(now)
        if self._faces.flagged is None:
            self._running = self._lever_up

    def pause(self, now: float) -> None:
        """Press pause: both times stop."""
        self._advance(now)
        self._running = None

    def press_lever(self, side: Side, now: float) -> None:
        """The player on ``side`` presses their lever down: their move is complete.

        While that side runs it gains the increment and the other side starts. A stopped
        or blocked clock only moves the lever.
        """
        self._advance(now)
        self._lever_up = other_side(side)
        if self._running != side:
            return
        self._moves[side] += 1
        self._faces.remaining[side] += self._increment + self._periods.get(self._moves[side], 0)
        if self._toggle_on_lever:
            self._running = other_side(side)

    # -- clock commands (§7.5), each answered by an ack (§7.3) ---------------------

    def set_and_run(
        self,
        *,
        left_seconds: int,
        right_seconds: int,
        run: RunState,
        toggle_on_lever: bool,
        now: float,
    ) -> ClockAckReply:
        """SetNRun: set both times and what runs; refused unless in mode 23 (§7.5, §8)."""
        if self.settings.mode != COMPUTER_MODE:
            return ClockAckReply(ack0=ACK_ERROR, ack1=CommandId.SET_AND_RUN)
        self._advance(now)
        self._faces = _Faces(
            remaining={"left": float(left_seconds), "right": float(right_seconds)},
            time_per_move=False,
            beeps=self._faces.beeps,
        )
        self._increment = 0
        self._periods = {}
        self._toggle_on_lever = toggle_on_lever
        self._running = None if run == "paused" else run
        if run != "paused":
            self._lever_up = run
        self.display_text = None
        return ClockAckReply(ack0=ACK_OK, ack1=CommandId.SET_AND_RUN)

    def show_text(self, text: str, *, command_id: int = CommandId.ASCII) -> ClockAckReply:
        """Show ``text`` instead of the times (ASCII on a DGT 3000, segments on an XL)."""
        self.display_text = text
        return ClockAckReply(ack0=ACK_OK, ack1=command_id)

    def end_display(self) -> ClockAckReply:
        """Back to the normal time display (END, 0x03)."""
        self.display_text = None
        return ClockAckReply(ack0=ACK_OK, ack1=CommandId.END)

    def beep(self, seconds: float) -> ClockAckReply:
        """Beep for ``seconds`` (BEEP, 0x0B)."""
        self._faces.beeps.append(seconds)
        return ClockAckReply(ack0=ACK_OK, ack1=CommandId.BEEP)

    def version(self) -> ClockAckReply:
        """VERSION (0x09): ack2 = main version in the high nibble, sub in the low one."""
        major, minor = self.settings.model.version
        return ClockAckReply(ack0=ACK_OK, ack1=CommandId.VERSION, ack2=(major << 4) | minor)

    def acknowledge(self, command_id: int) -> ClockAckReply:
        """A plain ack for a command without effect here (ICONS, BUTTON)."""
        return ClockAckReply(ack0=ACK_OK, ack1=command_id)

    # -- internals ------------------------------------------------------------------

    def _advance(self, now: float) -> None:
        if now <= self._since:
            return
        side = self._running
        if side is not None:
            left = self._faces.remaining[side] - (now - self._since)
            if left <= _EPSILON:
                left = 0.0
                self._faces.flagged = side
                self._running = None
            self._faces.remaining[side] = left
        self._since = now

    def _face(self, side: Side) -> FaceReading:
        return FaceReading(
            seconds=_shown_seconds(self._faces.remaining[side]),
            flag_fallen=self._faces.flagged == side,
            time_per_move=self._faces.time_per_move,
        )


def _shown_seconds(remaining: float) -> int:
    return max(0, math.ceil(remaining - _EPSILON))
