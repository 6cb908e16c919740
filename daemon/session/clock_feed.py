"""A board session's clock readings on their way to the journal (pure).

Each reading a session takes goes through :class:`ClockFeed`: on a clock dgtcast drives
in mode 23, :class:`~daemon.mode23.control.IncrementControl` adds what the time control
gives after each press and answers it with a SETNRUN; presses that lost readings hid
are journalled before the reading that shows them
(:func:`~daemon.mode23.gap_increments.hidden_presses`); a reading that repeats the last
one journalled on this connection is dropped (update-nice repeats nothing new). What the
game says the clock lacks after a gap is owed from here too (:meth:`ClockFeed.owe`).
"""

from __future__ import annotations

from daemon.mode23.control import IncrementControl
from daemon.mode23.gap_increments import hidden_presses
from daemon.round.inputs import ClockInput
from daemon.session.actions import BoardView, Record, SetClock
from drivers.observations import ClockObserved

__all__ = ["ClockFeed"]


class ClockFeed:
    """Board ``number``'s clock readings, journalled through ``record``."""

    def __init__(
        self,
        number: int,
        view: BoardView,
        record: Record,
        increments: IncrementControl | None,
    ) -> None:
        self.number = number
        self.view = view
        self._record = record
        self.increments = increments
        self._last: ClockInput | None = None  # journalled last on this connection
        self._seen: ClockObserved | None = None  # the last reading followed (no mode 23)

    def forget(self) -> None:
        """A new connection, or a fault met: nothing journalled or followed counts."""
        self._last = self._seen = None

    def forget_repeat(self) -> None:
        """The next reading is journalled even if it repeats the last one."""
        self._last = None

    def forget_seen(self) -> None:
        """The presses until the next reading are not the readings' to tell (the memory
        is read, or the clock was set)."""
        self._seen = None

    def apply(self, reading: ClockObserved) -> SetClock | None:
        """Journal ``reading``, after the one its presses lost; returns the SETNRUN to
        send, if any (mode 23)."""
        increments = self.increments
        command = None
        if increments is None:
            lost, self._seen = hidden_presses(self._seen, reading), reading
            if lost is not None:
                self._journal(lost)
        else:
            corrected, command = increments.receive_reading(reading)
            if corrected is None:
                return None  # stale: the clock is being set
            for lost in increments.hidden():
                self._journal(lost)
            reading = corrected
        self._journal(reading, clock_set=command is not None)
        return None if command is None else SetClock(command=command)

    def owe(self, *, recovered: bool) -> None:
        """Give the clock what the board's game says it lacks (mode 23): increments of
        presses replayed from the memory, in their ``[%clk]`` already. Known from the
        journal, so a restart before the clock got them owes them again, once; after a
        memory whose presses show the clock adding its own time, nothing is added. A
        SETNRUN the link cut is checked against the next readings (``check_cut``)."""
        increments, view = self.increments, self.view
        if increments is None:
            return
        if recovered and view.clock_adds():
            increments.leave_alone()
        elif recovered:
            increments.owe(view.clock_owed(), last=view.replayed_reading())
        elif view.clock_owed():
            increments.owe(view.clock_owed())
        cut = view.cut_setting()
        if cut is None:
            increments.check_cut(None)
        else:
            increments.check_cut(cut.reading, cut.gave)

    def _journal(self, reading: ClockObserved, *, clock_set: bool = False) -> None:
        increments = self.increments
        item = ClockInput(
            self.number,
            reading,
            increments=None if increments is None else increments.adder,
            clock_set=clock_set,
            lacking={} if increments is None else increments.lacking,
        )
        if not item.repeats(self._last):  # update-nice repeats nothing new
            self._last = item
            self._record(item)
