"""One board of the round as the core keeps it: its game, and what is derived from it.

:class:`BoardGame` holds a board's tracker, record, clock and link; the functions here
make its tracker, apply its game events, tell its status, and render its tags and PGN.
Pure; :mod:`daemon.round.core` keeps one per board.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import chess

from broadcast.feed.messages import BoardStatus
from broadcast.feed.pgn import clock_tags
from daemon.config.model import BoardConfig
from daemon.config.sections import Section
from daemon.game.events import (
    ClockUpdated,
    GameEvent,
    GameStarted,
    InSync,
    MoveMade,
    MovesRecovered,
    MovesWithdrawn,
    OutOfSync,
    PositionAccepted,
)
from daemon.game.record import GameHeaders, GameRecord
from daemon.game.state import TrackerSettings
from daemon.game.tracker import GameTracker
from daemon.round.rendered_game import RenderedGame
from drivers.observations import (
    BatteryObserved,
    ClockObserved,
    ClockSide,
    PlacementObserved,
)

__all__ = [
    "BoardGame",
    "ClockSetting",
    "apply_event",
    "board_status",
    "cut_ledger",
    "game_headers",
    "ledger_since",
    "line_sans",
    "make_tracker",
    "mark_plies",
    "moves_recovered",
    "note_move",
    "note_press",
    "render_pgn",
]


#: Ledger entries kept: those of a whole game of 300 plies (a press, a setting and a
#: mark each), so that its presses can be counted from the start.
_LEDGER_KEPT = 1_200


@dataclass(frozen=True, slots=True)
class ClockSetting:
    """Mode 23: a SETNRUN the session sent that no reading of the connected clock has
    confirmed yet (readings are dropped until the clock acknowledges it).

    Attributes:
        at: when it was sent.
        reading: the reading it set.
        gave: the seconds it gave each side (what the clock lacked before it, and what
            the press it answers earned).
        cut: the link went down before a reading confirmed it: the clock may never
            have taken it (docs/daemon.md, "Mode 23 and the clocks").
    """

    at: float
    reading: ClockObserved
    gave: dict[ClockSide, int]
    cut: bool = False


@dataclass(slots=True)
class BoardGame:
    """What the core knows of one board beyond its tracker."""

    config: BoardConfig
    section: Section
    tracker: GameTracker | None  # None: no e-board, results by hand
    record: GameRecord = field(default_factory=GameRecord)
    clock: ClockUpdated | None = None
    online: bool | None = None
    out_of_sync: bool = False
    started: bool = False
    catching_up: bool = False  # reading the e-board's memory (daemon/game/recovery.py)
    recovered_plies: int = 0  # plies of the game recovered, not seen live
    candidates: tuple[tuple[str, ...], ...] = ()  # lines (UCI) for the arbiter's choose_line
    rendered: RenderedGame | None = None  # kept by render_pgn
    serial: str | None = None  # the e-board's serial number, from its last link-up
    port: str | None = None  # the device path of its last link-up
    placement: PlacementObserved | None = None  # the last sensed placement (next round)
    reading: ClockObserved | None = None  # the last clock reading (next round)
    battery: BatteryObserved | None = None  # the last level a wireless e-board reported
    #: Mode 23: seconds the clock lacks from presses replayed from the memory (in their
    #: [%clk] already), until a reading of the connected clock shows them given.
    clock_owed: dict[ClockSide, int] = field(default_factory=dict)
    #: The clock adds its own time: the session said so with its last reading, or the
    #: memory showed it (daemon/mode23/control.py); nothing is owed then.
    clock_adds: bool = False
    #: The presses ``(side, the presser's time)`` and clock settings ``("set", 0)`` read,
    #: in order, with ``("ply", n)`` where the game's move ``n`` was made (a memory read's
    #: replay writes its own presses, with the times it gave them, over what it replays):
    #: what a memory read follows from where it takes the game up (:func:`ledger_since`,
    #: :class:`~daemon.mode23.control.GapIncrements`).
    ledger: list[tuple[str, int]] = field(default_factory=list)
    #: Mode 23: the last SETNRUN, until a reading of the connected clock confirms it.
    setting: ClockSetting | None = None
    #: When the memory read under way (or the last one) was asked for.
    reading_since: float = 0.0
    #: The ply a searched gap ended on and its mover's clock side, while its ``[%clk]``
    #: is from a reading older than the gap: the next reading that shows that side
    #: stopped gives it (:func:`~daemon.round.board_recovery.clock_after_gap`).
    gap_clock: tuple[int, ClockSide] | None = None
    #: Mode 23: the plies made live with no lever press read while the clock ran, and
    #: when (a press whose reading was lost, with its reply's: the memory tells,
    #: :func:`note_move`); :attr:`presses_checked`: when the memory was last asked.
    unpressed: dict[int, float] = field(default_factory=dict)
    presses_checked: float = 0.0


def note_move(game: BoardGame, event: GameEvent, *, source: str) -> None:
    """What the ledger keeps of a game event: where each move was made (a memory read
    takes the game up there; the replay of one, ``source`` "memory", marks its own), and
    the moves made live (no ``source``) on a mode 23 clock that ran with no lever press
    read (:attr:`BoardGame.unpressed`: a press a lost reading hid, whose increment the
    clock never got, or one the player forgot)."""
    match event:
        case MoveMade():
            if source != "memory":
                game.ledger.append(("ply", event.ply))
            game.unpressed.pop(event.ply, None)
            if not source and _unpressed(game, event):
                game.unpressed[event.ply] = event.at
        case MovesWithdrawn():
            game.unpressed = {ply: at for ply, at in game.unpressed.items() if ply < event.from_ply}
        case GameStarted() | PositionAccepted():
            game.ledger.clear()
            game.gap_clock = None
            game.unpressed = {}
        case _:
            pass


def _unpressed(game: BoardGame, move: MoveMade) -> bool:
    event = game.section.event
    reading = game.reading
    return (
        event.dgt_mode == 23
        and event.time_control.increment > 0
        and not game.clock_adds
        and reading is not None
        and reading.running is not None
        and move.clock is not None
        and not move.pressed
    )


def ledger_since(ledger: Sequence[tuple[str, int]], ply: int) -> list[tuple[str, int]]:
    """The presses and settings of ``ledger`` since the game last stood at ``ply`` (its
    move ``ply`` made; from the start for 0)."""
    start = _ledger_start(ledger, ply)
    return [(kind, value) for kind, value in ledger[start:] if kind != "ply"]


def cut_ledger(ledger: list[tuple[str, int]], ply: int) -> None:
    """Forget what ``ledger`` holds since the game last stood at ``ply``: a memory read
    replays it from there (:func:`mark_plies`, :func:`note_press`)."""
    del ledger[_ledger_start(ledger, ply) :]


def mark_plies(ledger: list[tuple[str, int]], made: int, ply: int) -> int:
    """Mark in ``ledger`` the moves made since ``made`` up to ``ply``; returns ``ply``."""
    ledger.extend(("ply", n) for n in range(made + 1, ply + 1))
    return ply


def _ledger_start(ledger: Sequence[tuple[str, int]], ply: int) -> int:
    for index in range(len(ledger) - 1, -1, -1):
        kind, value = ledger[index]
        if kind == "ply" and value <= ply:
            return index + 1
    return 0


def note_press(
    ledger: list[tuple[str, int]],
    previous: ClockObserved | None,
    reading: ClockObserved,
    *,
    clock_set: bool,
) -> None:
    """Add a press between two readings and a setting of the clock to a board's ledger
    (:attr:`BoardGame.ledger`)."""
    mover = None if previous is None else previous.running
    if mover is not None and reading.running not in (None, mover):
        seconds = reading.left_seconds if mover is ClockSide.LEFT else reading.right_seconds
        ledger.append((mover.value, seconds))
    if clock_set:
        ledger.append(("set", 0))
    del ledger[:-_LEDGER_KEPT]


def make_tracker(board: BoardConfig, section: Section, base: TrackerSettings) -> GameTracker | None:
    if not board.has_eboard:
        return None
    side = ClockSide(board.clock_white_side) if board.clock_white_side else None
    event = section.event
    settings = dataclasses.replace(
        base,
        white_side=side,
        increment=float(event.time_control.increment),
        clock_rules=event.clock_rules,
        chess960=event.variant == "chess960",
    )
    return GameTracker(settings)


def board_status(game: BoardGame, unheard: bool) -> BoardStatus:
    if game.tracker is None:
        return BoardStatus.MANUAL
    if game.online is False:
        return BoardStatus.OFFLINE
    if unheard:
        return BoardStatus.CONNECTING
    if game.catching_up:
        return BoardStatus.CATCHING_UP
    if game.out_of_sync:
        return BoardStatus.OUT_OF_SYNC
    if not game.started:
        return BoardStatus.WAITING
    return BoardStatus.ONLINE


def apply_event(game: BoardGame, event: GameEvent) -> None:
    game.record.receive_event(event)
    if not isinstance(event, ClockUpdated | MoveMade):
        game.rendered = None  # moves made extend it (render_pgn)
    match event:
        case GameStarted():
            game.started = True
            game.recovered_plies = 0
        case OutOfSync():
            game.out_of_sync = True
        case InSync() | PositionAccepted():
            game.out_of_sync = False
        case ClockUpdated():
            game.clock = event
        case MovesRecovered():
            game.recovered_plies += event.plies
            game.candidates = ()
        case _:
            pass


def moves_recovered(events: list[GameEvent], source: str) -> list[GameEvent]:
    """A :class:`MovesRecovered` for the moves that stand after ``events``, if any."""
    plies: dict[int, float] = {}
    for event in events:
        if isinstance(event, MoveMade):
            plies = {ply: at for ply, at in plies.items() if ply < event.ply}
            plies[event.ply] = event.at
        elif isinstance(event, GameStarted):
            plies = {}
        elif isinstance(event, MovesWithdrawn):
            plies = {ply: at for ply, at in plies.items() if ply < event.from_ply}
    if not plies:
        return []
    first = min(plies)
    return [MovesRecovered(from_ply=first, plies=len(plies), source=source, at=plies[first])]


def game_headers(board: BoardConfig, section: Section) -> GameHeaders:
    """The tags of a board's game; the ones lichess matches on never change."""
    event = section.event
    return GameHeaders(
        event=event.name,
        site=event.site or "?",
        date=event.date.strftime("%Y.%m.%d"),
        round=f"{event.round}.{board.number}",
        white=board.white or "?",
        black=board.black or "?",
        white_elo=board.white_elo,
        black_elo=board.black_elo,
        time_control=str(event.time_control),
        clock_tags=tuple(event.clock_rules.tags().items()),
        white_fide_id=None if board.white_fide_id is None else str(board.white_fide_id),
        black_fide_id=None if board.black_fide_id is None else str(board.black_fide_id),
        white_title=board.white_title,
        black_title=board.black_title,
    )


def render_pgn(game: BoardGame, result: str, termination: str | None = None) -> tuple[str, str]:
    """The board's game as PGN text with ``result``, and the current FEN.

    ``termination`` replaces the record's Termination tag (None keeps it).

    The rendering is kept in ``game.rendered``: extended when moves were added, made
    anew when another game event or the result changed it. The WhiteClock and
    BlackClock tags of the last reading are added each time.
    """
    rendered = game.rendered
    if (
        rendered is None
        or rendered.result != result
        or rendered.termination != termination
        or not rendered.extend(game.record.moves)
    ):
        rendered = game.rendered = RenderedGame(game.record, result, termination)
    tags, movetext, fen = rendered.text()
    if game.clock is None:
        return tags + movetext, fen
    return tags + clock_tags(game.clock.white, game.clock.black) + movetext, fen


def line_sans(board: chess.Board, line: Sequence[chess.Move]) -> list[str]:
    """The SAN of each move of ``line`` from ``board`` (left as it was)."""
    walk = board.copy(stack=False)
    sans = []
    for move in line:
        sans.append(walk.san(move))
        walk.push(move)
    return sans
