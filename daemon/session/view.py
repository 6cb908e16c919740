"""A session's view of its board in the round core (:class:`~daemon.session.actions.BoardView`)."""

from __future__ import annotations

from collections.abc import Mapping

import chess

from daemon.game.recovery import memory_needed
from daemon.game.state import TrackerState
from daemon.mode23.game_moves import game_move_number, game_moving_side
from daemon.round.board_game import BoardGame, ClockSetting
from daemon.round.core import RoundCore
from drivers.observations import ClockObserved, ClockSide

__all__ = ["RoundBoardView"]

_UNDER_WAY = (TrackerState.PLAYING, TrackerState.OUT_OF_SYNC)


class RoundBoardView:
    """Board ``number`` of ``core``, read afresh at every question (a new round included)."""

    def __init__(self, core: RoundCore, number: int) -> None:
        self.core = core
        self.number = number

    def _game(self) -> BoardGame | None:
        return self.core.games.get(self.number)

    def memory_needed(self, placement: chess.BaseBoard) -> bool:
        game = self._game()
        if game is None or game.tracker is None:
            return False
        return memory_needed(game.tracker, placement)

    def last_reading(self) -> ClockObserved | None:
        game = self._game()
        return None if game is None else game.reading

    def replayed_reading(self) -> ClockObserved | None:
        game = self._game()
        tracker = None if game is None else game.tracker
        if tracker is None or game is None or game.gap_clock is not None:
            return None  # a searched line's presses came after the game's last reading
        return tracker.last_clock

    def move_number(self, side: ClockSide) -> int | None:
        game = self._game()
        tracker = None if game is None else game.tracker
        return None if tracker is None else game_move_number(tracker, side)

    def moving_side(self) -> ClockSide | None:
        game = self._game()
        tracker = None if game is None else game.tracker
        return None if tracker is None else game_moving_side(tracker)

    def clock_adds(self) -> bool:
        game = self._game()
        return game is not None and game.clock_adds

    def clock_owed(self) -> Mapping[ClockSide, int]:
        game = self._game()
        return {} if game is None else game.clock_owed

    def cut_setting(self) -> ClockSetting | None:
        game = self._game()
        setting = None if game is None else game.setting
        return setting if setting is not None and setting.cut else None

    def unmatched_since(self) -> float | None:
        game = self._game()
        tracker = None if game is None else game.tracker
        if tracker is None or tracker.state not in _UNDER_WAY:
            return None
        return tracker.unmatched_since

    def unpressed_since(self) -> float | None:
        game = self._game()
        if game is None:
            return None
        made = [at for at in game.unpressed.values() if at > game.presses_checked]
        return min(made, default=None)
