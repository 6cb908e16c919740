"""Increments replayed from a board's memory on a mode 23 clock, and what clock readings
tell about presses (pure; the control of a connected clock: :mod:`daemon.mode23.control`).

Presses made while nobody answered them (the daemon down, the board unplugged) come back
from the board's memory with the times the clock wrote at each lever change (§6): on a
mode 23 clock, without any of the increments and periods nobody added.
:class:`GapIncrements` adds them as the log is replayed; :func:`clock_gained` tells a
clock that adds its own time.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence

from daemon.game.clock import other_side
from daemon.game.durations import TimeControl
from drivers.observations import ClockObserved, ClockSide

__all__ = [
    "GapIncrements",
    "MoveNumber",
    "clock_gained",
    "hidden_presses",
    "plus_seconds",
    "presser_of",
    "side_seconds",
    "total_seconds",
    "unfollowed_presses",
]

#: The number of the move a press by a side completes, from the game; None = unknown,
#: 0 = none (the press starts the clock before White's first move).
MoveNumber = Callable[[ClockSide], int | None]


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
            session set the clock to all it knew it lacked. A replayed press takes the
            time recorded for it (what the clock lacked then is that minus the logged
            time); one recorded with nothing added although it earned time (taken for a
            press that starts the clock) stays owed through later settings; presses
            beyond the ledger (made while the log was read) are owed as in a gap.
        unread: the positions in ``readings`` of presses the session never read (their
            moves made with the clock running and no press: a lost reading hid them):
            what they earned was never given, whatever settings came after.
    """

    def __init__(
        self,
        control_of: Callable[[ClockSide], TimeControl],
        move_number: MoveNumber,
        first: ClockObserved | None,
        owed: Mapping[ClockSide, int],
        *,
        ledger: Sequence[tuple[str, int]] | None = None,
        readings: Sequence[ClockObserved] = (),
        unread: frozenset[int] = frozenset(),
    ) -> None:
        self._ledger = None if ledger is None else deque(ledger)
        pressed, unread_presses, last = [], set[int](), first
        for position, reading in enumerate(readings):
            mover, last = presser_of(last, reading), reading
            if mover is not None:
                pressed.append((mover, side_seconds(reading, mover)))
                if position in unread:
                    unread_presses.add(len(pressed))
        increment = control_of(ClockSide.LEFT).increment
        numbers = [n for n in range(1, len(pressed) + 1) if n not in unread_presses]
        fit = [pressed[n - 1] for n in numbers]
        unfollowed = unfollowed_presses(fit, ledger or (), increment)
        self._unfollowed = frozenset(numbers[n - 1] for n in unfollowed) | unread_presses
        self._count = 0  # the log's presses so far
        self._control_of = control_of
        self._move_number = move_number
        self._last = first
        self._owed = {side: owed.get(side, 0) for side in ClockSide}
        # what each side's logged time lacks, as of its last press in the log: what the
        # clock lacked then (a setting later gives the clock its due, not the log)
        self._lags: dict[ClockSide, int] = {}
        self._presses: dict[ClockSide, int] = {}
        # what followed presses earned that the session never knew of (a press it took
        # for one that starts the clock): no setting of the session gave it to the clock
        self._unknown = dict.fromkeys(ClockSide, 0)

    @property
    def owed(self) -> dict[ClockSide, int]:
        """Seconds each side's clock lacks after the log (only sides that lack some)."""
        return {side: value for side, value in self._owed.items() if value}

    def receive(self, reading: ClockObserved) -> ClockObserved:
        """One replayed reading, as the clock should have shown it. Call it just before the
        game takes the reading (the move the press completes is then on its way)."""
        mover = presser_of(self._last, reading)
        self._last = reading
        if mover is not None:
            self._count += 1
            unfollowed = self._count in self._unfollowed
            recorded = self._follow_ledger(take=not unfollowed)
            known = self._move_number(mover)
            move = self._presses.get(mover, 0) + 1 if known is None else known
            earned = 0
            if move >= 1:
                self._presses[mover] = move
                earned = self._control_of(mover).added_after(move)
                self._owed[mover] += earned
                if unfollowed:  # no setting of the session gave it
                    self._unknown[mover] += earned
            if recorded is not None:  # as the session saw it: the clock lacked the rest
                # (all it earned when the session took it for a press that starts the
                # clock, the move's field updates lost: it recorded the time logged)
                lacked = recorded - side_seconds(reading, mover)
                if lacked <= 0:
                    self._unknown[mover] += earned
                self._owed[mover] = max(lacked, 0) + self._unknown[mover]
            self._lags[mover] = self._owed[mover]
        return plus_seconds(reading, self._lags)

    def _follow_ledger(self, *, take: bool = True) -> int | None:
        """The time recorded for the log's next press (None: beyond the ledger, or not
        ``take``: a press the session never saw); a setting before it gave the clock all
        it lacked."""
        ledger = self._ledger
        while ledger and ledger[0][0] == "set":
            ledger.popleft()
            self._owed = dict(self._unknown)
        return ledger.popleft()[1] if ledger and take else None

    def finish(self) -> None:
        """The log is replayed: a setting after its last press gave the clock its due."""
        if self._ledger and any(kind == "set" for kind, _ in self._ledger):
            self._owed = dict(self._unknown)


