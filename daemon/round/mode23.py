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
since then.

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
replayed, :class:`GapIncrements` adds to every such press what the control gave the mover
up to and including it (each move's own increment, plus the earlier ones of the gap the
clock still lacks), so each move's ``[%clk]`` is the time the clock should have shown;
what both sides still lack is then given to the clock once, in one SETNRUN
(:meth:`IncrementControl.owe`). A log in which a side's time grew at a press shows a
clock that adds its own time (:func:`clock_gained`): nothing is added then.
"""

from __future__ import annotations

import dataclasses
import enum
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence

import chess

from daemon.game.durations import ClockRules, TimeControl
from daemon.game.state import TrackerState
from daemon.game.tracker import GameTracker
from drivers.dgt.commands import ClockSetAndRun
from drivers.observations import ClockObserved, ClockSide

__all__ = [
    "GapIncrements",
    "IncrementControl",
    "IncrementState",
    "MoveNumber",
    "clock_gained",
    "game_move_number",
    "move_number_of",
]

#: The number of the move a press by a side completes, from the game; None = unknown,
#: 0 = none (the press starts the clock before White's first move).
MoveNumber = Callable[[ClockSide], int | None]


def move_number_of(board: chess.Board, color: chess.Color) -> int:
    """The number of ``color``'s move that a press now completes.

    The move is usually still pending (``color`` to move in ``board``): the full-move
    number. If it was already published before the press (its placement settled), White's
    is still the full-move number and Black's the one before it.
    """
    return board.fullmove_number - (color == chess.BLACK and board.turn == chess.WHITE)


def game_move_number(tracker: GameTracker, side: ClockSide) -> int | None:
    """The move a press on ``side`` completes in the tracker's game (None: no game, or the
    sides are unknown; 0: none, the start position stands and the press starts the clock)."""
    if tracker.state not in (TrackerState.PLAYING, TrackerState.OUT_OF_SYNC):
        return None
    if tracker.start_stands:
        return 0
    white = tracker.white_side
    if white is None:
        return None
    return move_number_of(tracker.board, chess.WHITE if side is white else chess.BLACK)


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
    """

    def __init__(
        self,
        rules: ClockRules | TimeControl,
        *,
        white_side: ClockSide | None = None,
        move_number: MoveNumber | None = None,
    ) -> None:
        self.rules = rules if isinstance(rules, ClockRules) else ClockRules.uniform(rules)
        self._move_number = move_number
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
        self._heard: ClockObserved | None = None  # the last reading as the clock showed it
        self._stale: ClockObserved | None = None  # the last reading while SETTING

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
        self._last = None
        self._seed = last
        self._reply = None
        self._heard = None
        self._owed = {}
        self._deferring = False
        self.state = IncrementState.WATCHING

    def owe(self, seconds: Mapping[ClockSide, int], *, last: ClockObserved | None = None) -> None:
        """The clock lacks ``seconds`` per side: the increments of presses nobody answered,
        already in their moves' ``[%clk]`` (:class:`GapIncrements`). The next connected
        reading gets them, and one SETNRUN puts them on the clock. The journal's reading
        given to :meth:`reset` is then no guide any more (the memory told the presses);
        ``last``, the reading the memory's replay ended on, is: a press right after it
        is a press like any other."""
        self._owed = {side: value for side, value in seconds.items() if value}
        self._seed = None
        if last is not None:
            self._last = last

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
        self._last = None
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
        if self.state is IncrementState.SETTING:
            if self._is_reply(reading):
                self._reply = reading
            self._stale = reading
            return None, None
        self._heard = reading
        reading = self._unheard(reading)
        last, self._last = self._last, reading
        if self._white_side is None and reading.running is not None:
            self._white_side = reading.running
        earned = self._earned(last, reading)
        if self.state in _HANDS_OFF:
            return reading, None
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

    def _is_reply(self, reading: ClockObserved) -> bool:
        """Whether a reading that came while a SETNRUN was on its way shows a press: the
        clock runs neither the side the SETNRUN set running nor the side it ran before it
        (a reading sent before the command reached the clock shows the latter)."""
        sent, before = self._last, self._heard
        if sent is None or reading.running in (None, sent.running):
            return False
        return before is None or reading.running is not before.running

    def _earned(self, last: ClockObserved | None, reading: ClockObserved) -> dict[ClockSide, int]:
        """What the press between ``last`` and ``reading`` earns its mover (none: no press,
        the press that starts the clock, or a clock found adding its own time)."""
        mover = _presser(last, reading)
        if mover is None or last is None or self.state in _HANDS_OFF:
            return {}
        known = None if self._move_number is None else self._move_number(mover)
        move = self._presses.get(mover, 0) + 1 if known is None else known
        if move < 1:  # the clock started: no move completed, nothing to add
            return {}
        self._presses[mover] = move
        expected = self._control(mover).added_after(move)
        if expected == 0:
            return {}
        gained = _seconds(reading, mover) - _seconds(last, mover)
        if 2 * gained >= expected:  # the clock added it itself: never add it again
            self.state = IncrementState.CLOCK_ADDS
            self._owed = {}
            return {}
        return {mover: expected}

    def _with_owed(self, reading: ClockObserved) -> ClockObserved:
        """While deferring, the reading as the clock should show it: plus what is owed."""
        lacking = self.lacking
        return _plus(reading, lacking) if lacking and reading.connected else reading

    def _unheard(self, reading: ClockObserved) -> ClockObserved:
        """Presses nobody heard: one made while the daemon was away (the journal's reading
        before it, see :meth:`reset`), or one undone by a SETNRUN (:func:`_redo_press`)."""
        seed, self._seed = self._seed, None
        if self._last is None and seed is not None and _only_ran(seed, reading):
            self._last = seed
        reply, self._reply = self._reply, None
        if reply is not None and self._last is not None and reading.running is self._last.running:
            reading = _redo_press(reply, reading, self._last, self._due)
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
            A reading to take again at once (:meth:`receive_reading`) when the opponent
            pressed while the SETNRUN was on its way: the clock then runs the wrong side
            until the press is carried out, and a player who moves meanwhile presses a
            lever that does nothing. None otherwise.
        """
        stale, self._stale = self._stale, None
        if self.state is IncrementState.SETTING:
            self.state = IncrementState.ADDING
        if self._reply is None or stale is None or self.state is not IncrementState.ADDING:
            return None
        return stale

    def _control(self, side: ClockSide) -> TimeControl:
        white = self._white_side is None or side is self._white_side
        return self.rules.white if white else self.rules.black

    def _set(
        self, reading: ClockObserved, seconds: Mapping[ClockSide, int]
    ) -> tuple[ClockObserved, ClockSetAndRun]:
        """The reading with ``seconds`` added per side, and the SETNRUN that shows it."""
        corrected = _plus(reading, seconds)
        running = corrected.running
        command = ClockSetAndRun(
            left_seconds=corrected.left_seconds,
            right_seconds=corrected.right_seconds,
            run="paused" if running is None else running.value,
            toggle_on_lever=True,
        )
        self._last = corrected
        self._due = dict(seconds)
        self.state = IncrementState.SETTING
        return corrected, command


class GapIncrements:
    """Adds the missing increments to the clock readings replayed from a board's memory.

    Each press of the log completes a move, numbered from the game as it is replayed
    (``move_number``, else counted per side); the mover is owed what the control adds after
    it. Every reading then shows each side's time as the clock should have shown it: the
    logged time plus all that side is owed so far. A side's time that comes from before
    the log (the last reading the game holds: already what it should be) is left as is
    until that side presses.

    Args:
        control_of: the time control of the player at a side.
        move_number: the move a press by a side completes, from the game.
        first: the reading the replay starts from (the game's last one).
        owed: what the clock still lacked before this log (an earlier gap whose times
            never reached it).
        ledger: the presses of this log were followed live (a log read again to heal a
            board out of sync): the presses seen since the game's last move, in order,
            each ``(side, the presser's time as recorded)``, and ``("set", 0)`` where the
            session set the clock to all it lacked. A replayed press takes the time
            recorded for it (what the clock lacked then is that minus the logged time);
            presses beyond the ledger (made while the log was read) are owed as in a gap.
    """

    def __init__(
        self,
        control_of: Callable[[ClockSide], TimeControl],
        move_number: MoveNumber,
        first: ClockObserved | None,
        owed: Mapping[ClockSide, int],
        *,
        ledger: Sequence[tuple[str, int]] | None = None,
    ) -> None:
        self._ledger = None if ledger is None else deque(ledger)
        self._control_of = control_of
        self._move_number = move_number
        self._last = first
        self._owed = {side: owed.get(side, 0) for side in ClockSide}
        # what each side's logged time lacks, as of its last press in the log: what the
        # clock lacked then (a setting later gives the clock its due, not the log)
        self._lags: dict[ClockSide, int] = {}
        self._presses: dict[ClockSide, int] = {}

    @property
    def owed(self) -> dict[ClockSide, int]:
        """Seconds each side's clock lacks after the log (only sides that lack some)."""
        return {side: value for side, value in self._owed.items() if value}

    def receive(self, reading: ClockObserved) -> ClockObserved:
        """One replayed reading, as the clock should have shown it. Call it just before the
        game takes the reading (the move the press completes is then on its way)."""
        mover = _presser(self._last, reading)
        self._last = reading
        if mover is not None:
            recorded = self._follow_ledger()
            known = self._move_number(mover)
            move = self._presses.get(mover, 0) + 1 if known is None else known
            earned = 0
            if move >= 1:
                self._presses[mover] = move
                earned = self._control_of(mover).added_after(move)
                self._owed[mover] += earned
            if recorded is not None:  # as the session saw it: the clock lacked the rest
                # (all it earned when the session took it for a press that starts the
                # clock, the move's field updates lost: it recorded the time logged)
                lacked = recorded - _seconds(reading, mover)
                self._owed[mover] = lacked if lacked > 0 else earned
            self._lags[mover] = self._owed[mover]
        return _plus(reading, self._lags)

    def _follow_ledger(self) -> int | None:
        """The time recorded for the log's next press (None: beyond the ledger); a setting
        before it gave the clock all it lacked."""
        ledger = self._ledger
        while ledger and ledger[0][0] == "set":
            ledger.popleft()
            self._owed = dict.fromkeys(ClockSide, 0)
        return ledger.popleft()[1] if ledger else None

    def finish(self) -> None:
        """The log is replayed: a setting after its last press gave the clock its due."""
        if self._ledger and any(kind == "set" for kind, _ in self._ledger):
            self._owed = dict.fromkeys(ClockSide, 0)


def clock_gained(first: ClockObserved | None, readings: Iterable[ClockObserved]) -> bool:
    """Whether a side's time grew at a press (beyond a second of rounding) in readings
    that follow ``first``: a clock that adds its own time; a mode 23 clock only counts
    down (§8)."""
    last = first
    for reading in readings:
        mover = _presser(last, reading)
        if mover is not None and last is not None and _gain(last, reading, mover) > 1:
            return True
        last = reading
    return False


def _gain(before: ClockObserved, after: ClockObserved, side: ClockSide) -> int:
    return _seconds(after, side) - _seconds(before, side)


def _plus(reading: ClockObserved, seconds: Mapping[ClockSide, int]) -> ClockObserved:
    return dataclasses.replace(
        reading,
        left_seconds=reading.left_seconds + seconds.get(ClockSide.LEFT, 0),
        right_seconds=reading.right_seconds + seconds.get(ClockSide.RIGHT, 0),
    )


def _redo_press(
    reply: ClockObserved, now: ClockObserved, sent: ClockObserved, due: Mapping[ClockSide, int]
) -> ClockObserved:
    """The reading as it would be had the clock not undone ``reply``'s press.

    ``sent`` is the reading the SETNRUN set (the opponent running), adding ``due`` to each
    side; the opponent pressed at ``reply``: its time stays as it was then, plus what the
    SETNRUN gave it (owed from a gap), and the mover's has run since.
    """
    assert reply.running is not None
    assert sent.running is not None
    opponent, mover = sent.running, reply.running
    ran = max(0, round(now.at - reply.at))
    times = {
        opponent: _seconds(reply, opponent) + due.get(opponent, 0),
        mover: max(0, _seconds(sent, mover) - ran),
    }
    return dataclasses.replace(
        now,
        left_seconds=times[ClockSide.LEFT],
        right_seconds=times[ClockSide.RIGHT],
        running=mover,
        lever=mover,
    )


def _only_ran(before: ClockObserved, now: ClockObserved) -> bool:
    """Whether ``now`` can follow ``before`` on a clock that only ran (nobody set it, and
    it added nothing: mode 23); a second's slack for the rounding of the readings."""
    return (
        before.connected
        and now.connected
        and now.left_seconds <= before.left_seconds + 1
        and now.right_seconds <= before.right_seconds + 1
    )


def _presser(last: ClockObserved | None, reading: ClockObserved) -> ClockSide | None:
    """The side that pressed its lever between two readings, if one did."""
    if last is None or last.running is None or reading.running is None:
        return None
    return last.running if reading.running is not last.running else None


def _seconds(reading: ClockObserved, side: ClockSide) -> int:
    return reading.left_seconds if side is ClockSide.LEFT else reading.right_seconds
