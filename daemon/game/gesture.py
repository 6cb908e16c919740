"""The kings gesture as the board shows it: the result it signals and since when
(docs/protocol.md §9.1, :func:`daemon.game.rules.result_of_kings`). It signals once it has
stood still for the hold time; kings passing through the centre signal nothing. Pure.
"""

from __future__ import annotations

import chess

from daemon.game.rules import result_of_kings

__all__ = ["KingsGesture"]


class KingsGesture:
    """The gesture the last placement shows, if any, and since when it stands."""

    def __init__(self) -> None:
        self._shown: tuple[str, float] | None = None

    @property
    def result(self) -> str | None:
        """The result the gesture shows, None while none shows."""
        return None if self._shown is None else self._shown[0]

    def signals_at(self, hold: float) -> float | None:
        """When the gesture, standing ``hold`` seconds, signals its result; None without one."""
        return None if self._shown is None else self._shown[1] + hold

    def see(self, placement: chess.BaseBoard, at: float) -> bool:
        """Note what ``placement`` (real board coordinates) shows at ``at``; True for a gesture."""
        result = result_of_kings(placement)
        if result is None:
            self._shown = None
        elif self._shown is None or self._shown[0] != result:
            self._shown = (result, at)
        return result is not None

    def clear(self) -> None:
        """Forget the gesture (a new game, the board offline, the result taken)."""
        self._shown = None
