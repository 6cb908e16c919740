"""The arbiter alert engine: what an arbiter must look at, and the results they confirm.

Pure (layer L2): game events, link changes and ticks go in with their time; alerts,
results and decision records come out. It never reads a clock: every ``at``/``now`` is
wall-clock epoch seconds, the journal's time, because round start and default time are
times of day. Each kind, when it is raised and when it resolves, its details and the
suggested action are in ``docs/alerts.md``; the rules are FIDE Laws 6.7 (default time),
6.9 (flag fall), 7.5 (illegal moves) and DGT's result gesture (docs/alerts.md,
"The Laws it follows").

* Each alert is raised once per *episode*, named by a key built from the inputs' own
  times (a flag fall in a game, an out-of-sync spell starting at ``at``, ...), and is
  open while its condition holds: one open alert per board and condition, resolved by
  the engine when the condition clears, or by the arbiter's decision when it asks for
  one (:mod:`daemon.arbiter.book`).
* Results are proposed (provisional) by alerts and set by arbiters; they become final
  only when confirmed. An arbiter's result is never replaced by a proposal, a confirmed
  one by nothing but another arbiter's (the ledger: :mod:`daemon.arbiter.results`).
* What is followed on each board, and the clock and late-arrival checks, are in
  :mod:`daemon.arbiter.watch`; what every other alert says is in
  :mod:`daemon.arbiter.drafts`. Both return drafts; the engine raises them.
* Every change is also a :class:`Decision` (``decisions_made()``) for the journal: each
  new version of an alert (kind ``alert``) and each result (kind ``result``). A restart
  feeds the journalled inputs to a fresh engine, which makes the same decisions again:
  it is deterministic.

Exceptions::

    CommandRefused    an arbiter command that cannot be carried out (peer fault; from
                      daemon.arbiter.results)
    ValueError        a board that is not configured (caller's misuse)
"""

from __future__ import annotations

from typing import Any, assert_never

from base.colors import Color
from broadcast.feed.alerts import BY_ARBITER, Alert, AlertKind
from broadcast.feed.messages import PGN_RESULTS
from daemon.arbiter import drafts
from daemon.arbiter.book import AlertBook
from daemon.arbiter.decisions import AlertSettings, Decision
from daemon.arbiter.results import CommandRefused, ResultLedger, ResultSource, ResultState
from daemon.arbiter.watch import AlertDraft, BoardRules, BoardWatch, Cleared
from daemon.game.durations import format_duration
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

__all__ = ["GAME_KINDS", "AlertEngine"]


#: Alerts about a board's game (the others are about its hardware, or the event): they
#: resolve when the board's result is confirmed or the board moves on to another round,
#: and none is raised while the board's result is confirmed.
GAME_KINDS = frozenset(
    {
        AlertKind.FLAG_FALL,
        AlertKind.LATE_ARRIVAL,
        AlertKind.OUT_OF_SYNC,
        AlertKind.CLOCK_MISMATCH,
        AlertKind.RESULT_SIGNALLED,
        AlertKind.GAME_OVER,
        AlertKind.MOVES_RECOVERED,
        AlertKind.GAP_AMBIGUOUS,
        AlertKind.RESULT_CONTRADICTS_BOARD,
    }
)
#: Conditions of one game that a new game on the board ends (not decisions: a flag fall
#: or a signalled result still waits for the arbiter when the pieces are set up again).
_GAME_CONDITIONS = (AlertKind.OUT_OF_SYNC, AlertKind.CLOCK_MISMATCH, AlertKind.GAP_AMBIGUOUS)
#: What an arbiter's acknowledgement settles: "check them against the scoresheets".
_SETTLED_BY_ACK = (AlertKind.MOVES_RECOVERED,)


