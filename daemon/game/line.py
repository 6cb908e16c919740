"""The game as published: its moves, the placement of each of its positions, when each
turn began and the lever press that completed each move (sans-I/O).

The tracker (:mod:`daemon.game.tracker`) decides when a move is made or withdrawn; the
line makes it so and says it as an event. It starts from the game's first position (a
start position or one the arbiter accepted), which need not be the standard one.
"""

from __future__ import annotations

from collections.abc import Sequence

import chess

from base.fen import position_fen
from daemon.game.clock import LeverPress, MoveClock
from daemon.game.events import MoveMade, MovesWithdrawn
from daemon.game.matching import Match, MatchKind, PlacementKey, find_match, placement_key
from daemon.game.rules import continued_from

__all__ = ["GameLine"]


class GameLine:
    """The published game from its first position.

    Args:
        board: the first position; the line owns it from now on.
        at: when the first turn began.
    """

    def __init__(self, board: chess.Board, at: float) -> None:
        self.board = board
        self._base_ply = board.ply()
        self.keys = [placement_key(board)]  # the placement of every position, in order
        self._turn_began = [at]
        self._pressed: list[LeverPress | None] = []  # the press that completed each move

    @property
    def ply(self) -> int:
        """Plies played so far (0 before White's first move)."""
        return self._base_ply + len(self.board.move_stack)

    def match(self, key: PlacementKey, *, backwards: bool = False) -> Match | None:
        """The match of a placement against the game (:func:`find_match`), None if none."""
        return find_match(self.board, key, self.keys, backwards=backwards)

    def base_turn(self, match: Match) -> chess.Color:
        """The side to move in the position the match starts from (after withdrawing)."""
        return self.board.turn if match.back % 2 == 0 else not self.board.turn

    def turn_began(self, back: int = 0) -> float:
        """When the turn began in the position ``back`` plies before the current one (the
        first position's, for a game shorter than that)."""
        return self._turn_began[max(0, len(self._turn_began) - 1 - back)]

    def presses(self, back: int) -> list[LeverPress]:
        """The lever presses that completed the last ``back`` moves, oldest first."""
        last = self._pressed[len(self._pressed) - back :] if back else []
        return [press for press in last if press is not None]

    def playable(self, moves: Sequence[chess.Move]) -> bool:
        """Whether ``moves`` can be played, in order, from the current position."""
        board = self.board.copy(stack=False)
        for move in moves:
            if not board.is_legal(move):
                return False
            board.push(move)
        return True

    def continued(self, seen: chess.BaseBoard, running: chess.Color | None) -> chess.Board | None:
        """The position the game goes on from when the arbiter accepts ``seen``, a placement
        that matches none of the game (:func:`continued_from`): the running clock's side
        is to move, else the side that did not move last. None if no game can go on."""
        turn = (not self.board.turn) if running is None else running
        return continued_from(seen, self.board, turn)

    def play(
        self,
        move: chess.Move,
        times: MoveClock,
        began: float,
        at: float,
        press: LeverPress | None = None,
    ) -> MoveMade:
        """Play ``move`` with its clock annotations; the next turn began at ``began``;
        ``press``: the lever press that completed it, if one did."""
        san = self.board.san_and_push(move)
        self.keys.append(placement_key(self.board))
        self._turn_began.append(began)
        self._pressed.append(press)
        return MoveMade(
            ply=self.ply,
            uci=move.uci(),
            san=san,
            clock=times.clock,
            clock_before=times.clock_before,
            emt=times.emt,
            fen=position_fen(self.board),
            at=at,
            pressed=press is not None,
        )

    def withdraw(self, match: Match, at: float) -> MovesWithdrawn:
        """Take back the ``match.back`` plies the match replaces.

        After a takeback the mover's turn begins again at ``at``.
        """
        from_ply = self.ply - match.back + 1
        for _ in range(match.back):
            self.board.pop()
            self.keys.pop()
            self._turn_began.pop()
            if self._pressed:  # plies played before the line began have no entry
                self._pressed.pop()
        if match.kind is MatchKind.TAKEBACK:
            self._turn_began[-1] = at
        reason = "correction" if match.kind is MatchKind.CORRECTION else "takeback"
        return MovesWithdrawn(from_ply=from_ply, reason=reason, at=at)
