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
  :mod:`daemon.arbiter.drafts`. Both return drafts; the engine raises them. What the
  game's events raise and resolve is :mod:`daemon.arbiter.game_alerts`; this module
  adds the links, the ticks and the arbiter's commands.
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

from broadcast.feed.alerts import BY_ARBITER, Alert, AlertKind
from broadcast.feed.messages import PGN_RESULTS
from daemon.arbiter import drafts
from daemon.arbiter.decisions import Decision
from daemon.arbiter.game_alerts import GAME_KINDS, GameAlerts
from daemon.arbiter.results import CommandRefused, ResultSource, ResultState
from daemon.arbiter.watch import BoardRules, BoardWatch
from daemon.game.durations import format_duration
from daemon.game.events import PositionAccepted

__all__ = ["GAME_KINDS", "AlertEngine"]


#: What an arbiter's acknowledgement settles: "check them against the scoresheets".
_SETTLED_BY_ACK = (AlertKind.MOVES_RECOVERED,)


class AlertEngine(GameAlerts):
    """Raises arbiter alerts, resolves them, and keeps every board's result (docs/alerts.md).

    Feed it with ``receive_*``; then drain :meth:`decisions_made` (journal them first)
    and :meth:`alerts_raised` (publish them). Call :meth:`receive_tick` at
    :meth:`next_deadline`.
    """

    # -- inputs ----------------------------------------------------------------------------

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

    def accept_position(self, board: int, at: float, jump: PositionAccepted | None = None) -> None:
        """An arbiter accepts the board's position (before the game's events reach the
        engine); ``jump``: the game goes on from it (the note says how many plies the
        record lacks), None: the board matched the game."""
        kinds = (AlertKind.OUT_OF_SYNC, AlertKind.GAP_AMBIGUOUS)
        note = "an arbiter accepted the board's position"
        lost = "" if jump is None else jump.unrecovered_text
        note = f"{note}: the moves up to the last agreement stay, {lost}" if lost else note
        self._book.resolve(board, kinds, at, note, by=BY_ARBITER)

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

    def _command_board(self, board: int) -> None:
        if board not in self._watch:
            raise CommandRefused(f"no board {board}")


def _scope_of(alert: Alert) -> tuple[str, ...]:
    """The scope of a ``moves_recovered`` alert's condition (its first ply)."""
    return (str(alert.details["from_ply"]),)
