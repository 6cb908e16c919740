"""Which e-boards have not been heard since the daemon started, and since when (pure).

After a start (the first one or a restart) the link of every e-board is *unknown*: the
journal's last link record says what it was before the stop, not what it is now
(issue #17.7). A ``start`` input marks every e-board unheard; a link record marks it
heard. An e-board still unheard :data:`BOARD_SILENCE` seconds after the start is due:
the round core then raises ``board_offline`` for it, as for a cable pulled.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["BOARD_SILENCE", "LinkSilence"]

#: Seconds an e-board may stay silent after a start before ``board_offline`` is raised.
BOARD_SILENCE = 30.0


class LinkSilence:
    """Unheard e-boards and the start they have been silent since.

    Args:
        silence: seconds of silence before a board is due.
    """

    def __init__(self, silence: float = BOARD_SILENCE) -> None:
        self.silence = silence
        self._since: dict[int, float] = {}

    def receive_start(self, boards: Iterable[int], at: float) -> None:
        """The daemon started at ``at``: every one of ``boards`` is unheard from now."""
        self._since = dict.fromkeys(boards, at)

    def receive_heard(self, board: int) -> None:
        """The board's link reported (up or down): its state is known again."""
        self._since.pop(board, None)

    def is_unheard(self, board: int) -> bool:
        """Whether the board has not been heard since the last start."""
        return board in self._since

    def next_deadline(self) -> float | None:
        """When the next unheard board becomes due (None: none is unheard)."""
        if not self._since:
            return None
        return min(self._since.values()) + self.silence

    def receive_tick(self, now: float) -> list[tuple[int, float]]:
        """The boards that became due by ``now``, with the time they did (then heard)."""
        due = [(board, since + self.silence) for board, since in self._since.items()]
        due = [(board, when) for board, when in due if when <= now]
        for board, _ in due:
            del self._since[board]
        return sorted(due)