def unfollowed_presses(
    presses: Sequence[tuple[ClockSide, int]],
    ledger: Iterable[tuple[str, int]],
    increment: int,
) -> frozenset[int]:
    """The presses of a log (numbered from 1; each its side and the time it logged) that
    the session never saw although the ledger goes on past them: pairs hidden by a lost
    reading, the reply within its second, so that the readings showed the same side
    running before and after (mode 23: no time changed). A press the session saw was
    answered at once: the time it recorded is the logged one plus an increment (a second
    either way), and so is the next one's. Where a later press of the same side, and the
    press after it, fit the ledger's next two presses better than the press at its place
    (which then falls short of an increment: the side ran after it), the presses between
    were hidden. A press recorded with nothing added (taken for one that starts the
    clock), or with an increment or more (presses made while nobody listened are no
    pair), is no sign of it."""
    entries = [(kind, value) for kind, value in ledger if kind in ("left", "right")]
    unfollowed: set[int] = set()
    index = 0
    for entry, (kind, recorded) in enumerate(entries):
        if index >= len(presses):
            break
        side, seconds = presses[index]
        if side.value == kind and 0 < recorded - seconds < increment:
            best, error = 0, _misfit(presses, index, entries[entry : entry + 2], increment)
            for skipped in range(2, len(presses) - index, 2):
                misfit = _misfit(presses, index + skipped, entries[entry : entry + 2], increment)
                if misfit is not None and misfit < (error if error is not None else 99):
                    best, error = skipped, misfit
            unfollowed.update(range(index + 1, index + best + 1))
            index += best
        index += 1
    return frozenset(unfollowed)


def _misfit(
    presses: Sequence[tuple[ClockSide, int]],
    index: int,
    entries: Sequence[tuple[str, int]],
    increment: int,
) -> int | None:
    """How far the ledger's ``entries`` are from the presses from ``index`` on, each the
    logged time plus an increment; None when a side differs or one is a second off."""
    misfit = 0
    for (kind, recorded), (side, seconds) in zip(entries, presses[index:], strict=False):
        off = abs(recorded - seconds - increment)
        if side.value != kind or off > 1:
            return None
        misfit += off
    return misfit


def clock_gained(first: ClockObserved | None, readings: Iterable[ClockObserved]) -> bool:
    """Whether a side's time grew at a press (beyond a second of rounding) in readings
    that follow ``first``: a clock that adds its own time; a mode 23 clock only counts
    down (§8)."""
    last = first
    for reading in readings:
        mover = presser_of(last, reading)
        if mover is not None and last is not None and _gain(last, reading, mover) > 1:
            return True
        last = reading
    return False


def _gain(before: ClockObserved, after: ClockObserved, side: ClockSide) -> int:
    return side_seconds(after, side) - side_seconds(before, side)


def plus_seconds(reading: ClockObserved, seconds: Mapping[ClockSide, int]) -> ClockObserved:
    return dataclasses.replace(
        reading,
        left_seconds=reading.left_seconds + seconds.get(ClockSide.LEFT, 0),
        right_seconds=reading.right_seconds + seconds.get(ClockSide.RIGHT, 0),
    )


def presser_of(last: ClockObserved | None, reading: ClockObserved) -> ClockSide | None:
    """The side that pressed its lever between two readings, if one did."""
    if last is None or last.running is None or reading.running is None:
        return None
    return last.running if reading.running is not last.running else None


def hidden_presses(last: ClockObserved | None, reading: ClockObserved) -> ClockObserved | None:
    """The reading lost between ``last`` and ``reading`` when both levers were pressed
    meanwhile (that press's reading lost, the reply within it or among later ones lost
    too): the same side runs in both, but the other side's time changed, which a clock
    never does to a side that does not run. The lost reading has the other side running,
    its time as ``last`` showed it, and the presser's time as ``reading`` shows it (it
    has run since the reply for less than a reading's second, or as long as the readings
    lost after it)."""
    if last is None or not last.connected or not reading.connected:
        return None
    side = reading.running
    if side is None or last.running is not side:
        return None
    other = other_side(side)
    if side_seconds(reading, other) == side_seconds(last, other):
        return None
    seconds = {other: side_seconds(last, other) - side_seconds(reading, other)}
    return dataclasses.replace(plus_seconds(reading, seconds), running=other, lever=other)


def side_seconds(reading: ClockObserved, side: ClockSide) -> int:
    return reading.left_seconds if side is ClockSide.LEFT else reading.right_seconds


def total_seconds(reading: ClockObserved) -> int:
    """Both sides' times together: a clock running one side takes a second a second."""
    return reading.left_seconds + reading.right_seconds
