"""The round service: journal first, then the pure core, then the broadcast (layer L3).

:class:`RoundService` is the only writer of the journal and the only caller of the
:class:`~daemon.round.core.RoundCore`. Each input (a placement, a clock reading, a link change,
a timer tick, an arbiter command) is appended to the journal *before* the core acts on it;
the decisions the core makes (moves, corrections, alerts, results) are journalled before
they are published to the hub. Everything runs on the event loop's thread, so the
journal's order is the order in which the core saw its inputs, and a replay reproduces it.

While the journal cannot be written, arbiter commands are refused and change nothing; a
command the core refuses changes nothing and is not journalled. Anything the disk refuses
(full, failing) is held in memory in order and retried each second
(:mod:`daemon.journal.hold`) while the boards are read and served; the arbiter gets
``journal_failed`` and, once written, ``journal_recovered`` (both are inputs too, so a
replay raises them with the same ids).

The board sessions' inputs take :meth:`RoundService.receive_grouped`: each is applied to
the core at once, but journalled in a *group commit* with the inputs around it, and what
it changed is published only after that commit (the journal-first rule holds as for
:meth:`RoundService.receive`). A group is committed at once when an input made a move,
at the end of the event-loop iteration that applied a placement or link change; clock
readings that only move the time wait up to ``group_window`` seconds for company, and
are published as a compact :class:`~broadcast.feed.messages.ClockReading` (no board
state, no PGN).

Every :class:`~daemon.round.snapshot.SnapshotPolicy` interval the core's state is added to the
journal as a snapshot; :meth:`RoundService.replay` starts from the newest usable one. The
service checks the policy once per group, and pickles the core in a forked child
(:func:`~daemon.round.snapshot.dump_in_child`), so the event loop only waits for the
fork and the write of the result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from broadcast.feed.commands import (
    AckAlert,
    ArbiterCommand,
    CommandReply,
    NextRound,
    RebuildFromMemory,
    SetClocks,
)
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState, ClockReading, to_json_dict
from broadcast.outputs.output_alerts import OutputAlerts
from daemon.arbiter.decisions import Decision
from daemon.arbiter.results import CommandRefused
from daemon.game.events import ClockUpdated, MoveMade, MovesWithdrawn
from daemon.journal.hold import HeldJournal
from daemon.journal.inputs import INPUT_KINDS
from daemon.journal.records import Entry, Record
from daemon.journal.store import EVENT_BOARD, Journal
from daemon.round.codec import entry_of, input_of, outcome_records
from daemon.round.core import Outcome, RoundCore
from daemon.round.inputs import (
    BOARD_KINDS,
    ArbiterInput,
    ClockInput,
    JournalInput,
    RoundInput,
    TickInput,
)
from daemon.round.snapshot import SnapshotPolicy
from daemon.shell.snapshot_job import RoundSnapshots

__all__ = ["ClockSetter", "MemoryReader", "ResultListener", "RoundService"]

log = logging.getLogger(__name__)

#: Sets the e-board clocks a ``set_clocks`` names to the time control; returns a reply
#: for the arbiter.
ClockSetter = Callable[[SetClocks], Awaitable[CommandReply]]
#: Told the board state and the decision of a result decision.
ResultListener = Callable[[BoardState, Mapping[str, Any]], None]
#: Has the board a ``rebuild_from_memory`` names read its memory again; returns a reply.
MemoryReader = Callable[[RebuildFromMemory], CommandReply]

#: Seconds a group of clock readings waits for its commit (see the module docstring).
GROUP_WINDOW = 0.02
#: Inputs after which a group is committed whatever the window says.
GROUP_LIMIT = 1000


class RoundService:
    """Journals inputs, runs the core, publishes what changed.

    Args:
        core: the round's pure core.
        journal: the open journal.
        hub: the live broadcast hub.
        wall_clock: time source (epoch seconds).
        fingerprint: what snapshots are made with (:func:`daemon.round.snapshot.fingerprint`);
            None: no snapshots, replays read the whole journal.
        snapshots: when to take them.
        group_window: seconds a clock reading waits for its group commit.
        clock_setter: sets the e-board clocks a ``set_clocks`` names (None: there are none).
        round_changer: moves sections on to their next round (daemon/shell/rounds.py).
        result_listeners: told the board state and the decision of every result decision.
    """

    def __init__(
        self,
        core: RoundCore,
        journal: Journal,
        hub: Hub,
        *,
        wall_clock: Callable[[], float] = time.time,
        fingerprint: str | None = None,
        snapshots: SnapshotPolicy | None = None,
        group_window: float = GROUP_WINDOW,
        clock_setter: ClockSetter | None = None,
        round_changer: Callable[[NextRound], CommandReply] | None = None,
        result_listeners: Sequence[ResultListener] = (),
        memory_reader: MemoryReader | None = None,
    ) -> None:
        self.core = core
        self.journal = journal
        self.writer = HeldJournal(journal)
        self.hub = hub
        #: When the core's state is added to the journal, and by whom.
        self._snapshots = RoundSnapshots(
            core, journal, fingerprint, snapshots or SnapshotPolicy(), wall_clock()
        )
        #: The record the last replay started after (0: the whole journal was replayed).
        self.replayed_from = 0
        self._failing = False
        self.clock_setter = clock_setter
        self.round_changer = round_changer
        self.memory_reader = memory_reader
        #: Called with the board state and the decision for every result decision.
        self.result_listeners: list[ResultListener] = list(result_listeners)
        #: Alerts the outputs raise (not journalled); ``ack_alert`` reaches them too.
        self.output_alerts = OutputAlerts(hub, wall_clock)
        self._wall_clock = wall_clock
        self._deadlines_changed = asyncio.Event()
        self.group_window = group_window
        self._group: list[Entry | Decision] = []  # applied, not committed yet
        self._unpublished: list[Outcome | ClockReading] = []  # waiting for that commit
        self._commit_handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._commit_soon = False

    # -- recovery ----------------------------------------------------------------------

    def replay(self, *, progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the round from the journal's inputs; publish the result. Returns #inputs.

        Records of boards the configuration does not have are kept, not replayed.
        ``progress`` is told (records read, records in all) while a long journal is read.

        Raises:
            JournalDamaged: a record was changed, removed or cannot be read.
        """
        began = time.perf_counter()
        after = self.replayed_from = self._snapshots.load()
        self.journal.verify(after=after)
        count = 0
        unknown: set[int] = set()
        failed = 0
        total = self.journal.last_seq
        for record in self.journal.records(after=after, kinds=INPUT_KINDS):
            if progress is not None and count % 5000 == 4999:
                progress(record.seq, total)
            if record.board != EVENT_BOARD and record.board not in self.core.games:
                unknown.add(record.board)
                continue
            failed += not self._replay_one(record, first=not failed)
            count += 1
        if failed > 1:
            log.warning("= %d records failed to replay (a bug met live as well)", failed)
        if unknown:
            log.warning(
                "= the journal holds boards %s that the configuration does not: kept, not replayed",
                ", ".join(map(str, sorted(unknown))),
            )
        now = self._wall_clock()
        for number in self.core.games:
            self.hub.publish_board(self.core.board_state(number, now))
        for alert in self.core.engine.alerts:  # the hub keeps the open and the latest resolved
            self.hub.publish_alert(alert)
        self._snapshots.inputs = count
        self._snapshots.cost = time.perf_counter() - began
        return count

    def _replay_one(self, record: Record, *, first: bool) -> bool:
        """Apply one replayed input; False when it failed with a bug (as it did live, and
        the same state follows: the failure stays in its board). The first is logged."""
        try:
            self.core.apply(input_of(record.board, record.kind, record.payload, record.at))
        except CommandRefused:
            pass
        except Exception as exc:
            if self._refused_unread(record):
                return True
            if first:
                log.error("= replaying record %d failed as it did live", record.seq, exc_info=exc)
            return False
        return True

    def _refused_unread(self, record: Record) -> bool:
        """Whether the core refuses ``record`` unread, whatever its payload holds: an
        e-board's input on a board that has none (as :meth:`RoundCore.apply` always did)."""
        game = self.core.games.get(record.board)
        return record.kind in BOARD_KINDS and game is not None and game.tracker is None

    @property
    def fingerprint(self) -> str | None:
        """What snapshots are made with (None: no snapshots)."""
        return self._snapshots.fingerprint

    def take_snapshot(self) -> bool:
        """Add the core's state to the journal now; False when it cannot (held records)."""
        self.commit_group()
        if self.fingerprint is None or self.writer.held:
            return False
        return self._snapshots.write(self._wall_clock())

    def _snapshot_in_child(self) -> None:
        """Start a snapshot pickled by a forked child (:mod:`daemon.shell.snapshot_job`)."""
        if self.fingerprint is None or self.writer.held:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.take_snapshot()
            return
        if sys.platform == "win32":  # no fork: pickled here, on the loop, as before
            self.take_snapshot()
            return
        self._snapshots.start_in_child(self._wall_clock())

    @property
    def snapshots_written(self) -> int:
        """Snapshots written since the service was made (for bench/)."""
        return self._snapshots.written

    # -- inputs ------------------------------------------------------------------------

    def receive(self, item: RoundInput) -> Outcome:
        """Act on one input; journal it with its decisions; then publish the outcome.

        The core is pure, so acting first and journalling the input together with its
        decisions in one transaction loses nothing: a crash before the commit leaves
        neither, and nothing was published yet.

        Raises:
            CommandRefused: an arbiter command that changed nothing (not journalled).
        """
        return self._act(item, journalled=False)

    def receive_grouped(self, item: RoundInput) -> None:
        """Act on one input now; journal it in the next group commit; publish after it.

        For the board sessions (see the module docstring). A clock reading that changed
        nothing but the board's clocks adds no board state and no PGN, only a compact
        reading published after the commit.

        Raises:
            CommandRefused: an input for a board without e-board (not journalled).
        """
        entry = entry_of(item)
        began = time.perf_counter()
        try:
            outcome = self.core.apply(item)
        except CommandRefused:
            raise
        except Exception:
            self._group.append(entry)  # keep the input of a bug
            self.commit_group()
            raise
        finally:
            self._deadlines_changed.set()
        self._snapshots.cost += time.perf_counter() - began
        self._snapshots.inputs += 1
        self._group.append(entry)
        self._group += outcome_records(outcome.game_events, outcome.decisions)
        if _moves_clocks_only(item, outcome):
            reading = self.core.clock_reading(item.board) if outcome.boards else None
            if reading is not None:
                self._unpublished.append(reading)
            self._commit_later(self.group_window)
            return
        self._unpublished.append(outcome)
        if any(isinstance(e, MoveMade | MovesWithdrawn) for _, e in outcome.game_events):
            self.commit_group()  # a move: its spectators wait for nothing else
        else:
            self._commit_later(0.0)

    def _commit_later(self, delay: float) -> None:
        """Have the group committed within ``delay`` seconds (0: this loop iteration)."""
        if len(self._group) >= GROUP_LIMIT:
            self.commit_group()
            return
        handle = self._commit_handle
        if handle is not None and (self._commit_soon or delay > 0):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called outside a loop: no group to wait for
            self.commit_group()
            return
        if handle is not None:
            handle.cancel()
        self._commit_soon = delay <= 0
        self._commit_handle = (
            loop.call_soon(self.commit_group)
            if self._commit_soon
            else loop.call_later(delay, self.commit_group)
        )

    def commit_group(self) -> None:
        """Journal the inputs applied since the last group in one commit; then publish.

        The snapshot policy is asked once per group, not once per input.
        """
        if self._commit_handle is not None:
            self._commit_handle.cancel()
            self._commit_handle = None
        entries, self._group = self._group, []
        waiting, self._unpublished = self._unpublished, []
        if not entries:
            return
        self._write(entries)
        now = self._wall_clock()
        with self.hub.batch():  # the feed hears of the group once
            for item in waiting:
                if isinstance(item, Outcome):
                    self._publish(item)
                elif not self.hub.publish_clock(item, now):
                    self.hub.publish_board(self.core.board_state(item.board, now))
        if self._snapshots.due(now):
            self._snapshot_in_child()

    def _act(self, item: RoundInput, *, journalled: bool) -> Outcome:
        """Apply an input, journal it (unless ``journalled``) with its decisions, publish."""
        self.commit_group()  # the inputs applied before this one are journalled before it
        entry = entry_of(item)
        began = time.perf_counter()
        try:
            outcome = self.core.apply(item)
        except CommandRefused:
            raise
        except Exception:
            if not journalled:
                self._write([entry])  # keep the input of a bug
            raise
        finally:
            self._deadlines_changed.set()
        # what a replay of this input will cost: the core's work (here and rendering in
        # _publish), not the journal's or the spectators'
        self._snapshots.cost += time.perf_counter() - began
        self._journal(None if journalled else entry, outcome)
        self._publish(outcome)
        self._snapshots.inputs += 1
        if self._snapshots.due(entry.at):
            self._snapshot_in_child()  # on a running loop; else here and now
        return outcome

    async def execute(self, command: ArbiterCommand) -> CommandReply:
        """Carry out an arbiter command (the broadcast layer's CommandHandler).

        While the journal cannot be written, commands are refused and change nothing.
        Otherwise the core carries the command out and it is journalled with its
        decisions, like any input; one the core refuses changed nothing and leaves no
        record (it would otherwise come back at every restart).
        """
        at = self._wall_clock()
        if isinstance(command, AckAlert) and self.output_alerts.owns(command.id):
            return self.output_alerts.acknowledge(command.id)
        if isinstance(command, NextRound):
            if self.round_changer is None:
                return CommandReply(ok=False, reason="rounds cannot change here")
            return self.round_changer(command)
        missing = self._missing_hand(command)
        if missing is not None:
            return CommandReply(ok=False, reason=missing)
        if not self.writer.retry():
            return CommandReply(
                ok=False,
                reason=f"the journal cannot be written ({self.writer.failure}):"
                " command not carried out",
            )
        try:
            outcome = self._act(ArbiterInput(at=at, command=command), journalled=False)
        except CommandRefused as exc:
            return CommandReply(ok=False, reason=str(exc))  # nothing changed, nothing written
        if isinstance(command, SetClocks):
            assert self.clock_setter is not None
            return await self.clock_setter(command)
        if isinstance(command, RebuildFromMemory):
            assert self.memory_reader is not None
            return self.memory_reader(command)
        details: dict[str, Any] = {}
        if outcome.alerts:
            details["alerts"] = [to_json_dict(a) for a in outcome.alerts]
        return CommandReply(ok=True, details=details)

    def _missing_hand(self, command: ArbiterCommand) -> str | None:
        """Why a command carried out on the e-boards cannot be here (None: it can)."""
        if isinstance(command, SetClocks) and self.clock_setter is None:
            return "no e-board clocks to set"
        if isinstance(command, RebuildFromMemory) and self.memory_reader is None:
            return "no e-board sessions here"
        return None

    # -- timers ------------------------------------------------------------------------

    async def run_timers(self, *, max_sleep: float = 1.0) -> None:
        """Feed ``tick`` inputs at the core's deadlines, until cancelled."""
        while True:
            self._deadlines_changed.clear()
            held = self.writer.held
            if held and self.writer.retry():
                self._note_written(True, held)
            deadline = self.core.next_deadline()
            now = self._wall_clock()
            if deadline is not None and deadline <= now:
                self.receive(TickInput(at=now))
                continue
            wait = max_sleep if deadline is None else min(max_sleep, deadline - now)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):  # not wait_for: 3.11 can swallow a cancel
                    await self._deadlines_changed.wait()

    # -- outputs -----------------------------------------------------------------------

    def _journal(self, entry: Entry | None, outcome: Outcome) -> None:
        entries: list[Entry | Decision] = [] if entry is None else [entry]
        self._write(entries + outcome_records(outcome.game_events, outcome.decisions))

    def _write(self, entries: list[Entry | Decision]) -> None:
        if not self.writer.append_many(entries):
            self._note_written(False)

    def _note_written(self, written: bool, held: int = 0) -> None:
        """On a change between failing and written, tell the arbiter (an input itself)."""
        if written == (not self._failing):
            return
        self._failing = not written
        self.receive(
            JournalInput(
                at=self._wall_clock(),
                written=written,
                reason=self.writer.failure or "",
                held=held if written else self.writer.held,
            )
        )

    def _publish(self, outcome: Outcome) -> None:
        now = self._wall_clock()
        for number in sorted(outcome.boards):
            began = time.perf_counter()
            state = self.core.board_state(number, now)
            self._snapshots.cost += time.perf_counter() - began
            self.hub.publish_board(state)
            for decision in outcome.decisions:
                if decision.kind == "result" and decision.board == number:
                    self._tell_result(state, decision.payload)
        for alert in outcome.alerts:
            self.hub.publish_alert(alert)

    def _tell_result(self, state: BoardState, decision: Mapping[str, Any]) -> None:
        """Every result listener hears the decision: one that fails (a bug) is logged
        and leaves the others, the command and the journal whole."""
        for listener in self.result_listeners:
            try:
                listener(state, decision)
            except Exception as exc:
                log.error(
                    "board %d: an output failed to take the result", state.board, exc_info=exc
                )


def _moves_clocks_only(item: RoundInput, outcome: Outcome) -> bool:
    """Whether a clock reading changed nothing but its board's clocks (or nothing)."""
    return (
        type(item) is ClockInput
        and not outcome.decisions
        and not outcome.alerts
        and outcome.boards <= {item.board}
        and all(isinstance(event, ClockUpdated) for _, event in outcome.game_events)
    )
