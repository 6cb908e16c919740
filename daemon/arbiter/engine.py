"""The arbiter alert engine: what an arbiter must look at, and the results they confirm.

Pure (layer L2): game events, link changes and ticks go in with their time; alerts,
results and decision records come out. It never reads a clock: every ``at``/``now`` is
wall-clock epoch seconds, the journal's time, because round start and default time are
times of day. Each kind, when it is raised, its details and the suggested action are in
``docs/alerts.md``; the rules are FIDE Laws 6.7 (default time), 6.9 (flag fall), 7.5
(illegal moves) and DGT's result gesture (tournament-rules.md §2, §3).

* Each alert is raised once per *episode*, named by a key built from the inputs' own
  times (a flag fall in a game, an out-of-sync spell starting at ``at``, ...).
* Results are proposed (provisional) by alerts and set by arbiters; they become final
  only when confirmed. An arbiter's result is never replaced by a proposal, a confirmed
  one by nothing but another arbiter's (the ledger: :mod:`daemon.arbiter.results`).
* What is followed on each board, and the clock and late-arrival checks, are in
  :mod:`daemon.arbiter.watch`; what every other alert says is in
  :mod:`daemon.arbiter.drafts`. Both return drafts; the engine raises them.
* Every change is also a :class:`Decision` (``decisions_made()``) for the journal.
  Recovery: :meth:`AlertEngine.restore` the decision records, then feed the replayed
  inputs as in live operation (game events, links, ticks); episodes already journalled
  are not raised again, so only what the crash cut off comes out.

Exceptions::

    CommandRefused    an arbiter command that cannot be carried out (peer fault; from
                      daemon.arbiter.results)
    ValueError        a board that is not configured (caller's misuse)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, assert_never

from broadcast.feed.messages import Alert, AlertKind, to_json_dict
from daemon.arbiter import drafts
from daemon.arbiter.results import CommandRefused, ResultLedger, ResultSource, ResultState
from daemon.arbiter.watch import AlertDraft, BoardRules, BoardWatch, Episode
from daemon.config.model import Config
from daemon.game.events import (
    ClockSidesLearned,
    ClockUpdated,
    FlagFell,
    GameEnded,
    GameEvent,
    GameStarted,
    GapCandidates,
    InSync,
    MoveMade,
    MovesRecovered,
    MovesWithdrawn,
    OutOfSync,
    PositionAccepted,
    ResultSignalled,
)

__all__ = [
    "DECISION_KINDS",
    "AlertEngine",
    "AlertSettings",
    "Decision",
]


#: Journal kinds of the decision records (see :meth:`AlertEngine.restore`).
DECISION_KINDS = frozenset({"alert", "alert_ack", "result"})


@dataclass(frozen=True, slots=True, kw_only=True)
class AlertSettings:
    """Every board's rules, and the slack of the clock checks (readings are whole seconds)."""

    boards: Mapping[int, BoardRules]
    clock_tolerance: float = 1.0

    @classmethod
    def from_config(cls, config: Config) -> AlertSettings:
        """The rules of every configured board, from its section's event."""
        boards = {}
        for section in config.sections:
            event = section.event
            for board in section.boards:
                boards[board.number] = BoardRules.of_event(event, has_eboard=board.has_eboard)
        return cls(boards=boards)


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """A record for the journal (it fits :class:`daemon.journal.store.JournalEntry`)."""

    board: int
    kind: str
    at: float
    payload: Mapping[str, Any]


