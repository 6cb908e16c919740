"""What the alert engine follows on one board, and the checks it makes there (pure).

A :class:`BoardWatch` takes a board's game events and clock readings as the
:class:`~daemon.arbiter.engine.AlertEngine` passes them, and its checks return
:class:`AlertDraft` values (a kind, details, the action to suggest, the episode key and
the condition's scope) and :class:`Cleared` values (a condition that no longer holds);
the engine raises each draft once per episode and resolves what cleared. The rules: FIDE
Laws 6.7 (default time) and the clock settings of tournament-rules.md §2 (start times, increments).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from base.colors import Color
from broadcast.feed.messages import AlertKind
from daemon.config.model import EventConfig
from daemon.game.durations import ClockRules, TimeControl, format_duration
from daemon.game.events import ClockUpdated

__all__ = ["AlertDraft", "BoardRules", "BoardWatch", "Cleared", "Condition", "Episode"]

#: Names one episode of an alert: raised once, whatever the inputs repeat.
Episode = tuple[str | int | float | None, ...]
#: Names one condition: (kind, board, *scope); at most one open alert has it.
Condition = tuple[str | int | float | None, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardRules:
    """What the engine must know of one board.

    Attributes:
        round_start: when White's clock is started (FIDE 6.6), epoch seconds.
        default_time: seconds after ``round_start`` an absent player loses (FIDE 6.7).
        warning: seconds before the default time that the late-arrival warning comes.
        time_control: what the clock must be set to.
        has_eboard: only boards with an e-board get late-arrival and clock alerts.
        clock_rules: each colour's control and the draw odds; None = ``time_control``
            for both, no draw odds.
    """

    round_start: float
    default_time: float
    warning: float
    time_control: TimeControl
    has_eboard: bool = True
    clock_rules: ClockRules | None = None

    @classmethod
    def of_event(cls, event: EventConfig, *, has_eboard: bool) -> BoardRules:
        """The rules of a board of ``event``'s section."""
        return cls(
            round_start=event.round_start.timestamp(),
            default_time=event.default_time,
            warning=event.default_time_warning,
            time_control=event.time_control,
            has_eboard=has_eboard,
            clock_rules=event.clock_rules,
        )

    @property
    def clocks(self) -> ClockRules:
        """Each colour's control and the draw odds."""
        return self.clock_rules or ClockRules.uniform(self.time_control)


@dataclass(frozen=True, slots=True, kw_only=True)
class AlertDraft:
    """An alert a check asks for; the engine raises it unless its episode was raised."""

    kind: AlertKind
    details: dict[str, Any]
    action: str
    episode: Episode
    scope: tuple[str, ...] = ()  # with kind and board, the condition (one open alert)
    update_note: str = ""  # the history's note when it updates the condition's open alert


@dataclass(frozen=True, slots=True, kw_only=True)
class Cleared:
    """A condition of the board no longer holds: its open alert resolves, saying why."""

    kind: AlertKind
    scope: tuple[str, ...]
    note: str


