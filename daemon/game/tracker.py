"""Game reconstruction: sensed placements and clock readings in, game events out (sans-I/O).

The tracker never reads a clock: every input carries ``at`` and timers fire from
:meth:`GameTracker.receive_tick` (or from the next input, as of their own deadline).
Each placement, in real board coordinates, is matched as a whole against the game
(:mod:`daemon.game.matching`); a match ahead of it is a pending move, completed by a lever
press, a reply or its settle time (:mod:`daemon.game.pending`), and published on the game
line (:mod:`daemon.game.line`); nothing matched for the hold time is :class:`OutOfSync`.
The algorithm, case by case, is in docs/reconstruction.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import chess

from base.drain import drain
from daemon.game.clock import ClockContext, ClockTracker, LeverPress
from daemon.game.events import (
    GameEnded,
    GameEvent,
    GameStarted,
    InSync,
    OutOfSync,
    PositionAccepted,
    ResultSignalled,
)
from daemon.game.gap import plies_between
from daemon.game.gesture import KingsGesture
from daemon.game.line import GameLine
from daemon.game.matching import START, Match, MatchKind, placement_key, rotated
from daemon.game.pending import Pending, Presses, reply_completes, settle_time, showing
from daemon.game.rules import fullmove_after, game_outcome
from daemon.game.starts import (
    STANDARD_NUMBER,
    StartPosition,
    find_start,
    set_up_game,
    starts_new_game,
)
from daemon.game.state import TrackerSettings, TrackerState, Trigger, next_state
from drivers.observations import (
    ClockObserved,
    ClockSide,
    LinkObserved,
    LinkState,
    PlacementObserved,
)

__all__ = ["GameTracker"]


class GameTracker:
    """Follows the game on one board (``settings``: timers and clock options, defaults in
    :class:`TrackerSettings`). After each input (``receive_*``), call
    :meth:`events_received` and :meth:`next_deadline`."""

    def __init__(self, settings: TrackerSettings | None = None) -> None:
        self.settings = settings or TrackerSettings()
        self._clock = ClockTracker(
            white_side=self.settings.white_side,
            increment=self.settings.increment,
            rules=self.settings.clock_rules,
        )
        self._state = TrackerState.WAITING
        self._rotated = False
        self._line = GameLine(chess.Board(), 0.0)
        self._start_key = START  # the game's start position (Chess960: one of 960)
        self._presses = Presses()
        self._pending: Pending | None = None
        self._sensed: chess.BaseBoard | None = None
        self._seen = chess.BaseBoard()
        self._unmatched_since: float | None = None
        self._gesture = KingsGesture()
        self._online = True
        self._result = "*"
        self._events: list[GameEvent] = []

    # -- read-only views ------------------------------------------------------------

    @property
    def board(self) -> chess.Board:
        """A copy of the game as published (moves since the start or accepted position)."""
        return self._line.board.copy()

    @property
    def ply(self) -> int:
        """Plies played so far (0 before White's first move)."""
        return self._line.ply

    @property
    def state(self) -> TrackerState:
        """Where the tracker stands (see :mod:`daemon.game.state`)."""
        return self._state

    @property
    def is_in_sync(self) -> bool:
        """False while an :class:`OutOfSync` episode lasts."""
        return self._state is not TrackerState.OUT_OF_SYNC

    @property
    def unmatched_since(self) -> float | None:
        """Since when the sensed placement matches no position of the game; None if it does."""
        return self._unmatched_since

    @property
    def result(self) -> str:
        """The result decided on the board (mate, stalemate, kings gesture), else ``"*"``."""
        return self._result

    @property
    def rotated(self) -> bool:
        """The board stands turned by 180° (learned from the start position)."""
        return self._rotated

    @property
    def white_side(self) -> ClockSide | None:
        """The clock side White sits at, once set or learned."""
        return self._clock.white_side

    @property
    def sides_sure(self) -> bool:
        """White's clock side is set, or learnt from a press that completed a move."""
        return self._clock.sides_sure

    @property
    def sensed(self) -> chess.BaseBoard | None:
        """A copy of the last placement sensed (sensor coordinates), None before any."""
        return None if self._sensed is None else self._sensed.copy()

    @property
    def last_clock(self) -> ClockObserved | None:
        """The last clock reading taken, None before any."""
        return self._clock.last

    @property
    def start_stands(self) -> bool:
        """The start position stands, no move on its way: a press now only starts the clock."""
        return self._start_stands()

    @property
    def moving_color(self) -> chess.Color | None:
        """The colour whose move the board shows on its way (pending), None if none."""
        pending = self._pending
        return self._line.base_turn(pending.match) if pending and pending.match.moves else None

    # -- inputs ---------------------------------------------------------------------

    def receive_placement(self, observation: PlacementObserved) -> None:
        """Take the whole placement the sensors see now."""
        self._fire_timers(observation.at)
        self._sensed = observation.board.copy()
        start = self._new_game_start(observation.board)
        if start is not None:
            self._start_game(start, observation.at)
        if self._state in (TrackerState.WAITING, TrackerState.ENDED):
            return
        self._see(observation.board, observation.at)

    def receive_clock(self, observation: ClockObserved) -> None:
        """Take one clock reading (times, flags, running side)."""
        self._fire_timers(observation.at)
        context = ClockContext(
            board=self._line.board,
            start_stands=self._start_stands(),
            moving=self.moving_color,
            ended=self._state in (TrackerState.WAITING, TrackerState.ENDED),
        )
        press = self._clock.receive_clock(observation, context)
        self._events.extend(self._clock.events_received())
        if press is None or self._state not in (TrackerState.PLAYING, TrackerState.OUT_OF_SYNC):
            return
        moving = self._pending is not None or self._unmatched_since is not None
        self._presses.add(press, moving=moving)
        self._complete_by_press(observation.at)

    def receive_link(self, observation: LinkObserved) -> None:
        """Take a link change: while offline no timer runs on a placement nobody sees."""
        self._fire_timers(observation.at)
        self._online = observation.state is LinkState.ONLINE
        if not self._online:
            self._hide_pending()
            self._unmatched_since = None
            self._gesture.clear()

    def forget_presses(self, white_side: ClockSide | None = None, at: float = 0.0) -> None:
        """Forget the lever presses no move has taken yet, the clock as the game's last
        move left it: the board's memory is about to be replayed, and holds every press
        since the game as known (one seen live would complete a replayed move again), with
        White's clock side ``white_side`` when the memory tells it otherwise."""
        if white_side is not None and self._clock.correct_sides(white_side, at):
            self._events.extend(self._clock.events_received())
        self._presses.clear()
        self._clock.rewind(self._line.board.turn)

    def withdraw(self, plies: int, at: float) -> None:
        """Withdraw the last ``plies`` moves: the board's memory played others there (a
        lost field update made a line of the board's own), and its replay makes them; a
        game they ended goes on."""
        if plies:
            self._withdraw(Match(kind=MatchKind.CORRECTION, back=plies), at)
            self._pending = None
            if self._state is TrackerState.ENDED:
                self._state, self._result = next_state(self._state, Trigger.WITHDRAW), "*"

    def receive_tick(self, now: float) -> None:
        """Let time pass: fire every timer due by ``now`` (call it at :meth:`next_deadline`)."""
        self._fire_timers(now)

    def accept_position(self, now: float) -> bool:
        """The arbiter accepts the board as it stands; the game goes on from it.

        A placement that matches the game completes that match. Otherwise the board
        becomes the position: side to move from the running clock, else the side that
        did not move last; castling rights that survive with king and rook in place;
        en passant only for an unchanged side to move. Before any game, this starts one
        from a set-up position. Call :meth:`events_received` next.

        Returns:
            False when there is nothing to accept: no placement, the game ended, or no
            game can go on from the board (a king missing or doubled, the side not to
            move in check, a pawn on its last rank).
        """
        self._fire_timers(now)
        if self._state is TrackerState.ENDED or self._sensed is None:
            return False
        if self._state is TrackerState.WAITING:
            return self._accept_new_game(now)
        match = self._line.match(placement_key(self._seen))
        if match is not None:
            if match.kind is not MatchKind.CURRENT:
                self._pending = Pending(match, now, self._clock_snapshot(), visible=True)
                self._settle(now)
            return True
        board = self._line.continued(self._seen, self._clock.running_color)
        if board is None:
            return False
        unrecovered = plies_between(self._line.board, self._seen, board.turn)
        if unrecovered is not None:  # the move number goes on past the plies not recovered
            board.fullmove_number = fullmove_after(self._line.board, unrecovered)
        self._restart_from(board, now, unrecovered)
        return True

    def shows_game(self, sensed: chess.BaseBoard) -> bool:
        """Whether the sensed placement is a position of the game (or a move or two on)."""
        if self._state not in (TrackerState.PLAYING, TrackerState.OUT_OF_SYNC):
            return True
        seen = rotated(sensed) if self._rotated else sensed
        return self._line.match(placement_key(seen)) is not None

    def color_at(self, side: ClockSide) -> chess.Color | None:
        """The colour sitting at a clock side, None while unknown."""
        return self._clock.color_of(side)

    def play_line(self, moves: Sequence[chess.Move], now: float) -> bool:
        """Publish ``moves`` from the game's position: a gap the arbiter (or the search)
        filled. The last move gets the mover's clock time as it stands (that side's clock
        stopped at its press); the others have no ``[%clk]``. Call :meth:`events_received`.

        Returns:
            False (and nothing changes) when the game is not under way or a move is illegal.
        """
        self._fire_timers(now)
        if self._state not in (TrackerState.PLAYING, TrackerState.OUT_OF_SYNC):
            return False
        if not self._line.playable(moves):
            return False
        self._back_in_sync(now)
        self._pending = None
        self._unmatched_since = None
        nobody: dict[chess.Color, int | None] = {chess.WHITE: None, chess.BLACK: None}
        for index, move in enumerate(moves):
            last = index == len(moves) - 1
            self._play(move, None, self._clock_snapshot() if last else nobody, now)
        self._end_if_over(now)
        return True

    # -- outputs --------------------------------------------------------------------

    def events_received(self) -> list[GameEvent]:
        """Drain the events produced so far, in order."""
        return drain(self._events)

    def next_deadline(self) -> float | None:
        """When :meth:`receive_tick` must be called next, None if no timer runs."""
        return min((when for when, _ in self._timers()), default=None)

    # -- new games ------------------------------------------------------------------

    def _new_game_start(self, raw: chess.BaseBoard) -> StartPosition | None:
        """The start position this placement shows when it starts a new game, else None
        (in a Chess960 section any of the 960, :func:`find_start`, :func:`starts_new_game`)."""
        start = find_start(raw, placement_key(raw), chess960=self.settings.chess960)
        if start is None or self._state in (TrackerState.WAITING, TrackerState.ENDED):
            return start
        after = self.settings.new_game_after_plies
        new = starts_new_game(start, self._line, rotated=self._rotated, after=after)
        return start if new else None

    def _start_game(self, start: StartPosition, at: float) -> None:
        self._state = next_state(self._state, Trigger.START)
        self._rotated = start.rotated
        self._start_key = start.key
        self._reset_game(start.board(), at)
        self._clock.reset()
        self._result = "*"
        self._events.append(GameStarted(rotated=start.rotated, chess960=start.number, at=at))

    def _reset_game(self, board: chess.Board, at: float) -> None:
        self._line = GameLine(board, at)
        self._presses.clear()
        self._pending = None
        self._unmatched_since = None
        self._gesture.clear()

    # -- placements -----------------------------------------------------------------

    def _see(self, sensed: chess.BaseBoard, at: float) -> None:
        self._seen = rotated(sensed) if self._rotated else sensed.copy()
        if self._gesture.see(self._seen, at):  # no position of any game
            self._hide_pending()
            self._unmatched_since = None
            return
        pending = self._pending
        backwards = pending is not None and pending.match.kind is MatchKind.TAKEBACK
        match = self._line.match(placement_key(self._seen), backwards=backwards)
        if match is None:
            self._hide_pending()
            if self._unmatched_since is None:
                self._unmatched_since = at
            return
        self._unmatched_since = None
        self._back_in_sync(at)
        if match.kind is MatchKind.CURRENT:
            self._pending = None
            return
        match = self._complete_by_reply(match, at)
        if self._state is TrackerState.ENDED:
            return
        self._pending = showing(self._pending, match, at, self._clock_snapshot())
        self._complete_by_press(at)

    def _back_in_sync(self, at: float) -> None:
        if self._state is TrackerState.OUT_OF_SYNC:
            self._state = next_state(self._state, Trigger.MATCH)
            self._events.append(InSync(at=at))

    def _complete_by_reply(self, match: Match, at: float) -> Match:
        """Complete the pending move if ``match`` is a reply that does (:func:`reply_completes`);
        returns what stays pending: the reply, or ``match``."""
        pending = self._pending
        if pending is None or not reply_completes(pending, match, self._clock.is_running):
            return match
        presses: list[LeverPress | None] = [*self._assign_presses(pending.match)] or [None]
        self._publish(pending, presses, at)
        return Match(kind=MatchKind.FORWARD, moves=match.moves[1:])

    def _hide_pending(self) -> None:
        if self._pending is not None:
            self._pending.visible = False

    def _clock_snapshot(self) -> dict[chess.Color, int | None]:
        return {color: self._clock.seconds(color) for color in chess.COLORS}

    # -- completing moves -----------------------------------------------------------

    def _assign_presses(self, match: Match) -> list[LeverPress]:
        """The lever presses that completed the leading moves of ``match``, in order."""
        since, color = self._line.turn_began(match.back), self._line.base_turn(match)
        returned = self._line.presses(match.back) if match.kind is MatchKind.CORRECTION else []
        return self._presses.assign(since, color, len(match.moves), self._clock.color_of, returned)

    def _complete_by_press(self, at: float) -> None:
        pending = self._pending
        if pending is None or not pending.match.moves:
            return
        presses = self._assign_presses(pending.match)
        if presses:
            self._publish(pending, presses, at)

    def _publish(self, pending: Pending, presses: Sequence[LeverPress | None], at: float) -> None:
        """Withdraw what the match replaces, then play its first ``len(presses)`` moves."""
        match = pending.match
        if match.back:
            self._withdraw(match, at)
        count = len(presses)
        for move, press in zip(match.moves[:count], presses, strict=True):
            self._play(move, press, pending.shown, at)
        self._pending = pending.rest(count)
        self._presses.forget_before(self._line.turn_began(1))
        self._end_if_over(at)

    def _withdraw(self, match: Match, at: float) -> None:
        self._events.append(self._line.withdraw(match, at))
        if match.kind is MatchKind.TAKEBACK:
            self._presses.clear()

    def _play(
        self,
        move: chess.Move,
        press: LeverPress | None,
        shown: dict[chess.Color, int | None],
        at: float,
    ) -> None:
        board = self._line.board
        times = self._clock.move_clock(board.turn, press, shown[board.turn], board.fullmove_number)
        if press is not None:
            self._presses.take(press)
        began = at if press is None else press.at
        self._events.append(self._line.play(move, times, began, at, press))

    def _end_if_over(self, at: float) -> None:
        outcome = game_outcome(self._line.board)
        if outcome is None:
            return
        self._state = next_state(self._state, Trigger.END)
        self._result, termination = outcome
        self._pending = None
        self._unmatched_since = None
        self._events.append(GameEnded(result=self._result, termination=termination, at=at))

    # -- timers ---------------------------------------------------------------------

    def _timers(self) -> list[tuple[float, Callable[[float], None]]]:
        timers: list[tuple[float, Callable[[float], None]]] = []
        pending = self._pending
        if pending is not None and pending.visible and self._online:
            wait = settle_time(self.settings, pending.match, self._seen, self._clock.is_running)
            timers.append((pending.since + wait, self._settle))
        if self._unmatched_since is not None and self._state is TrackerState.PLAYING:
            timers.append((self._unmatched_since + self.settings.out_of_sync_hold, self._lose))
        signals_at = self._gesture.signals_at(self.settings.result_settle_time)
        if signals_at is not None:
            timers.append((signals_at, self._signal))
        return timers

    def _fire_timers(self, now: float) -> None:
        while True:
            due = min(self._timers(), default=None, key=lambda timer: timer[0])
            if due is None or due[0] > now:
                return
            when, fire = due
            fire(when)

    def _settle(self, when: float) -> None:
        pending = self._pending
        assert pending is not None
        presses: list[LeverPress | None] = [*self._assign_presses(pending.match)]
        presses += [None] * (len(pending.match.moves) - len(presses))
        self._publish(pending, presses, when)

    def _lose(self, when: float) -> None:
        self._state = next_state(self._state, Trigger.LOSE)
        expected, placement = self._line.board.fen(), self._seen.board_fen()
        self._events.append(OutOfSync(expected_fen=expected, placement=placement, at=when))

    def _signal(self, when: float) -> None:
        result = self._gesture.result
        assert result is not None
        self._state = next_state(self._state, Trigger.END)
        self._result = result
        self._pending = None
        self._presses.clear()
        self._unmatched_since = None
        self._gesture.clear()
        self._events.append(ResultSignalled(result=result, at=when))

    # -- clock context --------------------------------------------------------------

    def _start_stands(self) -> bool:
        return (
            self._state is TrackerState.PLAYING
            and self._line.keys == [self._start_key]
            and self._pending is None
            and self._unmatched_since is None
        )

    # -- accepted positions ---------------------------------------------------------

    def _accept_new_game(self, now: float) -> bool:
        assert self._sensed is not None
        chess960, turn = self.settings.chess960, self._clock.running_color
        board = set_up_game(self._sensed, chess960=chess960, turn=turn)
        if board is None:
            return False
        standard = STANDARD_NUMBER if chess960 else None
        self._start_game(StartPosition(rotated=False, number=standard), now)
        if placement_key(board) != START:
            self._restart_from(board, now)
        return True

    def _restart_from(self, board: chess.Board, now: float, unrecovered: int | None = 0) -> None:
        was_out = self._state is TrackerState.OUT_OF_SYNC
        self._state = next_state(self._state, Trigger.ACCEPT)
        self._reset_game(board, now)
        self._events.append(PositionAccepted(fen=board.fen(), at=now, unrecovered=unrecovered))
        if was_out:
            self._events.append(InSync(at=now))
        self._end_if_over(now)
