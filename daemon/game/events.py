"""What the game layer observed: events from the tracker to the pipeline and arbiter alerts.

A contract: the pipeline, the journal and the arbiter alert engine consume these. Every
event is a frozen, slotted, keyword-only dataclass that validates its fields and carries
``at``, the time of the observation (or timer) that produced it, in the caller's clock.

Colours are ``"white"`` / ``"black"``; results are PGN results (``"1-0"``, ``"0-1"``,
``"1/2-1/2"``). Plies count half-moves from the start of the game: ply 1 is White's first
move; a game continued from an accepted position keeps counting
(``2 * (fullmove - 1) + (1 if Black moved)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, get_args

from base.colors import Color
from daemon.game.gap import MAX_GAP
from drivers.observations import ClockSide

__all__ = [
    "COLORS",
    "GAME_RESULTS",
    "WITHDRAW_REASONS",
    "ClockSidesLearned",
    "ClockUpdated",
    "ClocksCorrected",
    "FlagFell",
    "GameEnded",
    "GameEvent",
    "GameStarted",
    "GapCandidates",
    "InSync",
    "MoveMade",
    "MovesRecovered",
    "MovesWithdrawn",
    "OutOfSync",
    "PositionAccepted",
    "ResultSignalled",
]

#: Colour names used in events (:data:`~base.colors.Color`).
COLORS: Final = frozenset(get_args(Color))
#: Decisive and drawn PGN results the board can produce.
GAME_RESULTS: Final = frozenset({"1-0", "0-1", "1/2-1/2"})
#: Why moves were withdrawn: a tentative move replaced, or the board back at an earlier ply.
WITHDRAW_REASONS: Final = frozenset({"correction", "takeback"})


def _check_result(result: str) -> None:
    if result not in GAME_RESULTS:
        raise ValueError(f"result must be one of {sorted(GAME_RESULTS)}, got {result!r}")


def _check_seconds(name: str, value: float | None) -> None:
    if value is not None and value < 0:
        raise ValueError(f"{name} cannot be negative, got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class GameStarted:
    """The start position stood on the board: a new game begins (docs/protocol.md §9.2).

    Attributes:
        rotated: the board stands turned by 180° (the sensors report ``square ^ 63``,
            docs/protocol.md §5.2); every later event is in real board coordinates.
        chess960: the Chess960 start position (0-959) of a Chess960 game; None in
            standard chess. Chess960 castling moves are then written king-to-rook in
            UCI (``e1h1``), as python-chess and lichess write them.
    """

    rotated: bool
    chess960: int | None = None
    at: float

    def __post_init__(self) -> None:
        if self.chess960 is not None and not 0 <= self.chess960 <= 959:
            raise ValueError(f"a Chess960 start position is 0-959, got {self.chess960}")


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveMade:
    """A move completed on the board (lever press, or a placement that stayed put).

    Attributes:
        ply: 1 for White's first move.
        uci / san: the move, in UCI and in SAN from the position before it.
        clock: the mover's remaining time right after the move, increment included
            (the PGN ``[%clk]``); None without a clock.
        clock_before: the mover's time just before the lever press, so the arbiter can
            check the increment; equal to ``clock`` when the move completed without one.
        emt: time spent on the move (``[%emt]``): the mover's time when the turn began,
            plus the increment, minus ``clock``.
        fen: the position after the move.
        pressed: a lever press completed it.
    """

    ply: int
    uci: str
    san: str
    clock: float | None
    clock_before: float | None
    emt: float | None
    fen: str
    at: float
    pressed: bool = False

    def __post_init__(self) -> None:
        if self.ply < 1:
            raise ValueError(f"ply starts at 1, got {self.ply}")
        _check_seconds("clock", self.clock)
        _check_seconds("clock_before", self.clock_before)
        _check_seconds("emt", self.emt)


@dataclass(frozen=True, slots=True, kw_only=True)
class MovesWithdrawn:
    """Plies ``from_ply`` and later are gone from the game.

    ``"correction"``: a published move was only a stage of the real one (a rook dragged
    through d8 to e8, castling rook first); the replacing :class:`MoveMade` follows at
    once. ``"takeback"``: the board is back at an earlier position (FIDE Laws 7.5: the
    arbiter reinstates the position before an irregularity).
    """

    from_ply: int
    reason: str
    at: float

    def __post_init__(self) -> None:
        if self.from_ply < 1:
            raise ValueError(f"from_ply starts at 1, got {self.from_ply}")
        if self.reason not in WITHDRAW_REASONS:
            raise ValueError(f"reason must be one of {sorted(WITHDRAW_REASONS)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class OutOfSync:
    """The pieces have matched no position of the game for the hold time (once per episode).

    Attributes:
        expected_fen: the position of the game as recorded.
        placement: what the board shows, as a FEN piece placement (board coordinates).
    """

    expected_fen: str
    placement: str
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class InSync:
    """After :class:`OutOfSync`: the board matches the game (or an earlier position) again."""

    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PositionAccepted:
    """The arbiter accepted the board as it stands; the game goes on from ``fen``.

    ``unrecovered``: the plies played between the last agreed position and ``fen`` that
    the record lacks (the fewest legal moves that lead there; None when no legal line of
    a few plies does: they cannot be counted). 0 for a game set up, with nothing before.
    """

    fen: str
    at: float
    unrecovered: int | None = 0

    @property
    def unrecovered_text(self) -> str:
        """The plies not recovered, in words ("" when there are none)."""
        if self.unrecovered is None:
            return (
                f"the plies since cannot be counted (no legal line of up to {MAX_GAP} plies found)"
            )
        if self.unrecovered == 0:
            return ""
        return f"{self.unrecovered} pl{'y' if self.unrecovered == 1 else 'ies'} not recovered"


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultSignalled:
    """Both kings were put on the centre squares: the players' result (docs/protocol.md §9.1).

    d5 + e4 (both light) = 1-0, d4 + e5 (both dark) = 0-1, one light and one dark = ½-½.
    """

    result: str
    at: float

    def __post_init__(self) -> None:
        _check_result(self.result)


@dataclass(frozen=True, slots=True, kw_only=True)
class GameEnded:
    """The rules ended the game on the board (FIDE Laws 5.1.1, 5.2.1, 5.2.2, 9.6).

    Attributes:
        termination: ``"checkmate"``, ``"stalemate"``, ``"insufficient material"``,
            ``"fivefold repetition"`` or ``"seventyfive moves"``.
    """

    result: str
    termination: str
    at: float

    def __post_init__(self) -> None:
        _check_result(self.result)


@dataclass(frozen=True, slots=True, kw_only=True)
class FlagFell:
    """A flag fell (FIDE Laws 6.9): a loss, or a draw if the opponent cannot mate.

    Always ``provisional``: a flag counts when the arbiter sees it or a player claims it,
    and ``has_insufficient_material`` misses some dead positions (docs/alerts.md, "flag_fall").
    """

    color: Color
    result: str
    provisional: bool
    at: float

    def __post_init__(self) -> None:
        if self.color not in COLORS:
            raise ValueError(f"color must be 'white' or 'black', got {self.color!r}")
        _check_result(self.result)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockUpdated:
    """A clock reading, by colour (whole seconds; ``running`` is the colour whose time runs)."""

    white: float
    black: float
    running: Color | None
    at: float

    def __post_init__(self) -> None:
        _check_seconds("white", self.white)
        _check_seconds("black", self.black)
        if self.running is not None and self.running not in COLORS:
            raise ValueError(f"running must be 'white', 'black' or None, got {self.running!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockSidesLearned:
    """Which physical side of the clock is White's, learned from play (docs/protocol.md §7.2)."""

    white_side: ClockSide
    at: float


