"""The tracker's pending move: what it holds, the lever presses waiting for a move, which
of them complete it, when a reply completes it and how long it must stand before it
completes without either (docs/reconstruction.md). Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import chess

from daemon.game.clock import LeverPress
from daemon.game.matching import CENTRE, Match, MatchKind
from daemon.game.state import TrackerSettings
from drivers.observations import ClockSide

__all__ = ["Pending", "Presses", "reply_completes", "settle_time", "showing"]

_MAX_PRESSES = 8


@dataclass(slots=True)
class Pending:
    """A match ahead of (or beside, or behind) the game, not yet completed."""

    match: Match
    since: float  # when its placement appeared (it is stable since then while visible)
    shown: dict[chess.Color, int | None]  # each side's clock time when it appeared
    visible: bool  # the board shows it now

    def rest(self, published: int) -> Pending | None:
        """What stays pending once its first ``published`` moves are (None: nothing)."""
        moves = self.match.moves[published:]
        if not moves:
            return None
        forward = Match(kind=MatchKind.FORWARD, moves=moves)
        return Pending(forward, self.since, self.shown, self.visible)


def showing(
    pending: Pending | None, match: Match, at: float, shown: dict[chess.Color, int | None]
) -> Pending:
    """The pending move once the board shows ``match`` at ``at``.

    The same match stays pending (standing since ``at`` if it was hidden); another one
    replaces it, with the clock times ``shown`` now.
    """
    if pending is None or pending.match != match:
        return Pending(match, at, shown, visible=True)
    if not pending.visible:
        pending.visible, pending.since = True, at
    return pending


class Presses:
    """The last lever presses no move has taken yet, oldest first."""

    def __init__(self) -> None:
        self._presses: list[LeverPress] = []
        self._held: set[LeverPress] = set()  # pressed while a move was on its way

    def add(self, press: LeverPress, *, moving: bool = False) -> None:
        """Keep ``press`` (and the few before it). ``moving``: the board did not show the
        game's position when it came (a move on its way, or one whose field updates were
        lost): the press is held for that move, whatever the other side presses next."""
        last = self._presses[-1] if self._presses else None
        other = last is not None and last.side is not press.side
        if other and not moving and last not in self._held:
            # The other side pressed, then this one, both on a still board: the clock
            # was handed back, the first press completed no move (or one already
            # published); forget it. A press on a still board followed by one for a
            # move on its way is kept: its own move may be one whose field updates
            # were all lost.
            self._presses.pop()
        if moving:
            self._held.add(press)
        self._presses = [*self._presses[-_MAX_PRESSES + 1 :], press]
        self._held &= set(self._presses)

    def assign(
        self,
        since: float,
        color: chess.Color,
        moves: int,
        color_of: Callable[[ClockSide], chess.Color | None],
        returned: Sequence[LeverPress] = (),
    ) -> list[LeverPress]:
        """The presses that completed the first of ``moves`` moves, in order.

        ``returned``: the presses of the moves the match withdraws (a correction: the
        move withdrawn was a stage of the one replacing it, and its press is that one's).

        A press counts for a move when it is by the mover (``color`` moves first, then the
        colours alternate) and came after the mover's turn began (``since``, then the press
        of the move before): a press out of turn, or one late for a move already completed,
        is never taken for a later move.
        """
        assigned: list[LeverPress] = []
        pool = sorted([*returned, *self._presses], key=lambda press: press.at)
        for _ in range(moves):
            press = next(
                (
                    p
                    for p in pool
                    if p.at >= since and p not in assigned and color_of(p.side) == color
                ),
                None,
            )
            if press is None:
                break
            assigned.append(press)
            since = press.at
            color = not color
        return assigned

    def take(self, press: LeverPress) -> None:
        """A move took ``press`` (one kept here, or one given back by a withdrawn move)."""
        if press in self._presses:
            self._presses.remove(press)
        self._held.discard(press)

    def forget_before(self, at: float) -> None:
        """Forget the presses made before ``at``: no move can take them any more."""
        self._presses = [press for press in self._presses if press.at >= at]
        self._held &= set(self._presses)

    def clear(self) -> None:
        """Forget every press."""
        self._presses = []
        self._held = set()


def settle_time(
    settings: TrackerSettings, match: Match, seen: chess.BaseBoard, clock_running: bool
) -> float:
    """How long a pending move must stand before it completes without a lever press.

    Longer with a running clock (the press is then the normal signal), and at least the
    centre-king hold when a move puts a king on a centre square (the result gesture).
    """
    wait = settings.clock_settle_time if clock_running else settings.settle_time
    kings_in_centre = seen.kings & CENTRE
    if any(chess.BB_SQUARES[move.to_square] & kings_in_centre for move in match.moves):
        wait = max(wait, settings.centre_king_hold)
    return wait


def reply_completes(pending: Pending, match: Match, clock_running: bool) -> bool:
    """Whether ``match``, seen now, is a reply on top of the pending move that completes it.

    Only without a running clock: with one the mover's lever press is awaited instead (a
    reply seen before it is more likely a piece knocked for a moment, and the press
    carries the move's clock times).
    """
    return (
        not clock_running
        and pending.match.kind is MatchKind.FORWARD
        and match.kind is MatchKind.FORWARD
        and len(pending.match.moves) == 1
        and match.moves[:1] == pending.match.moves
        and len(match.moves) == 2
    )
