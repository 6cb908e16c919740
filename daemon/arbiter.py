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
  one by nothing but another arbiter's.
* Every change is also a :class:`Decision` (``decisions_made()``) for the journal.
  Recovery: :meth:`AlertEngine.restore` the decision records, then feed the replayed
  inputs as in live operation (game events, links, ticks); episodes already journalled
  are not raised again, so only what the crash cut off comes out.

Exceptions::

    CommandRefused    an arbiter command that cannot be carried out (peer fault)
    ValueError        a board that is not configured (caller's misuse)
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from broadcast.messages import RESULTS, Alert, to_json_dict
from daemon.config import Config
from daemon.durations import TimeControl, format_duration
from daemon.game.events import (
    ClockUpdated,
    FlagFell,
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

__all__ = [
    "DECISION_KINDS",
    "AlertEngine",
    "AlertKind",
    "AlertSettings",
    "BoardRules",
    "CommandRefused",
    "Decision",
    "ResultSource",
    "ResultState",
]


class AlertKind(enum.StrEnum):
    """The kinds of :class:`~broadcast.messages.Alert` the engine raises."""

    FLAG_FALL = "flag_fall"
    LATE_ARRIVAL = "late_arrival"
    BOARD_OFFLINE = "board_offline"
    BOARD_ONLINE = "board_online"
    CLOCK_OFFLINE = "clock_offline"
    CLOCK_ONLINE = "clock_online"
    OUT_OF_SYNC = "out_of_sync"
    CLOCK_MISMATCH = "clock_mismatch"
    RESULT_SIGNALLED = "result_signalled"
    GAME_OVER = "game_over"


class ResultSource(enum.StrEnum):
    """Who proposed or set a result: an arbiter, or the alert that proposed it."""

    ARBITER = "arbiter"
    FLAG_FALL = "flag_fall"
    LATE_ARRIVAL = "late_arrival"
    RESULT_SIGNALLED = "result_signalled"
    GAME_OVER = "game_over"


#: Journal kinds of the decision records (see :meth:`AlertEngine.restore`).
DECISION_KINDS = frozenset({"alert", "alert_ack", "result"})

_Episode = tuple[str | int | float | None, ...]


class CommandRefused(Exception):
    """An arbiter command that cannot be carried out; ``str(exc)`` is the reason to show."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardRules:
    """What the engine must know of one board.

    Attributes:
        round_start: when White's clock is started (FIDE 6.6), epoch seconds.
        default_time: seconds after ``round_start`` an absent player loses (FIDE 6.7).
        warning: seconds before the default time that the late-arrival warning comes.
        time_control: what the clock must be set to.
        has_eboard: only boards with an e-board get late-arrival and clock alerts.
    """

    round_start: float
    default_time: float
    warning: float
    time_control: TimeControl
    has_eboard: bool = True


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
                boards[board.number] = BoardRules(
                    round_start=event.round_start.timestamp(),
                    default_time=event.default_time,
                    warning=event.default_time_warning,
                    time_control=event.time_control,
                    has_eboard=board.has_eboard,
                )
        return cls(boards=boards)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultState:
    """A board's result: provisional until an arbiter confirms it."""

    board: int
    result: str
    source: ResultSource
    at: float
    confirmed: bool = False
    confirmed_at: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """A record for the journal (it fits :class:`daemon.journal.JournalEntry`)."""

    board: int
    kind: str
    at: float
    payload: Mapping[str, Any]


class _Recorded(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...


@dataclass(slots=True)
class _Watch:
    """What the engine follows on one board."""

    rules: BoardRules
    game: float | None = None  # ``at`` of the game's GameStarted: part of episode keys
    first_move_at: dict[str, float] = field(default_factory=dict)  # presence, FIDE 6.7
    stages_done: set[str] = field(default_factory=set)
    online: bool | None = None
    offline_since: float | None = None
    clock_connected: bool | None = None
    out_of_sync: bool = False
    last_clock: ClockUpdated | None = None
    presses: dict[str, int] = field(default_factory=dict)
    moved: bool = False  # a move, a lever press or an accepted position in this game
    start_checked: bool = False
    increment_wrong: set[str] = field(default_factory=set)

    def new_game(self, at: float) -> None:
        self.game = at
        self.out_of_sync = False
        self.last_clock = None
        self.presses.clear()
        self.moved = False
        self.start_checked = False
        self.increment_wrong.clear()

    def has_moved(self, color: str, when: float) -> bool:
        """``color`` made a move by ``when``: proof of presence (FIDE 6.7)."""
        first = self.first_move_at.get(color)
        return first is not None and first <= when

    def stages(self) -> list[tuple[str, float]]:
        """Late-arrival checks still to make: (stage, when), warning first."""
        rules = self.rules
        due = rules.round_start + rules.default_time
        warn = max(rules.round_start, due - rules.warning)
        stages = [("default", due)]
        if rules.warning > 0 and warn < due:
            stages.insert(0, ("warning", warn))
        return [(s, t) for s, t in stages if s not in self.stages_done]


class AlertEngine:
    """Raises arbiter alerts and keeps every board's result (docs/alerts.md).

    Feed it with ``receive_*``; then drain :meth:`decisions_made` (journal them first)
    and :meth:`alerts_raised` (publish them). Call :meth:`receive_tick` at
    :meth:`next_deadline`.
    """

    def __init__(self, settings: AlertSettings) -> None:
        self._settings = settings
        self._watch = {number: _Watch(rules) for number, rules in settings.boards.items()}
        self._alerts: dict[int, Alert] = {}
        self._episodes: set[_Episode] = set()
        self._results: dict[int, ResultState] = {}
        self._next_id = 1
        self._deadline: float | None = None
        self._deadline_known = False  # _deadline is up to date (see next_deadline)
        self._raised: list[Alert] = []
        self._decisions: list[Decision] = []
        self._handlers: dict[type, Callable[[int, _Watch, Any], None]] = {
            GameStarted: self._game_started,
            MoveMade: self._move_made,
            MovesWithdrawn: self._moves_withdrawn,
            OutOfSync: self._out_of_sync,
            InSync: self._back_in_sync,
            PositionAccepted: self._position_accepted,
            ResultSignalled: self._result_signalled,
            GameEnded: self._game_ended,
            FlagFell: self._flag_fell,
            ClockUpdated: self._clock_updated,
        }

    # -- inputs ----------------------------------------------------------------------------

    def receive_game_event(self, board: int, event: GameEvent) -> None:
        """Take one event of the board's game tracker; then drain the outputs."""
        watch = self._board(board)
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(board, watch, event)

    def receive_link(self, board: int, online: bool, at: float) -> None:
        """The e-board's link went up or down (may repeat); then drain the outputs."""
        watch = self._board(board)
        was, watch.online = watch.online, online
        if not online and was is not False:
            watch.offline_since = at
            self._raise(
                board,
                AlertKind.BOARD_OFFLINE,
                at,
                {"since": at},
                f"Board {board}: the e-board is not answering. Check its USB cable and"
                " power; moves made meanwhile are recovered when it is back.",
                ("board_offline", board, at),
            )
        elif online and was is False:
            since = watch.offline_since
            self._raise(
                board,
                AlertKind.BOARD_ONLINE,
                at,
                {"offline_seconds": None if since is None else at - since},
                f"Board {board}: the e-board is back. Check that the game on it is the"
                " recorded one.",
                ("board_online", board, at),
            )

    def receive_clock_link(self, board: int, connected: bool, at: float) -> None:
        """Whether a clock answers through the e-board (every reading may be passed)."""
        watch = self._board(board)
        was, watch.clock_connected = watch.clock_connected, connected
        if not connected and was is not False:
            self._raise(
                board,
                AlertKind.CLOCK_OFFLINE,
                at,
                {"since": at},
                f"Board {board}: no clock answers through the e-board. Check the clock"
                " cable; clock times are not recorded meanwhile.",
                ("clock_offline", board, at),
            )
        elif connected and was is False:
            self._raise(
                board,
                AlertKind.CLOCK_ONLINE,
                at,
                {},
                f"Board {board}: the clock answers again.",
                ("clock_online", board, at),
            )

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
        if result not in RESULTS:
            raise CommandRefused(f"result must be one of {', '.join(sorted(RESULTS))}")
        return self._change_result(board, result, ResultSource.ARBITER, at)

    def confirm_result(self, board: int, at: float) -> ResultState:
        """An arbiter confirms the board's result: it becomes final.

        Raises:
            CommandRefused: unknown board, or no result to confirm.
        """
        self._command_board(board)
        state = self._results.get(board)
        if state is None:
            raise CommandRefused(f"board {board} has no result to confirm")
        if not state.confirmed:
            state = dataclasses.replace(state, confirmed=True, confirmed_at=at)
            self._store_result(state, at)
        return state

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
        return self._results.get(board)

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
                self._restore_result(record.payload)

    # -- game events -----------------------------------------------------------------------

    def _game_started(self, board: int, watch: _Watch, event: GameStarted) -> None:
        watch.new_game(event.at)

    def _move_made(self, board: int, watch: _Watch, event: MoveMade) -> None:
        watch.moved = True
        color = "white" if event.ply % 2 else "black"
        watch.first_move_at.setdefault(color, event.at)

    def _moves_withdrawn(self, board: int, watch: _Watch, event: MovesWithdrawn) -> None:
        state = self._results.get(board)
        if state is not None and state.source is ResultSource.GAME_OVER and not state.confirmed:
            self._change_result(board, "*", ResultSource.GAME_OVER, event.at)

    def _out_of_sync(self, board: int, watch: _Watch, event: OutOfSync) -> None:
        if watch.out_of_sync:
            return
        watch.out_of_sync = True
        self._raise(
            board,
            AlertKind.OUT_OF_SYNC,
            event.at,
            {"expected_fen": event.expected_fen, "placement": event.placement},
            f"Board {board}: the pieces match no position of the game (an illegal move"
            " or knocked pieces). Reinstate the expected position (FIDE 7.5), or accept"
            " the board's position.",
            ("out_of_sync", board, watch.game, event.at),
        )

    def _back_in_sync(self, board: int, watch: _Watch, event: InSync) -> None:
        watch.out_of_sync = False

    def _position_accepted(self, board: int, watch: _Watch, event: PositionAccepted) -> None:
        watch.out_of_sync = False
        watch.moved = True  # the game goes on from a position: no start check any more

    def _result_signalled(self, board: int, watch: _Watch, event: ResultSignalled) -> None:
        if self._raise(
            board,
            AlertKind.RESULT_SIGNALLED,
            event.at,
            {"result": event.result},
            f"Board {board}: the players put the kings on the centre squares for"
            f" {event.result}. Check the scoresheets and confirm the result.",
            ("result_signalled", board, watch.game, event.result),
        ):
            self._propose(board, event.result, ResultSource.RESULT_SIGNALLED, event.at)

    def _game_ended(self, board: int, watch: _Watch, event: GameEnded) -> None:
        if self._raise(
            board,
            AlertKind.GAME_OVER,
            event.at,
            {"result": event.result, "termination": event.termination},
            f"Board {board}: {event.termination} on the board, {event.result}. Check the"
            " position and confirm the result.",
            ("game_over", board, watch.game, event.at),
        ):
            self._propose(board, event.result, ResultSource.GAME_OVER, event.at)

    def _flag_fell(self, board: int, watch: _Watch, event: FlagFell) -> None:
        loser = event.color.capitalize()
        why = (
            f"{loser} loses"
            if event.result != "1/2-1/2"
            else "drawn, as the opponent cannot checkmate"
        )
        if self._raise(
            board,
            AlertKind.FLAG_FALL,
            event.at,
            {"color": event.color, "result": event.result, "provisional": event.provisional},
            f"Board {board}: {loser}'s flag fell. Unless the game had already ended,"
            f" {why}: {event.result} (FIDE 6.9). Check the clock and the position, then"
            " confirm the result.",
            ("flag_fall", board, watch.game, event.color),
        ):
            self._propose(board, event.result, ResultSource.FLAG_FALL, event.at)

    # -- clock checks ----------------------------------------------------------------------

    def _clock_updated(self, board: int, watch: _Watch, event: ClockUpdated) -> None:
        last, watch.last_clock = watch.last_clock, event
        if not watch.start_checked:
            watch.start_checked = True
            # Only a game seen from its start position, before any move: White's clock
            # runs first, so a first reading with Black's running follows a press.
            if watch.game is not None and not watch.moved and event.running != "black":
                self._check_start(board, watch, event)
        if last is not None and _is_press(last, event):
            self._check_increment(board, watch, last, event)

    def _check_start(self, board: int, watch: _Watch, event: ClockUpdated) -> None:
        """The first reading of a game: both clocks set to the time control (§7.2)."""
        control = watch.rules.time_control
        expected = control.start_readings
        slack = self._settings.clock_tolerance
        elapsed = max(0.0, event.at - watch.rules.round_start) + slack
        times = {"white": event.white, "black": event.black}
        ok = all(
            (min(expected) - elapsed <= seconds <= max(expected))
            if color == event.running
            else seconds in expected
            for color, seconds in times.items()
        )
        if ok:
            return
        self._raise(
            board,
            AlertKind.CLOCK_MISMATCH,
            event.at,
            {
                "check": "start",
                "white": event.white,
                "black": event.black,
                "expected": sorted(expected),
                "time_control": str(control),
            },
            f"Board {board}: the clock shows White {format_duration(event.white)}, Black"
            f" {format_duration(event.black)}, not the time control {_spoken(control)}."
            " Set the clock (dgtcast clocks set, or by hand).",
            ("clock_mismatch", board, watch.game, "start"),
        )

    def _check_increment(
        self, board: int, watch: _Watch, before: ClockUpdated, after: ClockUpdated
    ) -> None:
        """A lever press: the mover's clock must gain the increment (and any new period)."""
        color = before.running
        assert color is not None
        watch.moved = True
        watch.presses[color] = move = watch.presses.get(color, 0) + 1
        expected = watch.rules.time_control.added_after(move)
        added = _seconds_of(after, color) - _seconds_of(before, color)
        if abs(added - expected) <= self._settings.clock_tolerance:
            watch.increment_wrong.discard(color)
            return
        if color in watch.increment_wrong:
            return  # the same episode: the clock keeps adding the wrong time
        watch.increment_wrong.add(color)
        self._raise(
            board,
            AlertKind.CLOCK_MISMATCH,
            after.at,
            {"check": "increment", "color": color, "move": move, "added": added},
            f"Board {board}: after {color.capitalize()}'s move {move} the clock added"
            f" {added:g} s instead of {expected} s. Check the clock's setting.",
            ("clock_mismatch", board, watch.game, "increment", color, move),
        )

    # -- late arrival ----------------------------------------------------------------------

    def _check_presence(self, board: int, watch: _Watch, stage: str, when: float) -> None:
        """FIDE 6.7: a move proves presence; absence is only provable for the side to move."""
        if board in self._results:
            return
        if not watch.has_moved("white", when):
            absent, result = "white", "-+"
        elif not watch.has_moved("black", when):
            absent, result = "black", "+-"
        else:
            return
        details: dict[str, Any] = {
            "stage": stage,
            "color": absent,
            "default_at": watch.rules.round_start + watch.rules.default_time,
            "board_online": watch.online is not False,
        }
        if stage == "default":
            details["result"] = result
        if (
            self._raise(
                board,
                AlertKind.LATE_ARRIVAL,
                when,
                details,
                _late_action(board, absent, stage, result, watch),
                ("late_arrival", board, stage),
            )
            and stage == "default"
        ):
            self._propose(board, result, ResultSource.LATE_ARRIVAL, when)

    # -- alerts, results and decisions ----------------------------------------------------

    def _raise(
        self,
        board: int,
        kind: AlertKind,
        at: float,
        details: dict[str, Any],
        action: str,
        episode: _Episode,
    ) -> bool:
        """Raise an alert unless its episode was raised already; True when raised."""
        if episode in self._episodes:
            return False
        self._episodes.add(episode)
        alert = Alert(
            id=self._next_id, kind=kind.value, board=board, at=at, details=details, action=action
        )
        self._next_id += 1
        self._alerts[alert.id] = alert
        self._raised.append(alert)
        self._decide(board, "alert", at, {"alert": to_json_dict(alert), "episode": list(episode)})
        return True

    def _propose(self, board: int, result: str, source: ResultSource, at: float) -> None:
        current = self._results.get(board)
        if current is not None and (current.confirmed or current.source is ResultSource.ARBITER):
            return
        self._change_result(board, result, source, at)

    def _change_result(
        self, board: int, result: str, source: ResultSource, at: float
    ) -> ResultState | None:
        if result == "*":
            if self._results.pop(board, None) is not None:
                payload = {"board": board, "result": "*", "source": source.value}
                self._decide(board, "result", at, payload)
            return None
        state = ResultState(board=board, result=result, source=source, at=at)
        self._store_result(state, at)
        return state

    def _store_result(self, state: ResultState, at: float) -> None:
        self._results[state.board] = state
        self._decide(state.board, "result", at, to_json_dict(state))

    def _decide(self, board: int, kind: str, at: float, payload: dict[str, Any]) -> None:
        self._decisions.append(Decision(board=board, kind=kind, at=at, payload=payload))

    def _restore_alert(self, payload: Mapping[str, Any]) -> None:
        alert = Alert(**payload["alert"])
        self._alerts[alert.id] = alert
        self._episodes.add(tuple(payload["episode"]))
        self._next_id = max(self._next_id, alert.id + 1)

    def _restore_result(self, payload: Mapping[str, Any]) -> None:
        if payload["result"] == "*":
            self._results.pop(int(payload["board"]), None)
            return
        state = ResultState(**{**payload, "source": ResultSource(payload["source"])})
        self._results[state.board] = state

    def _board(self, board: int) -> _Watch:
        watch = self._watch.get(board)
        if watch is None:
            raise ValueError(f"board {board} is not configured")
        return watch

    def _command_board(self, board: int) -> None:
        if board not in self._watch:
            raise CommandRefused(f"no board {board}")


def _is_press(before: ClockUpdated, after: ClockUpdated) -> bool:
    """The running side changed straight to the other: the mover pressed the lever."""
    return before.running is not None and after.running not in (None, before.running)


def _seconds_of(reading: ClockUpdated, color: str) -> float:
    return reading.white if color == "white" else reading.black


def _spoken(control: TimeControl) -> str:
    """``5400+30`` → ``1h30m + 30 s`` (one period shown, the others as in PGN)."""
    first = f"{format_duration(control.base)} + {control.increment} s"
    return first if len(control.periods) == 1 else f"{first} ({control})"


def _late_action(board: int, absent: str, stage: str, result: str, watch: _Watch) -> str:
    who = absent.capitalize()
    default_at = format_duration(watch.rules.default_time)
    proof = (
        "No move has been made yet, so only White's absence is provable."
        if absent == "white"
        else "White has moved; Black has not replied."
    )
    offline = "" if watch.online is not False else " The e-board is offline: look at the board."
    if stage == "warning":
        return (
            f"Board {board}: {who} has not moved yet; the default time ({default_at} after"
            f" the start, FIDE 6.7) is near. {proof}{offline}"
        )
    return (
        f"Board {board}: the default time ({default_at}) has passed. {proof} Unless you"
        f" decide otherwise (FIDE 6.7), confirm the forfeit {result}.{offline}"
    )