#: Where recovered moves came from: the board's own log, or a search of the legal moves.
RECOVERY_SOURCES: Final = frozenset({"memory", "search"})


@dataclass(frozen=True, slots=True, kw_only=True)
class MovesRecovered:
    """Plies played while nobody listened were recovered and published (never silently).

    Attributes:
        from_ply / plies: the first ply recovered and how many.
        source: ``"memory"`` (replayed from the board's log, docs/protocol.md §6, each with
            the ``[%clk]`` the board wrote at its lever press) or ``"search"`` (the one
            legal sequence from the last known position to the board's placement).
    """

    from_ply: int
    plies: int
    source: str
    at: float

    def __post_init__(self) -> None:
        if self.from_ply < 1 or self.plies < 1:
            raise ValueError("from_ply and plies start at 1")
        if self.source not in RECOVERY_SOURCES:
            raise ValueError(f"source must be one of {sorted(RECOVERY_SOURCES)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ClocksCorrected:
    """Plies already in the record get the ``[%clk]`` the board's memory logged at their
    lever press (docs/protocol.md §6): a press seen live before its move (a field update
    lost on the line) had lent the move a later press's time.

    Attributes:
        clocks: ``(ply, seconds)`` for each ply whose time changes.
    """

    clocks: tuple[tuple[int, float], ...]
    at: float

    def __post_init__(self) -> None:
        for ply, seconds in self.clocks:
            if ply < 1:
                raise ValueError(f"ply starts at 1, got {ply}")
            _check_seconds("clock", seconds)


@dataclass(frozen=True, slots=True, kw_only=True)
class GapCandidates:
    """The board is some plies ahead and several legal sequences lead there (no memory).

    Attributes:
        from_ply: the first ply of each line.
        lines: the candidate lines, each in SAN from the game's position.
        complete: False when the search was cut short (more lines may exist).
    """

    from_ply: int
    lines: tuple[tuple[str, ...], ...]
    complete: bool
    at: float


GameEvent = (
    GameStarted
    | MoveMade
    | ClocksCorrected
    | MovesWithdrawn
    | OutOfSync
    | InSync
    | PositionAccepted
    | ResultSignalled
    | GameEnded
    | FlagFell
    | ClockUpdated
    | ClockSidesLearned
    | MovesRecovered
    | GapCandidates
)
