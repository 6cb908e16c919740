"""Catching a board up from its own memory: a :class:`~daemon.round.inputs.RecoveryInput`
on one board of the round (pure).

While the memory is read the tracker is paused like an offline board (no timer runs on a
placement that is behind); then the board's log is replayed into it
(:mod:`daemon.game.recovery`). A board still ahead of the game once the log is replayed
has the gap searched (:mod:`daemon.round.gap_fill`).

On a clock dgtcast drives (``dgt_mode = 23``) the log's press times lack the increments
nobody added: each replayed reading gets them (:class:`~daemon.mode23.control.GapIncrements`)
and what the clock lacks is kept on the board (``clock_owed``) until the session gave it
to the clock. Computed from the journal's inputs alone, so a restart owes it again, once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import chess

from daemon.game.durations import TimeControl
from daemon.game.events import ClocksCorrected, GameEvent
from daemon.game.recovery import (
    RecoveryPlan,
    plan_recovery,
    press_plies,
    presses_between,
    replan_from_start,
)
from daemon.game.tracker import GameTracker
from daemon.mode23.cut_setting import not_taken
from daemon.mode23.game_moves import game_move_number
from daemon.mode23.gap_increments import (
    GapIncrements,
    clock_gained,
    presser_of,
    total_seconds,
    unfollowed_presses,
)
from daemon.round.board_game import (
    BoardGame,
    ClockSetting,
    cut_ledger,
    ledger_since,
    mark_plies,
    note_press,
)
from daemon.round.inputs import ClockInput, RecoveryInput
from drivers.memory import BoardMemory
from drivers.observations import (
    ClockObserved,
    ClockSide,
    LinkObserved,
    LinkState,
    PlacementObserved,
)

__all__ = ["replay_memory", "setting_sent"]

#: A memory read to heal a board out of sync may replace at most this many of the last
#: plies recorded (ones a lost field update made of a phantom piece, docs/faults.md).
_WITHDRAWN = 6

#: Seconds a clock's two readings may be off together (whole seconds each), plus the
#: line's delay from the memory's request to the board: the margin by which what the clock
#: spent since a SETNRUN must exceed the time there was before the SETNRUN is taken for lost.
_SPENT_SLACK = 3.0


def replay_memory(
    game: BoardGame, tracker: GameTracker, item: RecoveryInput
) -> tuple[bool, tuple[GameEvent, ...]]:
    """Pause the tracker while the memory is read; replay the log into it once read.

    Returns:
        False when a log was read that does not hold the game as known (no anchor); and
        the events for the record beside the tracker's: the ``[%clk]`` the log gives
        plies already recorded, where they differ (:class:`ClocksCorrected`).
    """
    at = item.at
    if item.state == "reading":
        game.catching_up = True
        game.reading_since = at
        game.presses_checked = at  # the memory holds every press made until now
        tracker.receive_link(LinkObserved(state=LinkState.OFFLINE, at=at))
        return True, ()
    game.catching_up = False
    tracker.receive_link(LinkObserved(state=LinkState.ONLINE, at=at))
    if item.state != "read":
        return True, ()
    control = game.section.event.time_control
    memory = item.memory
    assert memory is not None, "a memory read holds the memory"
    start = control.base + control.increment
    back = _WITHDRAWN if item.heal else 0
    plan = plan_recovery(tracker, memory, at, start_seconds=start, back=back)
    if plan is None:
        return False, ()
    unread = _unread_presses(game, tracker, memory, plan, start)
    late = any(step < plan.anchor.index for step in unread)  # presses of recorded plies
    if late or _presses_taken_late(game, tracker, memory, plan):
        plan = replan_from_start(tracker, memory, plan, at, start_seconds=start) or plan
    corrected = _clocks_corrected(game, plan.anchor.clocks, at)
    tracker.withdraw(plan.anchor.back, at)
    tracker.forget_presses(plan.anchor.white_side, at)
    made = tracker.ply
    first = tracker.last_clock
    gap = _gap_increments(game, tracker, plan, item, unread=unread)
    if _log_tells_setting(game.setting, first, plan.observations):
        game.setting = None
    cut_ledger(game.ledger, made)  # the log holds every press since: written anew
    for observation in plan.observations:
        if isinstance(observation, PlacementObserved):
            tracker.receive_placement(observation)
        else:
            shown = observation if gap is None else gap.receive(observation)
            note_press(game.ledger, tracker.last_clock, shown, clock_set=False)
            tracker.receive_clock(shown)
        made = mark_plies(game.ledger, made, tracker.ply)
    if gap is not None:
        gap.finish()
        game.clock_owed = gap.owed
    return True, corrected


def _unread_presses(
    game: BoardGame, tracker: GameTracker, memory: BoardMemory, plan: RecoveryPlan, start: int
) -> frozenset[int]:
    """The log's steps of lever presses that completed moves made live with no press
    read while a mode 23 clock ran (:attr:`BoardGame.unpressed`), where the ledger holds
    fewer presses up to that move than the log: a lost reading hid them (with the
    reply's, the same side running before and after), and the clock never got what they
    earned. (A move made with no press where the ledger holds as many took its press for
    the move before: no press is missing.)"""
    anchor = plan.anchor
    if not game.unpressed or anchor.start is None:
        return frozenset()
    completed = press_plies(tracker, memory, anchor.start, start)
    read = _presses_read(game.ledger)
    return frozenset(
        step
        for count, (step, ply) in enumerate(completed.items(), 1)
        if ply in game.unpressed and count > read.get(ply, count)  # the ledger lacks some
    )


def _presses_read(ledger: Sequence[tuple[str, int]]) -> dict[int, int]:
    """How many presses the ledger read before each move it marks (its last mark)."""
    read, count = {}, 0
    for kind, value in ledger:
        if kind in ("left", "right"):
            count += 1
        elif kind == "ply":
            read[value] = count
    return read


def _presses_taken_late(
    game: BoardGame, tracker: GameTracker, memory: BoardMemory, plan: RecoveryPlan
) -> bool:
    """Whether presses dgtcast followed live went to other moves than the log gives them,
    or earned nothing in its eyes, on a clock dgtcast adds to (mode 23): up to where the
    log takes the game up, the ledger holds more presses than the log (a press taken for
    one that starts the clock, its move's field updates lost, and the next moves each
    took the press after their own), or one recorded with nothing added where the log's
    press at its place came after a move (the game still at its start in dgtcast's eyes,
    White's move unseen when Black pressed). Their ``[%clk]`` and what the clock was
    given for them then follow no press of the log: the whole game is replayed from its
    start, the ledger beside it."""
    anchor = plan.anchor
    if game.section.event.dgt_mode != 23 or game.clock_adds or anchor.start is None:
        return False
    taken_up = tracker.ply - anchor.back
    if taken_up < 1:
        return False
    ledger = game.ledger
    markers = [i for i, entry in enumerate(ledger) if entry == ("ply", taken_up)]
    if not markers:
        return False
    followed = [(kind, value) for kind, value in ledger[: markers[-1]] if kind != "set"]
    followed = [(kind, value) for kind, value in followed if kind != "ply"]
    logged = presses_between(memory, anchor.start, anchor.index)
    increment = game.section.event.time_control.increment
    every = [
        (press.side, press.seconds)
        for press, _ in presses_between(memory, anchor.start, len(memory.steps))
    ]
    if any(n <= len(logged) for n in unfollowed_presses(every, followed, increment)):
        return True  # presses hidden by a lost reading before where the log takes the game up
    if len(followed) != len(logged):
        return len(followed) > len(logged)
    if not increment:
        return False
    return any(
        moved and kind == press.side.value and recorded <= press.seconds
        for (kind, recorded), (press, moved) in zip(followed, logged, strict=True)
    )


def _clocks_corrected(
    game: BoardGame, logged: Sequence[float | None], at: float
) -> tuple[GameEvent, ...]:
    """The recorded plies whose ``[%clk]`` the log tells otherwise: a press followed live
    before its move was seen (a field update lost on the line) lent the move a later
    press's time. Not on a clock dgtcast adds to (mode 23): its log lacks the increments."""
    if game.section.event.dgt_mode == 23 and not game.clock_adds:
        return ()
    told = {ply: seconds for ply, seconds in enumerate(logged, start=1) if seconds is not None}
    clocks = tuple(
        (move.ply, told[move.ply])
        for move in game.record.moves
        if move.ply in told and move.clock is not None and move.clock != told[move.ply]
    )
    return (ClocksCorrected(clocks=clocks, at=at),) if clocks else ()


def _gap_increments(
    game: BoardGame,
    tracker: GameTracker,
    plan: RecoveryPlan,
    item: RecoveryInput,
    *,
    unread: frozenset[int],
) -> GapIncrements | None:
    """What adds the missing increments to the log's readings; None when dgtcast adds
    nothing to this clock (not mode 23, or a clock that adds its own time).

    The log's first presses may be ones dgtcast followed live since the game's last move
    (``game.ledger``: the moves were not seen, a field update lost; a log read again to
    heal the board, ``item.heal``, or after a restart or the cable) or gave them when it
    replayed a log before: they take the times recorded for them. A time that grew at a
    press shows a clock that adds its own, unless dgtcast set the clock in between (a
    heal's log, or a ledger with a setting: a clock that took a SETNRUN is in mode 23).
    The presses of the log's steps ``unread`` were never given what they earned."""
    if game.section.event.dgt_mode != 23 or game.clock_adds:
        return None
    first = tracker.last_clock
    fed = list(zip(plan.steps, plan.observations, strict=True))
    readings = [o for _, o in fed if isinstance(o, ClockObserved)]
    steps = [step for step, o in fed if isinstance(o, ClockObserved)]
    ledger = ledger_since(game.ledger, tracker.ply)
    was_set = item.heal or any(kind == "set" for kind, _ in ledger)
    if not was_set and clock_gained(first, readings):
        game.clock_adds = True
        game.clock_owed = {}
        return None
    rules = game.section.event.clock_rules

    def control_of(side: ClockSide) -> TimeControl:
        return rules.black if tracker.color_at(side) == chess.BLACK else rules.white

    return GapIncrements(
        control_of,
        lambda side: game_move_number(tracker, side),
        first,
        _owed_before(game, first, readings, item.came),
        ledger=ledger,
        readings=readings,
        unread=frozenset(i for i, step in enumerate(steps) if step in unread),
    )


def setting_sent(game: BoardGame, tracker: GameTracker, item: ClockInput) -> ClockSetting:
    """The SETNRUN the session sent with ``item``, a reading the game has not taken yet:
    it gave each side what the clock lacked before it and what the press it answers
    earned."""
    gave = dict(game.clock_owed)
    mover = presser_of(tracker.last_clock, item.reading)
    move = None if mover is None else game_move_number(tracker, mover)
    if mover is not None and move is not None and move >= 1:
        rules = game.section.event.clock_rules
        control = rules.black if tracker.color_at(mover) == chess.BLACK else rules.white
        gave[mover] = gave.get(mover, 0) + control.added_after(move)
    return ClockSetting(
        at=item.at,
        reading=item.reading,
        gave={side: value for side, value in gave.items() if value},
    )


def _owed_before(
    game: BoardGame,
    first: ClockObserved | None,
    readings: Sequence[ClockObserved],
    came: ClockObserved | None,
) -> dict[ClockSide, int]:
    """What the clock lacked before this log: ``game.clock_owed``, and what a SETNRUN cut
    by the link gave (``game.setting``) where the log shows the clock never took it.

    The replay then starts from the reading that SETNRUN set (none confirmed it since).
    Had the clock taken it, the clock would have spent more from then to the log's last
    press (each side that it gave time having pressed since) than the time there was
    until the memory was asked for: a clock runs one side at a time, never faster. When
    the times allow both (a long outage), the reading that ``came`` while the memory was
    read tells by the time passed (:func:`~daemon.mode23.cut_setting.not_taken`); with
    none, the clock is taken to have it (never given twice)."""
    owed = dict(game.clock_owed)
    setting = game.setting
    if setting is None or not setting.cut or first != setting.reading or not readings:
        return owed
    pressed: set[ClockSide] = set()
    last = first
    for reading in readings:
        mover = presser_of(last, reading)
        if mover is not None:
            pressed.add(mover)
        last = reading
    if not pressed >= set(setting.gave):
        return owed
    spent = total_seconds(setting.reading) - total_seconds(readings[-1])
    unpaid: Mapping[ClockSide, int] | None = setting.gave
    if spent <= game.reading_since - setting.at + _SPENT_SLACK:
        told = None
        if came is not None:  # on time: it came before the memory on the line
            told = not_taken(setting.reading, setting.gave, came, on_time=True, first=False)
        unpaid = told or None
    for side, seconds in (unpaid or {}).items():
        owed[side] = owed.get(side, 0) + seconds
    return owed


def _log_tells_setting(
    setting: ClockSetting | None, first: ClockObserved | None, observations: Sequence[object]
) -> bool:
    """Whether a log replayed from ``first`` tells whether the clock took ``setting``
    (:func:`_owed_before`): it does unless the replay starts at the reading the SETNRUN set
    and no side it gave time pressed since. Then only the clock's next reading can tell
    (a side it gave time shows it or not while it stands: the session checks it,
    :meth:`~daemon.mode23.control.IncrementControl.check_cut`), and the setting is kept."""
    if setting is None or not setting.cut or first != setting.reading:
        return True
    last, pressed = first, set[ClockSide]()
    for observation in observations:
        if isinstance(observation, ClockObserved):
            mover = presser_of(last, observation)
            if mover is not None:
                pressed.add(mover)
            last = observation
    return bool(pressed & set(setting.gave))
