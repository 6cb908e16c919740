"""Increments and periods for clocks in mode 23, where the computer is in charge (pure).

A DGT clock in mode 23 ("computer controlled", docs/protocol.md §8) counts down the running
side and, with the lever flag set, switches sides on a lever press — but adds nothing:
no increment, no next period. The computer must. :class:`IncrementControl` watches the
clock readings of one board; at each lever press it answers with the reading as it must
be (the mover's time plus what the time control adds after that move: the increment,
and the next period's time after the move that completes a period's quota, e.g. 1800 s +
30 s after move 40 of "40/5400+30:1800+30") and the SETNRUN command that makes the clock
show it (§7.5). Readings that arrive before the clock confirmed the new times are stale
and dropped.

Which move a press completes comes from the game when it is known (``move_number``: the
tracker's position, so a daemon restarted mid-game still adds the bonus after move 40);
otherwise moves are counted as a multi-period DGT clock counts them, one per lever press
of that side since the clock was last set (:meth:`IncrementControl.reset`). White's side
is the configured one, else the side that runs first.

The opponent may press while the SETNRUN is on its way (a fast reply). If the clock
carries the command out after that press, it sets the old running side again and the
press is undone; the first reading after the acknowledgement then shows the opponent's
time running once more. The press seen meanwhile is then carried out here: the opponent's
time as it was at the press, plus what that move earns, and the mover's time running
since then. The SETNRUN that carries it out sets running a side the clock does not run,
so a press by that side while it is on its way does nothing (that lever is already
down) and no reading shows it: when the clock acknowledges it and the game shows that
side's move on its way (``moving``), that press is carried out too, and so on, so that
any number of late SETNRUNs end with the clock running the side to move.

A press that completes no move gains nothing: the press that starts the clock at the
round's start (Black's lever, to start White's time; or either lever pressed before White
has moved), which the game reports as move 0 (:data:`MoveNumber`).

Who adds the time is decided per game from what the clock itself does: a clock that
turns out to add it (a normal Fischer or multi-period option, not mode 23) is left alone
from the first press that gained the time on its own, *whenever* that happens (a clock
swapped between rounds, or set by hand), so dgtcast never adds time to a clock that adds
its own. :meth:`IncrementControl.reset` forgets the decision: the daemon calls it at
every round change, reconnection and clock set (docs/daemon.md, "Mode 23").

Presses made while nobody answered them (the daemon down, the board unplugged) come back
from the board's memory with the times the clock wrote at each lever change (§6): on a
mode 23 clock, without any of the increments and periods nobody added. While that log is
replayed, :class:`~daemon.mode23.gap_increments.GapIncrements` adds to every such press
what the control gave the mover up to and including it, so each move's ``[%clk]`` is the
time the clock should have shown; what both sides still lack is then given to the clock
once, in one SETNRUN (:meth:`IncrementControl.owe`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Literal

from daemon.game.clock import other_side
from daemon.game.durations import ClockRules, TimeControl
from daemon.mode23.cut_setting import not_taken
from daemon.mode23.gap_increments import (
    MoveNumber,
    hidden_presses,
    plus_seconds,
    presser_of,
    side_seconds,
)
from daemon.mode23.undone_presses import only_ran, redo_press, swallowed_press
from drivers.dgt.commands import ClockSetAndRun
from drivers.observations import ClockObserved, ClockSide

__all__ = ["IncrementControl", "IncrementState", "MoveNumber"]

#: The side whose move the board shows on its way (not completed yet), from the game.
Moving = Callable[[], ClockSide | None]


class IncrementState(enum.Enum):
    """Whether dgtcast adds the increments of this clock."""

    WATCHING = "watching"  # no press that gains time seen yet
    ADDING = "adding"  # mode 23: dgtcast adds each increment and period
    SETTING = "setting"  # a SETNRUN is on its way; readings are stale until it is done
    CLOCK_ADDS = "clock_adds"  # the clock adds time itself: nothing to do
    REFUSED = "refused"  # the clock refused a SETNRUN: not in mode 23, nothing to do


#: States in which dgtcast adds nothing to the clock.
_HANDS_OFF = frozenset({IncrementState.CLOCK_ADDS, IncrementState.REFUSED})


class IncrementControl:
    """Adds what the time control gives after each lever press (mode 23).

    Args:
        rules: each colour's time control, or one control for both.
        white_side: the clock side White sits at; None = the side that runs first.
        move_number: the move a press by a side completes, from the game; without it
            (or when it answers None) presses are counted.
        moving: the side whose move the game holds pending; without it a press
            swallowed by a SETNRUN that switched sides is seen only on the board.
    """

    def __init__(
        self,
        rules: ClockRules | TimeControl,
        *,
        white_side: ClockSide | None = None,
        move_number: MoveNumber | None = None,
        moving: Moving | None = None,
    ) -> None:
        self.rules = rules if isinstance(rules, ClockRules) else ClockRules.uniform(rules)
        self._move_number = move_number
        self._moving = moving
        self.state = IncrementState.WATCHING
        self._configured = white_side
        self._white_side = white_side
        self._presses: dict[ClockSide, int] = {}
        self._last: ClockObserved | None = None
        self._seed: ClockObserved | None = None  # the journal's reading (see reset)
        self._reply: ClockObserved | None = None  # a press seen while a SETNRUN was on its way
        self._owed: dict[ClockSide, int] = {}  # what the clock lacks from a gap (see owe)
        self._deferring = False  # readings are old: owe what presses earn (see defer)
        self._due: dict[ClockSide, int] = {}  # what the last SETNRUN added per side
        self._sent: ClockObserved | None = None  # the reading the last SETNRUN set
        self._heard: ClockObserved | None = None  # the last reading as the clock showed it
        self._stale: ClockObserved | None = None  # the last reading while SETTING
        self._carried: ClockSide | None = None  # set running by the SETNRUN, not the clock
        self._swallowed = False  # that side's press was carried out (see receive_done)
        #: a SETNRUN in doubt, what it gave, and whether no reading came since (check_cut)
        self._cut: tuple[ClockObserved, Mapping[ClockSide, int], bool] | None = None
        self._followed = False  # the last reading was one taken live (see hidden)
        self._hidden: list[ClockObserved] = []  # see hidden
        self._next: dict[ClockSide, int] = {}  # the move the reply to a hidden press makes

    @property
    def presses(self) -> dict[ClockSide, int]:
        """The move each side's last press completed (the clock's move counters)."""
        return dict(self._presses)

    def reset(self, last: ClockObserved | None = None) -> None:
        """A new game, a clock set or a reconnection: count moves afresh, learn White's
        side again, and decide again who adds the time (the clock may be another one).

        ``last``: on a reconnection (a restart too), the last reading the journal holds.
        When the first reading now shows the other side running and neither time grew
        (a mode 23 clock adds nothing by itself), a lever was pressed while nobody
        listened: that press gets its increment like any other.
        """
        self._presses.clear()
        self._white_side = self._configured
        self._last, self._followed = None, False
        self._seed = last
        self._reply = None
        self._heard = None
        self._owed = {}
        self._deferring = False
        self._carried, self._swallowed = None, False
        self._sent = None
        self._cut = None
        self.state = IncrementState.WATCHING

    def clock_set(self, left_seconds: int, right_seconds: int) -> None:
        """The clock took new times (dgtcast set it): as :meth:`reset`, but a reading heard
        since it took them stays the one the next press is measured from, and its running
        side is White's (the press that starts the clock). Such a reading comes in the same
        read as the clock's ack, so it is taken before whoever set the clock hears of the
        ack; a reading from before the set is told apart by times above the set ones."""
        heard = self._heard
        self.reset()
        if (
            heard is not None
            and heard.connected
            and heard.left_seconds <= left_seconds + 1
            and heard.right_seconds <= right_seconds + 1
        ):
            self._seed = heard
            if self._white_side is None:
                self._white_side = heard.running

    def owe(self, seconds: Mapping[ClockSide, int], *, last: ClockObserved | None = None) -> None:
        """The clock lacks ``seconds`` per side: the increments of presses nobody answered,
        already in their moves' ``[%clk]`` (:class:`GapIncrements`). The next connected
        reading gets them, and one SETNRUN puts them on the clock. The journal's reading
        given to :meth:`reset` is then no guide any more (the memory told the presses);
        ``last``, the reading the memory's replay ended on, is: a press right after it
        is a press like any other."""
        self._owed = {side: value for side, value in seconds.items() if value}
        self._seed, self._followed = None, False
        if last is not None:
            self._last = last

    def check_cut(
        self, sent: ClockObserved | None, gave: Mapping[ClockSide, int] | None = None
    ) -> None:
        """A SETNRUN that set ``sent``, giving ``gave`` per side, was cut by the link before
        a reading showed whether the clock took it (None: none is in doubt). The readings
        that follow tell (:func:`~daemon.mode23.cut_setting.not_taken`); one that shows
        the clock never took it has what the SETNRUN gave owed, like a gap's increments."""
        self._cut = None if sent is None else (sent, dict(gave or {}), True)

    @property
    def adder(self) -> Literal["clock", "refused"] | None:
        """Who adds the time, as journalled with each reading: the clock itself, nobody
        (it refused dgtcast's settings), or None (dgtcast, or not decided yet)."""
        if self.state is IncrementState.CLOCK_ADDS:
            return "clock"
        return "refused" if self.state is IncrementState.REFUSED else None

    @property
    def lacking(self) -> dict[ClockSide, int]:
        """What the readings returned show that the clock has not been given yet (while
        deferring: what is owed)."""
        if not self._deferring:
            return {}
        return {side: seconds for side, seconds in self._owed.items() if seconds}

    def forget_last(self) -> None:
        """The board's memory accounts for the presses since the last reading (a memory
        read again while the readings were held): the next reading starts afresh."""
        self._last, self._followed = None, False
        self._reply = None
        self._heard = None

    def defer(self, deferring: bool) -> None:
        """While ``deferring``, readings arrive long after the clock showed them (the
        line's backlog behind the board's memory): a command computed from one would set
        the clock back in time. What their presses earn is owed instead (each reading
        shows it, as :class:`GapIncrements` does), and paid with one SETNRUN at the
        first reading once deferring ends."""
        self._deferring = deferring

    def leave_alone(self) -> None:
        """The clock was seen adding its own time (in the board's memory): add nothing."""
        self._owed = {}
        self._seed = None
        self.state = IncrementState.CLOCK_ADDS

    def receive_reading(
        self, reading: ClockObserved
    ) -> tuple[ClockObserved | None, ClockSetAndRun | None]:
        """Take one reading; returns the reading to record (None: stale) and a command to send.

        After a command, call :meth:`receive_done` when the clock acknowledged it (or failed).
        """
        if self._stale_reading(reading):
            return None, None
        self._heard = reading
        followed, self._followed = self._followed, True
        unheard = self._unheard(reading)
        lost = hidden_presses(self._last, reading) if followed and unheard is reading else None
        self._next = {}
        if lost is not None:  # its press earns like one deferred, paid with this reading's
            deferring, self._deferring = self._deferring, True
            self._hidden = [self._take(lost)[0]]
            self._deferring = deferring
        return self._take(unheard)

    def hidden(self) -> list[ClockObserved]:
        """The reading lost before the one just taken, to record before it, when both
        levers were pressed meanwhile (:func:`hidden_presses`): its press's increment is
        owed and given with the next SETNRUN. Drained."""
        hidden, self._hidden = self._hidden, []
        return hidden

    def _take(self, reading: ClockObserved) -> tuple[ClockObserved, ClockSetAndRun | None]:
        last, self._last = self._last, reading
        if self._white_side is None and reading.running is not None:
            self._white_side = reading.running
        earned = self._earned(last, reading)
        if self.state in _HANDS_OFF:
            return reading, None
        self._check_cut(reading, on_time=not self._deferring)
        if self._deferring:
            for side, seconds in earned.items():
                self._owed[side] = self._owed.get(side, 0) + seconds
            return self._with_owed(reading), None
        due = dict(earned)
        if reading.connected:  # what a gap owes goes with the first reading that can take it
            for side, seconds in self._owed.items():
                due[side] = due.get(side, 0) + seconds
            self._owed = {}
        return (reading, None) if not due else self._set(reading, due)

    def probe_cut(self, reading: ClockObserved) -> None:
        """``reading`` came on time, before the board's memory on the line (it is taken
        later, at the read's end): what it tells of a SETNRUN the link cut
        (:meth:`check_cut`)."""
        self._check_cut(reading, on_time=True)

    def _check_cut(self, reading: ClockObserved, *, on_time: bool) -> None:
        """Owe what a SETNRUN the link cut gave, if ``reading`` shows the clock never took
        it (:meth:`check_cut`)."""
        if self._cut is None or not reading.connected:
            return
        sent, gave, first = self._cut
        unpaid = not_taken(sent, gave, reading, on_time=on_time, first=first)
        self._cut = (sent, gave, False)
        if unpaid is not None:  # told: asked no more
            self._cut = None
            for side, seconds in unpaid.items():
                self._owed[side] = self._owed.get(side, 0) + seconds

    def _is_reply(self, reading: ClockObserved) -> bool:
        """Whether a reading that came while a SETNRUN was on its way shows a press: the
        clock runs neither the side the SETNRUN set running nor the side it ran before it
        (a reading sent before the command reached the clock shows the latter)."""
        sent, before = self._last, self._heard
        if sent is None or reading.running in (None, sent.running):
            return False
        return before is None or reading.running is not before.running

    def _stale_reading(self, reading: ClockObserved) -> bool:
        """Whether ``reading`` shows the clock before it took the last SETNRUN: one that
        came while it was on its way, or after its ack (:meth:`_before_set`). A press it
        shows is carried out once the clock's own reading comes
        (:func:`~daemon.mode23.undone_presses.redo_press`)."""
        if self.state is IncrementState.SETTING:
            if self._is_reply(reading):
                self._reply = reading
            self._stale = reading
            return True
        if not self._before_set(reading):
            return False
        sent = self._sent
        if sent is not None and reading.running not in (None, sent.running):
            self._reply = reading  # a press the SETNRUN then undid
        return True

    def _before_set(self, reading: ClockObserved) -> bool:
        """Whether a reading that came after the last SETNRUN's ack shows the clock as it
        was before it took the SETNRUN (a clock may send a press's reading after the
        ack): a side shows less than the SETNRUN gave it, beyond what it can have run
        since (half the time given, at least 3 s, for the rounding of the readings)."""
        sent = self._sent
        if sent is None or self.state is not IncrementState.ADDING or not reading.connected:
            return False
        ran = max(0.0, reading.at - sent.at)
        return any(
            given >= 3 and side_seconds(reading, side) < side_seconds(sent, side) - given / 2 - ran
            for side, given in self._due.items()
        )

    def _earned(self, last: ClockObserved | None, reading: ClockObserved) -> dict[ClockSide, int]:
        """What the press between ``last`` and ``reading`` earns its mover (none: no press,
        the press that starts the clock, or a clock found adding its own time)."""
        mover = presser_of(last, reading)
        if mover is None or last is None or self.state in _HANDS_OFF:
            return {}
        known = None if self._move_number is None else self._move_number(mover)
        move = self._presses.get(mover, 0) + 1 if known is None else known
        move = self._next.pop(mover, move)
        if move < 1:  # the clock started: no move completed, nothing to add
            return {}
        self._presses[mover] = move
        # a hidden press's reply: the game has not taken the hidden press yet
        self._next = {other_side(mover): move + (mover is self._white_side)}
        expected = self._control(mover).added_after(move)
        if expected == 0:
            return {}
        gained = side_seconds(reading, mover) - side_seconds(last, mover)
        if 2 * gained >= expected:  # the clock added it itself: never add it again
            self.state = IncrementState.CLOCK_ADDS
            self._owed = {}
            return {}
        return {mover: expected}

    def _with_owed(self, reading: ClockObserved) -> ClockObserved:
        """While deferring, the reading as the clock should show it: plus what is owed."""
        lacking = self.lacking
        return plus_seconds(reading, lacking) if lacking and reading.connected else reading

    def _unheard(self, reading: ClockObserved) -> ClockObserved:
        """Presses nobody heard: one made while the daemon was away (the journal's reading
        before it, see :meth:`reset`), or one undone by a SETNRUN
        (:func:`~daemon.mode23.undone_presses.redo_press`)."""
        seed, self._seed = self._seed, None
        if self._last is None and seed is not None and only_ran(seed, reading):
            self._last = seed
        reply, self._reply = self._reply, None
        if reply is not None and self._last is not None and reading.running is self._last.running:
            reading = redo_press(reply, reading, self._last, self._due)
        swallowed, self._swallowed = self._swallowed, False
        if swallowed and self._last is not None and self._last.running is not None:
            reading = swallowed_press(reading, self._last)
        return reading

    def receive_refused(self) -> None:
        """The clock refused the SETNRUN (an error ack, §8: it is not in mode 23): add
        nothing to this clock, and record its readings as it shows them, until the next
        :meth:`reset` (a clock set, a new round, a reconnection) tries again."""
        self.state = IncrementState.REFUSED
        self._owed = {}
        self._reply = None
        self._deferring = False

    def receive_done(self) -> ClockObserved | None:
        """The SETNRUN was acknowledged, or failed: readings count again.

        Returns:
            A reading to take again at once (:meth:`receive_reading`) when a press was
            undone or swallowed while the SETNRUN was on its way: the opponent pressed
            (a reading showed it), and the clock runs the wrong side until the press is
            carried out; or the SETNRUN set running a side the clock did not run and the
            game shows that side's move on its way: its lever did nothing meanwhile, or
            its press is still to come (then it does nothing). None otherwise.
        """
        stale, self._stale = self._stale, None
        carried, self._carried = self._carried, None
        if self.state is IncrementState.SETTING:
            self.state = IncrementState.ADDING
        if self.state is not IncrementState.ADDING:
            return None
        if self._reply is not None and stale is not None:
            return stale
        if carried is None or self._moving is None or self._moving() is not carried:
            return None
        self._swallowed = True
        shown = stale is not None and stale.running is carried  # since the SETNRUN
        return stale if shown else self._last

    def _control(self, side: ClockSide) -> TimeControl:
        white = self._white_side is None or side is self._white_side
        return self.rules.white if white else self.rules.black

    def _set(
        self, reading: ClockObserved, seconds: Mapping[ClockSide, int]
    ) -> tuple[ClockObserved, ClockSetAndRun]:
        """The reading with ``seconds`` added per side, and the SETNRUN that shows it."""
        corrected = plus_seconds(reading, seconds)
        running = corrected.running
        command = ClockSetAndRun(
            left_seconds=corrected.left_seconds,
            right_seconds=corrected.right_seconds,
            run="paused" if running is None else running.value,
            toggle_on_lever=True,
        )
        heard = self._heard
        switched = heard is not None and running is not None and heard.running is not running
        self._carried = running if switched else None
        self._last = self._sent = corrected
        self._due = dict(seconds)
        self.state = IncrementState.SETTING
        return corrected, command