class AlertEngine:
    """Raises arbiter alerts, resolves them, and keeps every board's result (docs/alerts.md).

    Feed it with ``receive_*``; then drain :meth:`decisions_made` (journal them first)
    and :meth:`alerts_raised` (publish them). Call :meth:`receive_tick` at
    :meth:`next_deadline`.
    """

    def __init__(self, settings: AlertSettings) -> None:
        self._settings = settings
        self._watch = {number: BoardWatch(rules) for number, rules in settings.boards.items()}
        self._book = AlertBook(self._record_alert)  # a bound method: snapshots pickle it
        self._results = ResultLedger(self._decide)
        self._deadline: float | None = None
        self._deadline_known = False  # _deadline is up to date (see next_deadline)
        self._decisions: list[Decision] = []

    # -- inputs ----------------------------------------------------------------------------

    def receive_game_event(self, board: int, event: GameEvent) -> None:
        """Take one event of the board's game tracker; then drain the outputs."""
        watch = self._board(board)
        match event:
            case ClockUpdated() | MoveMade():
                self._clock_checks(board, watch, event)
            case GameStarted() | InSync() | PositionAccepted():
                self._follow(board, watch, event)
            case MovesWithdrawn():
                self._moves_withdrawn(board, event)
            case OutOfSync() | MovesRecovered() | GapCandidates():
                self._sync_alert(board, watch, event)
            case ResultSignalled() | GameEnded() | FlagFell():
                self._game_decided(board, watch, event)
            case ClockSidesLearned():
                pass
            case _:
                assert_never(event)

    def _clock_checks(self, board: int, watch: BoardWatch, event: ClockUpdated | MoveMade) -> None:
        """A reading (start and increment checks), or a move (White's first press)."""
        tolerance = self._settings.clock_tolerance
        if isinstance(event, MoveMade):
            self._follow(board, watch, event)
            found = watch.move_made(board, event.ply, event.at, tolerance)
        else:
            if event.running is not None and watch.started is None and watch.rules.has_eboard:
                self._round_started(watch.rules.section, event.at)
            found = watch.clock_reading(board, event, tolerance)
        for item in found:
            if isinstance(item, Cleared):
                self._book.resolve(board, (item.kind,), event.at, item.note, scope=item.scope)
            elif self._clock_checked(board) and not (watch.clock_refuses and item.scope):
                self._raise_draft(board, event.at, item)  # refused: the one cause is said

    def _round_started(self, section: str, at: float) -> None:
        """The section's first clock started at ``at``: its round started (FIDE 6.6),
        for the boards without a configured start; their default time counts from it."""
        for watch in self._watch.values():
            if watch.rules.section == section and watch.started is None:
                watch.clock_start = at
        self._deadline_known = False

    def receive_gap(self, board: int, *, unseen: bool) -> None:
        """Plies may have been made unseen on the board (its link down, the daemon
        stopped, its memory replayed while ``unseen``): no clock check spans them."""
        self._board(board).gap(unseen=unseen)

    def receive_clock_mode(self, board: int, refused: bool, at: float) -> None:
        """A clock reading of a mode 23 board: whether the clock refuses dgtcast's settings
        (not in mode 23); one alert per game, resolved when it takes them."""
        watch = self._board(board)
        watch.clock_refuses = refused
        if refused:
            self._raise_draft(board, at, drafts.clock_not_mode_23(board, watch.game))
        else:
            note = "the clock takes dgtcast's settings"
            self._book.resolve(board, (AlertKind.CLOCK_MISMATCH,), at, note, scope=("mode",))

    def receive_memory_unsure(self, board: int, at: float) -> None:
        """The board's memory, read while it is out of sync, does not hold the game as
        recorded: its ``out_of_sync`` alert says so (once per game)."""
        watch = self._board(board)
        if watch.out_of_sync and watch.out_of_sync_event is not None:
            draft = drafts.out_of_sync_for_good(board, watch.game, watch.out_of_sync_event)
            self._raise_draft(board, at, draft)

    def receive_link(self, board: int, online: bool, at: float) -> None:
        """The e-board's link went up or down (may repeat); then drain the outputs."""
        watch = self._board(board)
        if online is not watch.online:
            watch.gap(unseen=False)
        was, watch.online = watch.online, online
        if not online and was is not False:
            watch.offline_since = at
            self._raise_draft(board, at, drafts.board_offline(board, at))
        elif online and was is False:
            since = watch.offline_since
            away = "" if since is None else f" after {format_duration(round(at - since))}"
            note = f"the e-board answers again{away}"
            self._book.resolve(board, (AlertKind.BOARD_OFFLINE,), at, note)

    def receive_flood(self, board: int, flooding: bool, at: float) -> None:
        """The e-board started flooding the line with sensor changes (or calmed down)."""
        if flooding:
            self._raise_draft(board, at, drafts.board_flooding(board, at))
        else:
            note = "the e-board reports no more changes than hands can make"
            self._book.resolve(board, (AlertKind.BOARD_FLOODING,), at, note)

    def receive_clock_link(self, board: int, connected: bool, at: float) -> None:
        """Whether a clock answers through the e-board (every reading may be passed)."""
        watch = self._board(board)
        was, watch.clock_connected = watch.clock_connected, connected
        if not connected and was is not False:
            self._raise_draft(board, at, drafts.clock_offline(board, at))
        elif connected and was is False:
            self._book.resolve(board, (AlertKind.CLOCK_OFFLINE,), at, "a clock answers again")

    def receive_journal(self, written: bool, reason: str, held: int, at: float) -> None:
        """The journal cannot be written (disk full, I/O error), or is written again.

        Board 0: it concerns the whole event. ``held`` inputs wait in memory meanwhile.
        """
        if not written:
            self._raise_draft(0, at, drafts.journal_failed(reason, at))
        else:
            note = f"the journal is written again: the {held} records held in memory are in it"
            self._book.resolve(0, (AlertKind.JOURNAL_FAILED,), at, note)

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
        if late is None or not self._raise_draft(board, when, late[0]):
            return
        if stage == "default":
            self._results.propose(board, late[1], ResultSource.LATE_ARRIVAL, when)
            return
        color = late[0].details["color"]
        moved = watch.first_move_at.get(color)
        if moved is not None:  # the player came after the warning's time, before its tick
            note = f"{color.capitalize()} made a move"
            self._book.resolve(board, (AlertKind.LATE_ARRIVAL,), moved, note)

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

    def new_round(self, board: int, rules: BoardRules, at: float) -> None:
        """The board starts another round under ``rules`` (``dgtcast round next``).

        Its watch starts afresh (the e-board's and clock's link states carry over), its
        result stays with the old round, its late-arrival checks may be raised again,
        and its open alerts about the old round's game resolve; those about its hardware
        (offline, clock offline, flooding) stay open while they hold. A board the engine
        did not know is added.
        """
        old = self._watch.get(board)
        watch = BoardWatch(rules)
        if old is not None:
            watch.online, watch.offline_since = old.online, old.offline_since
            watch.clock_connected = old.clock_connected
        self._watch[board] = watch
        self._results.forget(board)
        self._book.forget_episodes(lambda e: e[:2] != ("late_arrival", board))
        self._deadline_known = False
        self._book.resolve(board, GAME_KINDS, at, "the board moved on to the next round")

    # -- arbiter commands ------------------------------------------------------------------

    def acknowledge(self, alert_id: int, at: float) -> Alert:
        """An arbiter saw the alert; returns it acknowledged (again, if it already was).

        It stays open while its condition holds (a ``moves_recovered`` alert, whose
        action is a check, resolves).

        Raises:
            CommandRefused: no such alert.
        """
        alert = self._book.acknowledge(alert_id, at)
        if alert.kind in _SETTLED_BY_ACK and alert.is_open:
            note = "an arbiter checked them"
            (alert,) = self._book.resolve(
                alert.board, (alert.kind,), at, note, by=BY_ARBITER, scope=_scope_of(alert)
            )
        return alert

    def set_result(self, board: int, result: str, at: float) -> ResultState | None:
        """An arbiter sets the board's result, provisional until confirmed; ``*`` clears it.

        It settles a late arrival (the forfeit, or another decision, FIDE 6.7). Returns
        the new state (None after ``*``: the board's own results count again).

        Raises:
            CommandRefused: unknown board or result.
        """
        self._command_board(board)
        state = self._results.set(board, result, at)
        note = (
            f"an arbiter set the result {result}"
            if result != "*"
            else "an arbiter cleared the result"
        )
        self._book.resolve(board, (AlertKind.LATE_ARRIVAL,), at, note, by=BY_ARBITER)
        self._check_against_board(board, result, at, note)
        return state

    def _check_against_board(self, board: int, result: str, at: float, note: str) -> None:
        """A result set contrary to the one the board decided (a mate, a flag, the
        kings) raises ``result_contradicts_board``: the arbiter confirms it is meant.
        The board's own result, or a clear, resolves it."""
        watch = self._watch[board]
        decided = watch.board_result
        if result != "*" and decided is not None and PGN_RESULTS.get(result, result) != decided[0]:
            draft = drafts.result_contradicts_board(board, watch.game, result, decided, at)
            self._raise_draft(board, at, draft)
            return
        kinds = (AlertKind.RESULT_CONTRADICTS_BOARD,)
        self._book.resolve(board, kinds, at, note, by=BY_ARBITER)

    def confirm_result(self, board: int, at: float) -> ResultState:
        """An arbiter confirms the board's result: it becomes final.

        Every open alert about the board's game resolves: the decision is made.

        Raises:
            CommandRefused: unknown board, or no result to confirm.
        """
        self._command_board(board)
        state = self._results.confirm(board, at)
        note = f"an arbiter confirmed the result {state.result}"
        self._book.resolve(board, GAME_KINDS, at, note, by=BY_ARBITER)
        return state

    def accept_position(self, board: int, at: float) -> None:
        """An arbiter accepts the board's position (before the tracker acts on it)."""
        kinds = (AlertKind.OUT_OF_SYNC, AlertKind.GAP_AMBIGUOUS)
        self._book.resolve(
            board, kinds, at, "an arbiter accepted the board's position", by=BY_ARBITER
        )

    def choose_line(self, board: int, line: int, at: float) -> None:
        """An arbiter chose candidate ``line`` of the board's gap (before it is played)."""
        note = f"an arbiter chose line {line}"
        self._book.resolve(board, (AlertKind.GAP_AMBIGUOUS,), at, note, by=BY_ARBITER)

    # -- outputs and state -----------------------------------------------------------------

    def alerts_raised(self) -> list[Alert]:
        """Drain the new versions of alerts since the last call (raised, updated,
        acknowledged, resolved), oldest first (to publish)."""
        return self._book.changed()

    def decisions_made(self) -> list[Decision]:
        """Drain the decision records since the last call, in order (to journal)."""
        decisions, self._decisions = self._decisions, []
        return decisions

    @property
    def alerts(self) -> list[Alert]:
        """Every alert raised, in its latest version, oldest first."""
        return self._book.alerts

    @property
    def open_alerts(self) -> list[Alert]:
        """Alerts whose condition holds or whose decision is not made, oldest first."""
        return [alert for alert in self.alerts if alert.is_open]

    def result_of(self, board: int) -> ResultState | None:
        """The board's result, None while there is none."""
        return self._results.result_of(board)

    # -- game events -----------------------------------------------------------------------

    def _follow(
        self,
        board: int,
        watch: BoardWatch,
        event: GameStarted | MoveMade | InSync | PositionAccepted,
    ) -> None:
        """Events that change what the engine follows on the board, and clear conditions."""
        match event:
            case GameStarted():
                watch.new_game(event.at)
                self._book.resolve(
                    board, _GAME_CONDITIONS, event.at, "a new game started on the board"
                )
            case MoveMade():
                self._moved(board, watch, event)
            case InSync():
                watch.out_of_sync = False
                kinds = (AlertKind.OUT_OF_SYNC, AlertKind.GAP_AMBIGUOUS)
                self._book.resolve(board, kinds, event.at, "the pieces match the game again")
            case PositionAccepted():
                watch.out_of_sync = False
                watch.moved = True  # the game goes on from a position: no start check any more
            case _:
                assert_never(event)

    def _moved(self, board: int, watch: BoardWatch, event: MoveMade) -> None:
        """A move: proof of presence (FIDE 6.7) that ends a late-arrival warning."""
        color: Color = "white" if event.ply % 2 else "black"
        watch.moved = True
        watch.plies = event.ply
        watch.first_move_at.setdefault(color, event.at)
        late = self._book.open_alert(board, AlertKind.LATE_ARRIVAL)
        warned = late is not None and late.details.get("stage") == "warning"
        if warned and late is not None and late.details.get("color") == color:
            note = f"{color.capitalize()} made a move"
            self._book.resolve(board, (AlertKind.LATE_ARRIVAL,), event.at, note)

    def _moves_withdrawn(self, board: int, event: MovesWithdrawn) -> None:
        """Moves were taken back: an end of the game on the board no longer holds."""
        watch = self._watch[board]
        if watch.board_result_kind is AlertKind.GAME_OVER:
            watch.board_result = watch.board_result_kind = None
        self._results.withdraw_game_over(board, event.at)
        state = self._results.result_of(board)
        if state is None or not state.confirmed:
            note = "the moves that ended the game were taken back"
            self._book.resolve(board, (AlertKind.GAME_OVER,), event.at, note)

    def _sync_alert(
        self, board: int, watch: BoardWatch, event: OutOfSync | MovesRecovered | GapCandidates
    ) -> None:
        """The record and the board parted (out of sync), were joined again by moves
        nobody saw live (recovered), or could be by one of several lines (candidates)."""
        if isinstance(event, OutOfSync):
            if not watch.out_of_sync:
                watch.out_of_sync, watch.out_of_sync_event = True, event
                self._raise_draft(board, event.at, drafts.out_of_sync(board, watch.game, event))
        elif isinstance(event, MovesRecovered):
            watch.moved = True
            note = "the moves played meanwhile were recovered"
            self._book.resolve(board, (AlertKind.GAP_AMBIGUOUS,), event.at, note)
            self._raise_draft(board, event.at, drafts.moves_recovered(board, watch.game, event))
        else:
            self._raise_draft(board, event.at, drafts.gap_ambiguous(board, watch.game, event))

    def _game_decided(
        self, board: int, watch: BoardWatch, event: ResultSignalled | GameEnded | FlagFell
    ) -> None:
        """The board proposes a result: the kings gesture, the rules, or a flag."""
        draft: AlertDraft
        if isinstance(event, ResultSignalled):
            draft, source = (
                drafts.result_signalled(board, watch.game, event),
                ResultSource.RESULT_SIGNALLED,
            )
            how = "the players signalled it with the kings"
        elif isinstance(event, GameEnded):
            draft, source = drafts.game_over(board, watch.game, event), ResultSource.GAME_OVER
            how = f"{event.termination} on the board"
        else:
            draw_odds = watch.rules.clocks.draw_odds
            draft = drafts.flag_fall(board, watch.game, event, draw_odds)
            source = ResultSource.FLAG_FALL
            how = f"{event.color.capitalize()}'s flag fell"
        if not self._confirmed(board):  # a decided game: the pieces are tidied up
            watch.board_result = (event.result, how)
            watch.board_result_kind = draft.kind
        if self._raise_draft(board, event.at, draft):
            self._results.propose(board, event.result, source, event.at)

    # -- alerts, results and decisions ----------------------------------------------------

    def _confirmed(self, board: int) -> bool:
        state = self._results.result_of(board)
        return state is not None and state.confirmed

    def _clock_checked(self, board: int) -> bool:
        """Whether the board's clock is still judged: not once the game has a result (a
        forfeit proposed at the default time is no end: the arbiter may let it go on)."""
        state = self._results.result_of(board)
        return state is None or state.source is ResultSource.LATE_ARRIVAL

    def _raise_draft(self, board: int, at: float, draft: AlertDraft) -> bool:
        """Raise the draft (or update its condition's open alert); True when done.

        None about the game while the board's result is confirmed: the game is decided.
        """
        if draft.kind in GAME_KINDS:
            state = self._results.result_of(board)
            if state is not None and state.confirmed:
                return False
        return self._book.raise_draft(board, at, draft)

    def _record_alert(self, board: int, at: float, payload: dict[str, Any]) -> None:
        self._decide(board, "alert", at, payload)

    def _decide(self, board: int, kind: str, at: float, payload: dict[str, Any]) -> None:
        self._decisions.append(Decision(board=board, kind=kind, at=at, payload=payload))

    def _board(self, board: int) -> BoardWatch:
        watch = self._watch.get(board)
        if watch is None:
            raise ValueError(f"board {board} is not configured")
        return watch

    def _command_board(self, board: int) -> None:
        if board not in self._watch:
            raise CommandRefused(f"no board {board}")


def _scope_of(alert: Alert) -> tuple[str, ...]:
    """The scope of a ``moves_recovered`` alert's condition (its first ply)."""
    return (str(alert.details["from_ply"]),)
