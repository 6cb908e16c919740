"""The round service: journal first, then the pure core, then the broadcast (layer L3).

:class:`RoundService` is the only writer of the journal and the only caller of the
:class:`~daemon.round.RoundCore`. Each input (a placement, a clock reading, a link change,
a timer tick, an arbiter command) is appended to the journal *before* the core acts on it;
the decisions the core makes (moves, corrections, alerts, results) are journalled before
they are published to the hub. Everything runs on the event loop's thread, so the
journal's order is the order in which the core saw its inputs, and a replay reproduces it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from broadcast.hub import Hub
from broadcast.messages import (
    AckAlert,
    ArbiterCommand,
    BoardState,
    CommandReply,
    NextRound,
    SetClocks,
    to_json_dict,
)
from daemon.arbiter import Decision
from daemon.game.events import GameEvent
from daemon.inputs import ARBITER, INPUT_KINDS, TICK
from daemon.journal import EVENT_BOARD, Entry, Journal
from daemon.output_alerts import OutputAlerts
from daemon.results import CommandRefused
from daemon.round import Outcome, RoundCore, command_payload

__all__ = ["ClockSetter", "RoundService"]

log = logging.getLogger(__name__)

#: Sets every e-board clock to the time control; returns a reply for the arbiter.
ClockSetter = Callable[[], Awaitable[CommandReply]]


class RoundService:
    """Journals inputs, runs the core, publishes what changed.

    Args:
        core: the round's pure core.
        journal: the open journal.
        hub: the live broadcast hub.
        wall_clock: time source (epoch seconds).
    """

    def __init__(
        self,
        core: RoundCore,
        journal: Journal,
        hub: Hub,
        *,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.core = core
        self.journal = journal
        self.hub = hub
        self.clock_setter: ClockSetter | None = None
        #: Moves sections on to their next round (daemon/rounds.py).
        self.round_changer: Callable[[NextRound], CommandReply] | None = None
        #: Called with the board state and the decision for every result decision.
        self.result_listeners: list[Callable[[BoardState, Mapping[str, Any]], None]] = []
        #: Alerts the outputs raise (not journalled); ``ack_alert`` reaches them too.
        self.output_alerts = OutputAlerts(hub, wall_clock)
        self._wall_clock = wall_clock
        self._deadlines_changed = asyncio.Event()

    # -- recovery ----------------------------------------------------------------------

    def replay(self) -> int:
        """Rebuild the round from the journal's inputs; publish the result. Returns #inputs.

        Records of boards the configuration does not have are kept, not replayed.

        Raises:
            JournalDamaged: a record was changed, removed or cannot be read.
        """
        self.journal.verify()
        count = 0
        unknown: set[int] = set()
        for record in self.journal.records(kinds=INPUT_KINDS):
            if record.board != EVENT_BOARD and record.board not in self.core.games:
                unknown.add(record.board)
                continue
            with contextlib.suppress(CommandRefused):
                self.core.apply(record.board, record.kind, record.payload, record.at)
            count += 1
        if unknown:
            log.warning(
                "= the journal holds boards %s that the configuration does not: kept, not replayed",
                ", ".join(map(str, sorted(unknown))),
            )
        now = self._wall_clock()
        for number in self.core.games:
            self.hub.publish_board(self.core.board_state(number, now))
        for alert in self.core.engine.open_alerts:
            self.hub.publish_alert(alert)
        return count

    # -- inputs ------------------------------------------------------------------------

    def receive(self, board: int, kind: str, payload: Mapping[str, Any], at: float) -> Outcome:
        """Act on one input; journal it with its decisions; then publish the outcome.

        The core is pure, so acting first and journalling the input together with its
        decisions in one transaction loses nothing: a crash before the commit leaves
        neither, and nothing was published yet.

        Raises:
            CommandRefused: an arbiter command that changed nothing (not journalled).
        """
        try:
            outcome = self.core.apply(board, kind, payload, at)
        except CommandRefused:
            raise
        except Exception:
            self.journal.append(board, kind, payload, at)  # keep the input of a bug
            raise
        finally:
            self._deadlines_changed.set()
        self._journal(Entry(board=board, kind=kind, at=at, payload=payload), outcome)
        self._publish(outcome)
        return outcome

    async def execute(self, command: ArbiterCommand) -> CommandReply:
        """Carry out an arbiter command (the broadcast layer's CommandHandler)."""
        at = self._wall_clock()
        if isinstance(command, AckAlert) and self.output_alerts.owns(command.id):
            return self.output_alerts.acknowledge(command.id)
        if isinstance(command, NextRound):
            if self.round_changer is None:
                return CommandReply(ok=False, reason="rounds cannot change here")
            return self.round_changer(command)
        if isinstance(command, SetClocks):
            self.journal.append(EVENT_BOARD, ARBITER, command_payload(command), at)
            if self.clock_setter is None:
                return CommandReply(ok=False, reason="no e-board clocks to set")
            return await self.clock_setter()
        try:
            outcome = self.receive(_command_board(command), ARBITER, command_payload(command), at)
        except CommandRefused as exc:
            return CommandReply(ok=False, reason=str(exc))
        details: dict[str, Any] = {}
        if outcome.alerts:
            details["alerts"] = [to_json_dict(a) for a in outcome.alerts]
        return CommandReply(ok=True, details=details)

    # -- timers ------------------------------------------------------------------------

    async def run_timers(self, *, max_sleep: float = 1.0) -> None:
        """Feed ``tick`` inputs at the core's deadlines, until cancelled."""
        while True:
            self._deadlines_changed.clear()
            deadline = self.core.next_deadline()
            now = self._wall_clock()
            if deadline is not None and deadline <= now:
                self.receive(EVENT_BOARD, TICK, {}, now)
                continue
            wait = max_sleep if deadline is None else min(max_sleep, deadline - now)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):  # not wait_for: 3.11 can swallow a cancel
                    await self._deadlines_changed.wait()

    # -- outputs -----------------------------------------------------------------------

    def _journal(self, entry: Entry, outcome: Outcome) -> None:
        entries: list[Entry | Decision] = [entry]
        entries += [_event_entry(board, event) for board, event in outcome.game_events]
        entries.extend(outcome.decisions)
        self.journal.append_many(entries)

    def _publish(self, outcome: Outcome) -> None:
        now = self._wall_clock()
        for number in sorted(outcome.boards):
            state = self.core.board_state(number, now)
            self.hub.publish_board(state)
            for decision in outcome.decisions:
                if decision.kind == "result" and decision.board == number:
                    for listener in self.result_listeners:
                        listener(state, decision.payload)
        for alert in outcome.alerts:
            if alert.acknowledged:
                self.hub.alert_acknowledged(alert.id)
            else:
                self.hub.publish_alert(alert)


def _command_board(command: ArbiterCommand) -> int:
    board = getattr(command, "board", None)
    return board if isinstance(board, int) else EVENT_BOARD


def _event_entry(board: int, event: GameEvent) -> Entry:
    payload = to_json_dict(event)
    return Entry(board=board, kind="game." + type(event).__name__, at=event.at, payload=payload)
