"""What a board's game makes the arbiter alert engine raise and resolve (pure).

:class:`GameAlerts` is the engine's state (every board's :class:`~daemon.arbiter.watch.
BoardWatch`, the :class:`~daemon.arbiter.book.AlertBook`, the
:class:`~daemon.arbiter.results.ResultLedger`, the decisions to journal) and what the game
tracker's events do to it: the clock checks of a reading or a move, the start of a game,
a move that proves a player present, out of sync and back, moves recovered or candidate
lines for a gap, and a result the board proposes. :class:`~daemon.arbiter.engine.
AlertEngine` adds the links, the ticks and the arbiter's commands.
"""

from __future__ import annotations

from typing import Any, assert_never

from base.colors import Color
from broadcast.feed.alerts import AlertKind
from daemon.arbiter import drafts
from daemon.arbiter.book import AlertBook
from daemon.arbiter.decisions import AlertSettings, Decision
from daemon.arbiter.results import ResultLedger, ResultSource
from daemon.arbiter.watch import AlertDraft, BoardWatch, Cleared
from daemon.game.events import (
    ClocksCorrected,
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

__all__ = ["GAME_KINDS", "GameAlerts"]


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


class GameAlerts:
    """The alert engine's state, and what a board's game events do to it (see the module
    docstring); :class:`~daemon.arbiter.engine.AlertEngine` is the whole engine."""

    def __init__(self, settings: AlertSettings) -> None:
        self._settings = settings
        self._watch = {number: BoardWatch(rules) for number, rules in settings.boards.items()}
        self._book = AlertBook(self._record_alert)  # a bound method: snapshots pickle it
        self._results = ResultLedger(self._decide)
        self._deadline: float | None = None
        self._deadline_known = False  # _deadline is up to date (see next_deadline)
        self._decisions: list[Decision] = []

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
                self._sides_learnt(board, watch, event)
            case ClocksCorrected():
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
        self._recovered_settled(board, event)
        if self._book.open_alert(board, AlertKind.GAP_AMBIGUOUS) is not None:
            note = "a move matched the board: the game goes on from it"
            self._book.resolve(board, (AlertKind.GAP_AMBIGUOUS,), event.at, note)
        late = self._book.open_alert(board, AlertKind.LATE_ARRIVAL)
        warned = late is not None and late.details.get("stage") == "warning"
        if warned and late is not None and late.details.get("color") == color:
            note = f"{color.capitalize()} made a move"
            self._book.resolve(board, (AlertKind.LATE_ARRIVAL,), event.at, note)

    def _recovered_settled(self, board: int, event: MoveMade) -> None:
        """A move after recovered plies: the board plays on in sync from them, so they
        stand in the record and their ``moves_recovered`` alert resolves (its log line
        stays)."""
        for alert in self._book.open_of(board):
            if alert.kind is not AlertKind.MOVES_RECOVERED:
                continue
            first, plies = int(alert.details["from_ply"]), int(alert.details["plies"])
            if event.ply >= first + plies:
                note = (
                    f"the board plays on in sync after plies {first}-{first + plies - 1}:"
                    " they stand in the record"
                )
                kinds = (AlertKind.MOVES_RECOVERED,)
                self._book.resolve(board, kinds, event.at, note, scope=(str(first),))

    def _sides_learnt(self, board: int, watch: BoardWatch, event: ClockSidesLearned) -> None:
        """The clock's sides learnt again once moves were made (the board's memory told
        them otherwise): the clock checks made so far had the colours swapped."""
        if not watch.moved:
            return
        watch.increment_wrong.clear()
        note = "the clock's sides were learnt again: the check had the colours swapped"
        for scope in (("start",), ("increment", "white"), ("increment", "black")):
            self._book.resolve(board, (AlertKind.CLOCK_MISMATCH,), event.at, note, scope=scope)

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