@dataclass(slots=True)
class BoardWatch:
    """What the engine follows on one board."""

    rules: BoardRules
    game: float | None = None  # ``at`` of the game's GameStarted: part of episode keys
    first_move_at: dict[Color, float] = field(default_factory=dict)  # presence, FIDE 6.7
    stages_done: set[str] = field(default_factory=set)
    online: bool | None = None
    offline_since: float | None = None
    clock_connected: bool | None = None
    out_of_sync: bool = False
    last_clock: ClockUpdated | None = None
    presses: dict[Color, int] = field(default_factory=dict)
    moved: bool = False  # a move, a lever press or an accepted position in this game
    start_checked: bool = False
    start_wrong: bool = False  # the start check failed; readings before a press check again
    increment_wrong: set[Color] = field(default_factory=set)

    def new_game(self, at: float) -> None:
        self.game = at
        self.out_of_sync = False
        self.last_clock = None
        self.presses.clear()
        self.moved = False
        self.start_checked = False
        self.start_wrong = False
        self.increment_wrong.clear()

    def has_moved(self, color: Color, when: float) -> bool:
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

    def clock_reading(
        self, board: int, event: ClockUpdated, tolerance: float
    ) -> list[AlertDraft | Cleared]:
        """A clock reading: the start check (first reading, and again while it fails
        before any press: the clock is being set) and the increment check."""
        found: list[AlertDraft | Cleared] = []
        last, self.last_clock = self.last_clock, event
        if not self.start_checked or self.start_wrong:
            self.start_checked = True
            # Only a game seen from its start position, before any move: White's clock
            # runs first, so a first reading with Black's running follows a press.
            if self.game is not None and not self.moved and event.running != "black":
                wrong = self._check_start(board, event, tolerance)
                if self.start_wrong and not wrong:
                    note = "the clock now shows the time control"
                    found.append(
                        Cleared(kind=AlertKind.CLOCK_MISMATCH, scope=("start",), note=note)
                    )
                self.start_wrong = bool(wrong)
                found += wrong
        if last is not None and _is_press(last, event):
            found += self._check_increment(board, last, event, tolerance)
        return found

    def presence(self, board: int, stage: str, when: float) -> tuple[AlertDraft, str] | None:
        """FIDE 6.7: a move proves presence; absence is only provable for the side to move.

        Returns:
            The late-arrival alert and the result a forfeit would give, or None.
        """
        absent: Color
        if not self.has_moved("white", when):
            absent, result = "white", "-+"
        elif not self.has_moved("black", when):
            absent, result = "black", "+-"
        else:
            return None
        details: dict[str, Any] = {
            "stage": stage,
            "color": absent,
            "default_at": self.rules.round_start + self.rules.default_time,
            "board_online": self.online is not False,
        }
        if stage == "default":
            details["result"] = result
        action = _late_action(board, absent, stage, result, self)
        episode = ("late_arrival", board, stage)
        note = "the default time has passed" if stage == "default" else ""
        return AlertDraft(
            kind=AlertKind.LATE_ARRIVAL,
            details=details,
            action=action,
            episode=episode,
            update_note=note,
        ), result

    def _check_start(self, board: int, event: ClockUpdated, slack: float) -> list[AlertDraft]:
        """The first reading of a game: both clocks set to the time control (§7.2)."""
        rules = self.rules.clocks
        control = rules.white
        elapsed = max(0.0, event.at - self.rules.round_start) + slack
        times = {"white": event.white, "black": event.black}
        ok = all(
            (min(allowed) - elapsed <= seconds <= max(allowed))
            if color == event.running
            else seconds in allowed
            for color, seconds in times.items()
            for allowed in [rules.of(color).start_readings]
        )
        if ok:
            return []
        details: dict[str, Any] = {
            "check": "start",
            "white": event.white,
            "black": event.black,
            "expected": sorted(control.start_readings),
            "time_control": str(control),
        }
        spoken = _spoken(control)
        if rules.has_time_odds:
            details["black_expected"] = sorted(rules.black.start_readings)
            details["black_time_control"] = str(rules.black)
            spoken = f"White {spoken}, Black {_spoken(rules.black)}"
        action = (
            f"Board {board}: the clock shows White {format_duration(event.white)}, Black"
            f" {format_duration(event.black)}, not the time control {spoken}."
            " Set the clock (dgtcast clocks set, or by hand)."
        )
        episode = ("clock_mismatch", board, self.game, "start")
        return [
            AlertDraft(
                kind=AlertKind.CLOCK_MISMATCH,
                details=details,
                action=action,
                episode=episode,
                scope=("start",),
            )
        ]

    def _check_increment(
        self, board: int, before: ClockUpdated, after: ClockUpdated, tolerance: float
    ) -> list[AlertDraft | Cleared]:
        """A lever press: the mover's clock must gain the increment (and any new period)."""
        color = before.running
        assert color is not None
        self.moved = True
        self.presses[color] = move = self.presses.get(color, 0) + 1
        expected = self.rules.clocks.of(color).added_after(move)
        added = _seconds_of(after, color) - _seconds_of(before, color)
        if abs(added - expected) <= tolerance:
            if color not in self.increment_wrong:
                return []
            self.increment_wrong.discard(color)
            note = f"the clock added the right increment after {color.capitalize()}'s move {move}"
            return [Cleared(kind=AlertKind.CLOCK_MISMATCH, scope=("increment", color), note=note)]
        if color in self.increment_wrong:
            return []  # the same episode: the clock keeps adding the wrong time
        self.increment_wrong.add(color)
        details: dict[str, Any] = {
            "check": "increment",
            "color": color,
            "move": move,
            "added": added,
        }
        action = (
            f"Board {board}: after {color.capitalize()}'s move {move} the clock added"
            f" {added:g} s instead of {expected} s. Check the clock's setting."
        )
        episode = ("clock_mismatch", board, self.game, "increment", color, move)
        return [
            AlertDraft(
                kind=AlertKind.CLOCK_MISMATCH,
                details=details,
                action=action,
                episode=episode,
                scope=("increment", color),
            )
        ]


def _is_press(before: ClockUpdated, after: ClockUpdated) -> bool:
    """The running side changed straight to the other: the mover pressed the lever."""
    return before.running is not None and after.running not in (None, before.running)


def _seconds_of(reading: ClockUpdated, color: Color) -> float:
    return reading.white if color == "white" else reading.black


def _spoken(control: TimeControl) -> str:
    """``40/5400+30:1800+30`` → ``40 moves in 1h30m + 30s, then 30m + 30s``."""
    return control.spoken()


def _late_action(board: int, absent: Color, stage: str, result: str, watch: BoardWatch) -> str:
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
