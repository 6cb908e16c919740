"""Game reconstruction: sensed placements and clock readings in, game events out (sans-I/O).

The tracker never reads a clock: every input carries ``at`` and timers fire from
:meth:`GameTracker.receive_tick` (or from the next input, as of their own deadline).
The algorithm is in docs/reconstruction.md; in short:

* Each placement is turned to real board coordinates (a board set up rotated reports
  ``square ^ 63``, dgt-protocol.md §5.2) and matched as a whole against the positions
  reachable from the game (:mod:`daemon.game.matching`). Placements that match nothing
  are the normal state of a hand over the board.
* A match ahead of the game is a *pending* move. A lever press by the mover completes
  it at once; without one it completes when its placement has stood for a settle time
  (short without a running clock, long with one: the press is then the normal signal).
  A pending move that the next placements contradict is simply replaced; a published one
  is corrected (:class:`MovesWithdrawn` then :class:`MoveMade`).
* Nothing matched for the hold time: :class:`OutOfSync`, once; any match ends it, and so
  does :meth:`GameTracker.accept_position`. Clock, flags and the kings gesture go on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import chess

from daemon.game.clock import ClockContext, ClockTracker, LeverPress
from daemon.game.events import (
    GameEnded,
    GameEvent,
    GameStarted,
    InSync,
    MoveMade,
    MovesWithdrawn,
    OutOfSync,
    PositionAccepted,
    ResultSignalled,
)
from daemon.game.matching import (
    START,
    Match,
    MatchKind,
    find_match,
    placement_key,
    rotated,
)
from daemon.game.pending import Pending, assign_presses, settle_time
from daemon.game.rules import continued_from, game_outcome, result_of_kings
from daemon.game.starts import STANDARD_NUMBER, StartPosition, find_start
from daemon.game.state import TrackerSettings, TrackerState, Trigger, next_state
from drivers.observations import (
    ClockObserved,
    ClockSide,
    LinkObserved,
    LinkState,
    PlacementObserved,
)

__all__ = ["GameTracker"]

_MAX_PRESSES = 8


class GameTracker:
    """Follows the game on one board.

    Args:
        settings: timers and clock options; defaults in :class:`TrackerSettings`.
    """

    def __init__(self, settings: TrackerSettings | None = None) -> None:
        self.settings = settings or TrackerSettings()
        self._clock = ClockTracker(
            white_side=self.settings.white_side,
            increment=self.settings.increment,
            rules=self.settings.clock_rules,
        )
        self._state = TrackerState.WAITING
        self._rotated = False
        self._board = chess.Board()
        self._base_ply = 0
        self._history = [START]
        self._start_key = START  # the game's start position (Chess960: one of 960)
        self._turn_began = [0.0]
        self._presses: list[LeverPress] = []
        self._pending: Pending | None = None
        self._sensed: chess.BaseBoard | None = None
        self._seen = chess.BaseBoard()
        self._unmatched_since: float | None = None
        self._gesture: tuple[str, float] | None = None
        self._online = True
        self._result = "*"
        self._events: list[GameEvent] = []

    # -- read-only views ------------------------------------------------------------

    @property
    def board(self) -> chess.Board:
        """A copy of the game as published (moves since the start or accepted position)."""
        return self._board.copy()

    @property
    def ply(self) -> int:
        """Plies played so far (0 before White's first move)."""
        return self._base_ply + len(self._board.move_stack)

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
    def sensed(self) -> chess.BaseBoard | None:
        """A copy of the last placement sensed (sensor coordinates), None before any."""
        return None if self._sensed is None else self._sensed.copy()

    @property
    def last_clock(self) -> ClockObserved | None:
        """The last clock reading taken, None before any."""
        return self._clock.last

    # -- inputs ---------------------------------------------------------------------

    def receive_placement(self, observation: PlacementObserved) -> None:
        """Take the whole placement the sensors see now.

        Call :meth:`events_received` and :meth:`next_deadline` next.
        """
        self._fire_timers(observation.at)
        self._sensed = observation.board.copy()
        start = self._new_game_start(observation.board)
        if start is not None:
            self._start_game(start, observation.at)
        if self._state in (TrackerState.WAITING, TrackerState.ENDED):
            return
        self._see(observation.board, observation.at)

    def receive_clock(self, observation: ClockObserved) -> None:
        """Take one clock reading (times, flags, running side).

        Call :meth:`events_received` and :meth:`next_deadline` next.
        """
        self._fire_timers(observation.at)
        context = ClockContext(
            board=self._board,
            start_stands=self._start_stands(),
            moving=self._moving_color(),
            ended=self._state in (TrackerState.WAITING, TrackerState.ENDED),
        )
        press = self._clock.receive_clock(observation, context)
        self._events.extend(self._clock.events_received())
        if press is None or self._state not in (TrackerState.PLAYING, TrackerState.OUT_OF_SYNC):
            return
        if self._presses and self._presses[-1].side is not press.side:
            # The other side's press completed no move and the clock was handed back:
            # it was pressed without a move (or for one already published); forget it.
            self._presses.pop()
        self._presses = [*self._presses[-_MAX_PRESSES + 1 :], press]
        self._complete_by_press(observation.at)

    def receive_link(self, observation: LinkObserved) -> None:
        """Take a link change: while offline no timer runs on a placement nobody sees.

        Call :meth:`events_received` and :meth:`next_deadline` next.
        """
        self._fire_timers(observation.at)
        self._online = observation.state is LinkState.ONLINE
        if not self._online:
            self._hide_pending()
            self._unmatched_since = None
            self._gesture = None

    def receive_tick(self, now: float) -> None:
        """Let time pass: fire every timer due by ``now``.

        Call it at :meth:`next_deadline`, then :meth:`events_received`.
        """
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
        match = find_match(self._board, placement_key(self._seen), self._history)
        if match is not None:
            if match.kind is not MatchKind.CURRENT:
                self._pending = Pending(match, now, self._clock_snapshot(), visible=True)
                self._settle(now)
            return True
        running = self._clock.running_color
        turn = (not self._board.turn) if running is None else running
        board = continued_from(self._seen, self._board, turn)
        if board is None:
            return False
        self._restart_from(board, now)
        return True

    def shows_game(self, sensed: chess.BaseBoard) -> bool:
        """Whether the sensed placement is a position of the game (or a move or two on)."""
        if self._state not in (TrackerState.PLAYING, TrackerState.OUT_OF_SYNC):
            return True
        seen = rotated(sensed) if self._rotated else sensed
        return find_match(self._board, placement_key(seen), self._history) is not None

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
        board = self._board.copy(stack=False)
        for move in moves:
            if not board.is_legal(move):
                return False
            board.push(move)
        if self._state is TrackerState.OUT_OF_SYNC:
            self._state = next_state(self._state, Trigger.MATCH)
            self._events.append(InSync(at=now))
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
        events, self._events = self._events, []
        return events

    def next_deadline(self) -> float | None:
        """When :meth:`receive_tick` must be called next, None if no timer runs."""
        return min((when for when, _ in self._timers()), default=None)

    # -- new games ------------------------------------------------------------------

    def _new_game_start(self, raw: chess.BaseBoard) -> StartPosition | None:
        """The start position this placement shows when it starts a new game, else None.

        Any Chess960 start position counts in a Chess960 section (:mod:`daemon.game.starts`);
        the game's own start, seen again within a few plies, is a takeback instead.
        """
        start = find_start(raw, placement_key(raw), chess960=self.settings.chess960)
        if start is None:
            return None
        if self._state in (TrackerState.WAITING, TrackerState.ENDED):
            return start
        if start.rotated != self._rotated or start.key not in self._history:
            return start
        if self.ply >= self.settings.new_game_after_plies:
            return start
        return None

    def _start_game(self, start: StartPosition, at: float) -> None:
        self._state = next_state(self._state, Trigger.START)
        self._rotated = start.rotated
        self._start_key = start.key
        self._reset_game(start.board(), at)
        self._clock.reset()
        self._result = "*"
        self._events.append(GameStarted(rotated=start.rotated, chess960=start.number, at=at))

    def _reset_game(self, board: chess.Board, at: float) -> None:
        self._board = board
        self._base_ply = 2 * (board.fullmove_number - 1) + (board.turn == chess.BLACK)
        self._history = [placement_key(board)]
        self._turn_began = [at]
        self._presses = []
        self._pending = None
        self._unmatched_since = None
        self._gesture = None

    # -- placements -----------------------------------------------------------------

    def _see(self, sensed: chess.BaseBoard, at: float) -> None:
        self._seen = rotated(sensed) if self._rotated else sensed.copy()
        gesture = result_of_kings(self._seen)
        self._note_gesture(gesture, at)
        match = None
        if gesture is None:
            pending = self._pending
            backwards = pending is not None and pending.match.kind is MatchKind.TAKEBACK
            key = placement_key(self._seen)
            match = find_match(self._board, key, self._history, backwards=backwards)
        if match is None:
            self._hide_pending()
            if gesture is None and self._unmatched_since is None:
                self._unmatched_since = at
            return
        self._unmatched_since = None
        if self._state is TrackerState.OUT_OF_SYNC:
            self._state = next_state(self._state, Trigger.MATCH)
            self._events.append(InSync(at=at))
        if match.kind is MatchKind.CURRENT:
            self._pending = None
            return
        match = self._complete_by_reply(match, at)
        if self._state is TrackerState.ENDED:
            return
        self._show_pending(match, at)
        self._complete_by_press(at)

    def _note_gesture(self, gesture: str | None, at: float) -> None:
        if gesture is None:
            self._gesture = None
        elif self._gesture is None or self._gesture[0] != gesture:
            self._gesture = (gesture, at)
            self._unmatched_since = None

    def _show_pending(self, match: Match, at: float) -> None:
        pending = self._pending
        if pending is not None and pending.match == match:
            if not pending.visible:
                pending.visible, pending.since = True, at
            return
        self._pending = Pending(match, at, self._clock_snapshot(), visible=True)

    def _complete_by_reply(self, match: Match, at: float) -> Match:
        """Without a running clock, a reply on top of the pending move completes it.

        With a running clock the mover's lever press is awaited instead: a reply seen
        before it is more likely a piece knocked for a moment, and the press carries the
        move's clock times. Returns what stays pending: the reply, or ``match``.
        """
        pending = self._pending
        if (
            self._clock.is_running
            or pending is None
            or pending.match.kind is not MatchKind.FORWARD
            or match.kind is not MatchKind.FORWARD
            or len(pending.match.moves) != 1
            or match.moves[:1] != pending.match.moves
            or len(match.moves) != 2
        ):
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

    def _base_turn(self, match: Match) -> chess.Color:
        """The side to move in the position the match starts from (after withdrawing)."""
        return self._board.turn if match.back % 2 == 0 else not self._board.turn

    def _assign_presses(self, match: Match) -> list[LeverPress]:
        """The lever presses that completed the leading moves of ``match``, in order."""
        since = self._turn_began[len(self._history) - 1 - match.back]
        color = self._base_turn(match)
        return assign_presses(self._presses, since, color, len(match.moves), self._clock.color_of)

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
        rest = match.moves[count:]
        self._pending = None
        if rest:
            forward = Match(kind=MatchKind.FORWARD, moves=rest)
            self._pending = Pending(forward, pending.since, pending.shown, pending.visible)
        oldest = self._turn_began[max(0, len(self._turn_began) - 2)]
        self._presses = [p for p in self._presses if p.at >= oldest]
        self._end_if_over(at)

    def _withdraw(self, match: Match, at: float) -> None:
        from_ply = self.ply - match.back + 1
        for _ in range(match.back):
            self._board.pop()
            self._history.pop()
            self._turn_began.pop()
        reason = "correction" if match.kind is MatchKind.CORRECTION else "takeback"
        self._events.append(MovesWithdrawn(from_ply=from_ply, reason=reason, at=at))
        if match.kind is MatchKind.TAKEBACK:
            self._presses = []
            self._turn_began[-1] = at

    def _play(
        self,
        move: chess.Move,
        press: LeverPress | None,
        shown: dict[chess.Color, int | None],
        at: float,
    ) -> None:
        color = self._board.turn
        san = self._board.san(move)
        number = self._board.fullmove_number
        times = self._clock.move_clock(color, press, shown[color], number)
        self._board.push(move)
        self._history.append(placement_key(self._board))
        self._turn_began.append(at if press is None else press.at)
        if press is not None:
            self._presses.remove(press)
        self._events.append(
            MoveMade(
                ply=self.ply,
                uci=move.uci(),
                san=san,
                clock=times.clock,
                clock_before=times.clock_before,
                emt=times.emt,
                fen=self._board.fen(),
                at=at,
            )
        )

    def _end_if_over(self, at: float) -> None:
        outcome = game_outcome(self._board)
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
        if self._gesture is not None:
            timers.append((self._gesture[1] + self.settings.result_settle_time, self._signal))
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
        self._events.append(
            OutOfSync(expected_fen=self._board.fen(), placement=self._seen.board_fen(), at=when)
        )

    def _signal(self, when: float) -> None:
        assert self._gesture is not None
        result = self._gesture[0]
        self._state = next_state(self._state, Trigger.END)
        self._result = result
        self._pending = None
        self._presses = []
        self._unmatched_since = None
        self._gesture = None
        self._events.append(ResultSignalled(result=result, at=when))

    # -- clock context --------------------------------------------------------------

    def _start_stands(self) -> bool:
        return (
            self._state is TrackerState.PLAYING
            and self._history == [self._start_key]
            and self._pending is None
            and self._unmatched_since is None
        )

    def _moving_color(self) -> chess.Color | None:
        pending = self._pending
        if pending is None or not pending.match.moves:
            return None
        return self._base_turn(pending.match)

    # -- accepted positions ---------------------------------------------------------

    def _accept_new_game(self, now: float) -> bool:
        assert self._sensed is not None
        turn = self._clock.running_color
        game = chess.Board(chess960=self.settings.chess960)
        board = continued_from(self._sensed, game, chess.WHITE if turn is None else turn)
        if board is None:
            return False
        standard = STANDARD_NUMBER if self.settings.chess960 else None
        self._start_game(StartPosition(rotated=False, number=standard), now)
        if placement_key(board) != START:
            self._restart_from(board, now)
        return True

    def _restart_from(self, board: chess.Board, now: float) -> None:
        was_out = self._state is TrackerState.OUT_OF_SYNC
        self._state = next_state(self._state, Trigger.ACCEPT)
        self._reset_game(board, now)
        self._events.append(PositionAccepted(fen=board.fen(), at=now))
        if was_out:
            self._events.append(InSync(at=now))
        self._end_if_over(now)
