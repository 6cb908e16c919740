"""What the alert engine follows on one board, and the checks it makes there (pure).

A :class:`BoardWatch` takes a board's game events and clock readings as the
:class:`~daemon.arbiter.engine.AlertEngine` passes them, and its checks return
:class:`AlertDraft` values (a kind, details, the action to suggest, the episode key and
the condition's scope) and :class:`Cleared` values (a condition that no longer holds);
the engine raises each draft once per episode and resolves what cleared. The rules: FIDE
Laws 6.7 (default time) and the clock settings (start times, increments; docs/alerts.md,
"The Laws it follows").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from base.colors import Color
from broadcast.feed.alerts import AlertKind
from daemon.config.sections import EventConfig
from daemon.game.durations import ClockRules, TimeControl, format_duration
from daemon.game.events import ClockUpdated, OutOfSync

__all__ = ["AlertDraft", "BoardRules", "BoardWatch", "Cleared", "Condition", "Episode"]

#: Names one episode of an alert: raised once, whatever the inputs repeat.
Episode = tuple[str | int | float | None, ...]
#: Names one condition: (kind, board, *scope); at most one open alert has it.
Condition = tuple[str | int | float | None, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardRules:
    """What the engine must know of one board.

    Attributes:
        round_start: when White's clock is started (FIDE 6.6), epoch seconds; None: when
            the first clock of the board's section is started.
        default_time: seconds after the round's start an absent player loses (FIDE 6.7);
            0 (FIDE's default when the regulations state none): no late-arrival check.
        warning: seconds before the default time that the late-arrival warning comes.
        time_control: what the clock must be set to.
        has_eboard: only boards with an e-board get late-arrival and clock alerts.
        clock_rules: each colour's control and the draw odds; None = ``time_control``
            for both, no draw odds.
        section: the board's section (its first clock started starts the round).
    """

    round_start: float | None
    default_time: float
    warning: float
    time_control: TimeControl
    has_eboard: bool = True
    clock_rules: ClockRules | None = None
    section: str = ""

    @classmethod
    def of_event(cls, event: EventConfig, *, has_eboard: bool, section: str = "") -> BoardRules:
        """The rules of a board of ``event``'s section (named ``section``)."""
        start = event.round_start
        return cls(
            round_start=None if start is None else start.timestamp(),
            section=section,
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
    clock_start: float | None = None  # the section's first clock started (no round_start)
    first_move_at: dict[Color, float] = field(default_factory=dict)  # presence, FIDE 6.7
    stages_done: set[str] = field(default_factory=set)
    online: bool | None = None
    offline_since: float | None = None
    clock_connected: bool | None = None
    out_of_sync: bool = False
    out_of_sync_event: OutOfSync | None = None  # what raised the open out_of_sync
    clock_refuses: bool = False  # mode 23, but the clock refuses dgtcast's settings
    last_clock: ClockUpdated | None = None
    presses: dict[Color, int] = field(default_factory=dict)
    moved: bool = False  # a move, a lever press or an accepted position in this game
    start_checked: bool = False
    increment_wrong: set[Color] = field(default_factory=set)
    #: Plies made in this game (the last MoveMade's ply): the move counts after a gap.
    plies: int = 0
    #: The plies now arriving were made while the daemon could not see them (replayed from
    #: the board's memory): no increment check spans them.
    unseen: bool = False
    #: White's press before any move: (before, after); it was move 1's if MoveMade(1)
    #: follows it at once, else it only started the clock (Black's time).
    first_press: tuple[ClockUpdated, ClockUpdated] | None = None
    #: Before White's first move: seconds each colour's time ran, and the presses that
    #: only started the clock (a clock adding its own increment gave each one).
    ran: dict[Color, float] = field(default_factory=dict)
    start_presses: dict[Color, int] = field(default_factory=dict)
    #: The result the board itself decided in this game, and how (``"checkmate on the
    #: board"``, ``"White's flag fell"``, ``"the kings signalled it"``); None: none.
    board_result: tuple[str, str] | None = None
    board_result_kind: AlertKind | None = None  # the alert that proposed it

    def new_game(self, at: float) -> None:
        self.game = at
        self.plies = 0
        self.board_result = self.board_result_kind = None
        self.out_of_sync = False
        self.last_clock = None
        self.presses.clear()
        self.moved = False
        self.start_checked = False
        self.increment_wrong.clear()
        self.first_press = None
        self.ran.clear()
        self.start_presses.clear()

    def has_moved(self, color: Color, when: float) -> bool:
        """``color`` made a move by ``when``: proof of presence (FIDE 6.7)."""
        first = self.first_move_at.get(color)
        return first is not None and first <= when

    @property
    def started(self) -> float | None:
        """When the round started: configured, or the section's first clock started."""
        return self.rules.round_start if self.rules.round_start is not None else self.clock_start

    def stages(self) -> list[tuple[str, float]]:
        """Late-arrival checks still to make: (stage, when), warning first. None before
        the round started, nor with a zero default time (absence cannot be proven at the
        very start: it is the arbiter's to see)."""
        rules, start = self.rules, self.started
        if start is None or rules.default_time <= 0:
            return []
        due = start + rules.default_time
        warn = max(start, due - rules.warning)
        stages = [("default", due)]
        if rules.warning > 0 and warn < due:
            stages.insert(0, ("warning", warn))
        return [(s, t) for s, t in stages if s not in self.stages_done]

    def clock_reading(
        self, board: int, event: ClockUpdated, tolerance: float
    ) -> list[AlertDraft | Cleared]:
        """A clock reading: the increment check at each press.

        A press before the game's first move only starts the clock (Black's lever, or
        White's pressed before moving): it is no move, unless White's move 1 comes with
        it (:meth:`move_made`, which also makes the start check).
        """
        drafts: list[AlertDraft | Cleared] = []
        last, self.last_clock = self.last_clock, event
        if self.unseen:
            return drafts
        if self.first_press is not None:  # no move came with it: it started the clock
            self.start_presses["white"] = self.start_presses.get("white", 0) + 1
            self.first_press = None
        if last is None:
            return drafts
        if not self.moved:
            self._note_start(last, event)
        if _is_press(last, event):
            if self.moved:
                drafts += self._check_increment(board, last, event, tolerance)
            elif last.running == "white":
                self.first_press = (last, event)
            elif last.running == "black":
                self.start_presses["black"] = self.start_presses.get("black", 0) + 1
        return drafts

    def gap(self, *, unseen: bool) -> None:
        """Plies may have been made that the daemon did not see (the link was down, the
        daemon stopped): no increment check spans them. With ``unseen`` the plies
        replayed from the board's memory follow (their times are the memory's); without
        it the checks start again from the next reading, each side's moves counted from
        the game."""
        self.unseen = unseen
        self.last_clock = None
        self.first_press = None
        if self.moved:
            self.presses = {"white": (self.plies + 1) // 2, "black": self.plies // 2}

    def _note_start(self, last: ClockUpdated, event: ClockUpdated) -> None:
        """Before the first move: how long each colour's time ran (a clock set meanwhile
        only adds time, which is not counted)."""
        if last.running is not None:
            ran = _seconds_of(last, last.running) - _seconds_of(event, last.running)
            self.ran[last.running] = self.ran.get(last.running, 0.0) + max(0.0, ran)

    def move_made(
        self, board: int, ply: int, at: float, tolerance: float
    ) -> list[AlertDraft | Cleared]:
        """A move was made. White's move 1 with the press just before it: the start check
        (the clock as it stood before that press) and the press's increment check."""
        press, self.first_press = self.first_press, None
        if ply != 1 or press is None or press[1].at != at:
            return []
        drafts: list[AlertDraft | Cleared] = []
        if self.game is not None and not self.start_checked:
            self.start_checked = True
            drafts += self._check_start(board, press[0], tolerance)
        return drafts + self._check_increment(board, press[0], press[1], tolerance)

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
            "default_at": (self.started or when) + self.rules.default_time,
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
        """The clock just before White's first press: both sides set to the time control
        (§7.2), less the time each ran, plus an increment for each press that only
        started the clock (a clock that adds its own gave it)."""
        rules = self.rules.clocks
        control = rules.white
        times: dict[Color, float] = {"white": event.white, "black": event.black}
        ok = all(
            min(allowed) - self.ran.get(color, 0.0) - slack
            <= seconds
            <= max(allowed) + self.start_presses.get(color, 0) * rules.of(color).increment
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
        """A lever press: the mover's clock must gain the increment (and any new period).
        The reading before the press may be older than a reading's second (readings lost
        on the line): the mover ran meanwhile, and the gain seen is that much short."""
        color = before.running
        assert color is not None
        self.moved = True
        self.presses[color] = move = self.presses.get(color, 0) + 1
        expected = self.rules.clocks.of(color).added_after(move)
        added = _seconds_of(after, color) - _seconds_of(before, color)
        ran = max(0.0, after.at - before.at - 1.0)
        if -tolerance - ran <= added - expected <= tolerance:
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