class _Recorded(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...


class AlertEngine:
    """Raises arbiter alerts and keeps every board's result (docs/alerts.md).

    Feed it with ``receive_*``; then drain :meth:`decisions_made` (journal them first)
    and :meth:`alerts_raised` (publish them). Call :meth:`receive_tick` at
    :meth:`next_deadline`.
    """

    def __init__(self, settings: AlertSettings) -> None:
        self._settings = settings
        self._watch = {number: BoardWatch(rules) for number, rules in settings.boards.items()}
        self._alerts: dict[int, Alert] = {}
        self._episodes: set[Episode] = set()
        self._results = ResultLedger(self._decide)
        self._next_id = 1
        self._deadline: float | None = None
        self._deadline_known = False  # _deadline is up to date (see next_deadline)
        self._raised: list[Alert] = []
        self._decisions: list[Decision] = []

    # -- inputs ----------------------------------------------------------------------------

    def receive_game_event(self, board: int, event: GameEvent) -> None:
        """Take one event of the board's game tracker; then drain the outputs."""
        watch = self._board(board)
        match event:
            case GameStarted() | MoveMade() | InSync() | PositionAccepted():
                _follow(watch, event)
            case MovesWithdrawn():
                self._results.withdraw_game_over(board, event.at)
            case OutOfSync() | MovesRecovered() | GapCandidates():
                self._sync_alert(board, watch, event)
            case ResultSignalled():
                self._result_signalled(board, watch, event)
            case GameEnded():
                self._game_ended(board, watch, event)
            case FlagFell():
                self._flag_fell(board, watch, event)
            case ClockUpdated():
                tolerance = self._settings.clock_tolerance
                for draft in watch.clock_reading(board, event, tolerance):
                    self._raise_draft(board, event.at, draft)
            case ClockSidesLearned():
                pass
            case _:
                assert_never(event)

    def receive_link(self, board: int, online: bool, at: float) -> None:
        """The e-board's link went up or down (may repeat); then drain the outputs."""
        watch = self._board(board)
        was, watch.online = watch.online, online
        if not online and was is not False:
            watch.offline_since = at
            self._raise_draft(board, at, drafts.board_offline(board, at))
        elif online and was is False:
            self._raise_draft(board, at, drafts.board_online(board, at, watch.offline_since))

    def receive_flood(self, board: int, flooding: bool, at: float) -> None:
        """The e-board started flooding the line with sensor changes (or calmed down)."""
        if flooding:
            self._raise_draft(board, at, drafts.board_flooding(board, at))

    def receive_clock_link(self, board: int, connected: bool, at: float) -> None:
        """Whether a clock answers through the e-board (every reading may be passed)."""
        watch = self._board(board)
        was, watch.clock_connected = watch.clock_connected, connected
        if not connected and was is not False:
            self._raise_draft(board, at, drafts.clock_offline(board, at))
        elif connected and was is False:
            self._raise_draft(board, at, drafts.clock_online(board, at))

    def receive_journal(self, written: bool, reason: str, held: int, at: float) -> None:
        """The journal cannot be written (disk full, I/O error), or is written again.

        Board 0: it concerns the whole event. ``held`` inputs wait in memory meanwhile.
        """
        if not written:
            self._raise_draft(0, at, drafts.journal_failed(reason, at))
        else:
            self._raise_draft(0, at, drafts.journal_recovered(held, at))

    def receive_tick(self, now: float) -> None:
        """Time passed: make the late-arrival checks that are due (FIDE 6.7)."""
        self._deadline_known = False
        for board, watch in self._watch.items():
            if not watch.rules.has_eboard:
                continue
            due = [(stage, when) for stage, when in watch.stages() if when <= now]
            for stage, when in due:
                watch.stages_done.add(stage)
                if stage == "warning" and len(due) > 1:
                    continue  # the default time has passed too: only the alert matters
                self._check_presence(board, watch, stage, when)

    def _check_presence(self, board: int, watch: BoardWatch, stage: str, when: float) -> None:
        if board in self._results:
            return
        late = watch.presence(board, stage, when)
        if late is not None and self._raise_draft(board, when, late[0]) and stage == "default":
            self._results.propose(board, late[1], ResultSource.LATE_ARRIVAL, when)

    def next_deadline(self) -> float | None:
        """When :meth:`receive_tick` must be called next; None when nothing is pending.

        Only :meth:`receive_tick` makes checks, so the answer is kept until it runs (the
        daemon asks after every input; going through every board each time is costly).
        """
        if not self._deadline_known:
            times = [
                when
                for watch in self._watch.values()
                if watch.rules.has_eboard
                for _, when in watch.stages()
            ]
            self._deadline = min(times, default=None)
            self._deadline_known = True
        return self._deadline

    def new_round(self, board: int, rules: BoardRules, at: float) -> list[Alert]:
        """The board starts another round under ``rules`` (``dgtcast round next``).

        Its watch starts afresh (the e-board's and clock's link states carry over), its
        result stays with the old round, its late-arrival checks may be raised again,
        and its open alerts are closed (acknowledged, with decision records). Returns
        the alerts closed. A board the engine did not know is added.
        """
        old = self._watch.get(board)
        watch = BoardWatch(rules)
        if old is not None:
            watch.online, watch.offline_since = old.online, old.offline_since
            watch.clock_connected = old.clock_connected
        self._watch[board] = watch
        self._results.forget(board)
        self._episodes = {e for e in self._episodes if e[:2] != ("late_arrival", board)}
        self._deadline_known = False
        return [
            self.acknowledge(alert.id, at) for alert in self.open_alerts if alert.board == board
        ]

    # -- arbiter commands ------------------------------------------------------------------

    def acknowledge(self, alert_id: int, at: float) -> Alert:
        """An arbiter saw the alert; returns it acknowledged (again, if it already was).

        Raises:
            CommandRefused: no such alert.
        """
        alert = self._alerts.get(alert_id)
        if alert is None:
            raise CommandRefused(f"no alert {alert_id}")
        if not alert.acknowledged:
            alert = dataclasses.replace(alert, acknowledged=True)
            self._alerts[alert_id] = alert
            self._decide(alert.board, "alert_ack", at, {"id": alert_id})
        return alert

    def set_result(self, board: int, result: str, at: float) -> ResultState | None:
        """An arbiter sets the board's result, provisional until confirmed; ``*`` clears it.

        Returns the new state (None after ``*``: the board's own results count again).

        Raises:
            CommandRefused: unknown board or result.
        """
        self._command_board(board)
        return self._results.set(board, result, at)

    def confirm_result(self, board: int, at: float) -> ResultState:
        """An arbiter confirms the board's result: it becomes final.

        Raises:
            CommandRefused: unknown board, or no result to confirm.
        """
        self._command_board(board)
        return self._results.confirm(board, at)

    # -- outputs and state -----------------------------------------------------------------

    def alerts_raised(self) -> list[Alert]:
        """Drain the alerts raised since the last call, oldest first (to publish)."""
        raised, self._raised = self._raised, []
        return raised

    def decisions_made(self) -> list[Decision]:
        """Drain the decision records since the last call, in order (to journal)."""
        decisions, self._decisions = self._decisions, []
        return decisions

    @property
    def alerts(self) -> list[Alert]:
        """Every alert raised, in its latest version, oldest first."""
        return [self._alerts[i] for i in sorted(self._alerts)]

    @property
    def open_alerts(self) -> list[Alert]:
        """Alerts no arbiter has acknowledged yet, oldest first."""
        return [alert for alert in self.alerts if not alert.acknowledged]

    def result_of(self, board: int) -> ResultState | None:
        """The board's result, None while there is none."""
        return self._results.result_of(board)

    def restore(self, records: Iterable[_Recorded]) -> None:
        """Take back the decisions of journal records (others are skipped); call first.

        Nothing is raised or recorded again; see the module docstring for recovery.
        """
        for record in records:
            if record.kind == "alert":
                self._restore_alert(record.payload)
            elif record.kind == "alert_ack":
                alert_id = int(record.payload["id"])
                alert = self._alerts[alert_id]
                self._alerts[alert_id] = dataclasses.replace(alert, acknowledged=True)
            elif record.kind == "result":
                self._results.restore(record.payload)

    # -- game events -----------------------------------------------------------------------

    def _sync_alert(
        self, board: int, watch: BoardWatch, event: OutOfSync | MovesRecovered | GapCandidates
    ) -> None:
        """The record and the board parted (out of sync), were joined again by moves
        nobody saw live (recovered), or could be by one of several lines (candidates)."""
        if isinstance(event, OutOfSync):
            self._out_of_sync(board, watch, event)
        elif isinstance(event, MovesRecovered):
            self._moves_recovered(board, watch, event)
        else:
            self._gap_ambiguous(board, watch, event)

    def _gap_ambiguous(self, board: int, watch: BoardWatch, event: GapCandidates) -> None:
        shown = "; ".join(f"{i}) {' '.join(line)}" for i, line in enumerate(event.lines, 1))
        more = "" if event.complete else " (the search stopped early: there may be others)"
        self._raise(
            board,
            AlertKind.GAP_AMBIGUOUS,
            event.at,
            {
                "from_ply": event.from_ply,
                "lines": [list(line) for line in event.lines],
                "complete": event.complete,
            },
            f"Board {board}: the board is ahead of the record from ply {event.from_ply} and"
            f" several move orders lead there{more}: {shown}. Choose the line played"
            " (choose_line), or reinstate the position (FIDE 7.5).",
            ("gap_ambiguous", board, watch.game, event.at),
        )

    def _out_of_sync(self, board: int, watch: BoardWatch, event: OutOfSync) -> None:
        if watch.out_of_sync:
            return
        watch.out_of_sync = True
        self._raise_draft(board, event.at, drafts.out_of_sync(board, watch.game, event))

    def _moves_recovered(self, board: int, watch: BoardWatch, event: MovesRecovered) -> None:
        watch.moved = True
        last = event.from_ply + event.plies - 1
        where = "the board's memory" if event.source == "memory" else "a search of the legal moves"
        self._raise(
            board,
            AlertKind.MOVES_RECOVERED,
            event.at,
            {"from_ply": event.from_ply, "plies": event.plies, "source": event.source},
            f"Board {board}: plies {event.from_ply}-{last} were played while dgtcast could"
            f" not see the board; they were recovered from {where}. Check them against the"
            " scoresheets.",
            ("moves_recovered", board, watch.game, event.from_ply, event.at),
        )

    def _result_signalled(self, board: int, watch: BoardWatch, event: ResultSignalled) -> None:
        draft = drafts.result_signalled(board, watch.game, event)
        if self._raise_draft(board, event.at, draft):
            self._results.propose(board, event.result, ResultSource.RESULT_SIGNALLED, event.at)

    def _game_ended(self, board: int, watch: BoardWatch, event: GameEnded) -> None:
        if self._raise_draft(board, event.at, drafts.game_over(board, watch.game, event)):
            self._results.propose(board, event.result, ResultSource.GAME_OVER, event.at)

    def _flag_fell(self, board: int, watch: BoardWatch, event: FlagFell) -> None:
        draft = drafts.flag_fall(board, watch.game, event, watch.rules.clocks.draw_odds)
        if self._raise_draft(board, event.at, draft):
            self._results.propose(board, event.result, ResultSource.FLAG_FALL, event.at)

    # -- alerts, results and decisions ----------------------------------------------------

    def _raise(
        self,
        board: int,
        kind: AlertKind,
        at: float,
        details: dict[str, Any],
        action: str,
        episode: Episode,
    ) -> bool:
        """Raise an alert unless its episode was raised already; True when raised."""
        if episode in self._episodes:
            return False
        self._episodes.add(episode)
        alert = Alert(
            id=self._next_id, kind=kind, board=board, at=at, details=details, action=action
        )
        self._next_id += 1
        self._alerts[alert.id] = alert
        self._raised.append(alert)
        self._decide(board, "alert", at, {"alert": to_json_dict(alert), "episode": list(episode)})
        return True

    def _raise_draft(self, board: int, at: float, draft: AlertDraft) -> bool:
        return self._raise(board, draft.kind, at, draft.details, draft.action, draft.episode)

    def _decide(self, board: int, kind: str, at: float, payload: dict[str, Any]) -> None:
        self._decisions.append(Decision(board=board, kind=kind, at=at, payload=payload))

    def _restore_alert(self, payload: Mapping[str, Any]) -> None:
        alert = Alert(**{**payload["alert"], "kind": AlertKind(payload["alert"]["kind"])})
        self._alerts[alert.id] = alert
        self._episodes.add(tuple(payload["episode"]))
        self._next_id = max(self._next_id, alert.id + 1)

    def _board(self, board: int) -> BoardWatch:
        watch = self._watch.get(board)
        if watch is None:
            raise ValueError(f"board {board} is not configured")
        return watch

    def _command_board(self, board: int) -> None:
        if board not in self._watch:
            raise CommandRefused(f"no board {board}")


def _follow(watch: BoardWatch, event: GameStarted | MoveMade | InSync | PositionAccepted) -> None:
    """Events that only change what the engine follows on the board."""
    match event:
        case GameStarted():
            watch.new_game(event.at)
        case MoveMade():
            watch.moved = True
            watch.first_move_at.setdefault("white" if event.ply % 2 else "black", event.at)
        case InSync():
            watch.out_of_sync = False
        case PositionAccepted():
            watch.out_of_sync = False
            watch.moved = True  # the game goes on from a position: no start check any more
        case _:
            assert_never(event)
