"""The results ledger: every board's result, proposed by alerts, set and confirmed by arbiters.

Pure (layer L2), kept by the :class:`~daemon.arbiter.engine.AlertEngine`. A result is
provisional until an arbiter confirms it. An arbiter's result is never replaced by a
proposal, a confirmed one by nothing but another arbiter's. Every change is reported
to ``decide`` as a ``result`` decision record for the journal.

Exceptions::

    CommandRefused    an arbiter command that cannot be carried out (peer fault)
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from broadcast.feed.messages import RESULTS, to_json_dict

__all__ = ["CommandRefused", "Decide", "ResultLedger", "ResultSource", "ResultState"]


class CommandRefused(Exception):
    """An arbiter command that cannot be carried out; ``str(exc)`` is the reason to show."""


class ResultSource(enum.StrEnum):
    """Who proposed or set a result: an arbiter, or the alert that proposed it."""

    ARBITER = "arbiter"
    FLAG_FALL = "flag_fall"
    LATE_ARRIVAL = "late_arrival"
    RESULT_SIGNALLED = "result_signalled"
    GAME_OVER = "game_over"


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultState:
    """A board's result: provisional until an arbiter confirms it."""

    board: int
    result: str
    source: ResultSource
    at: float
    confirmed: bool = False
    confirmed_at: float | None = None


#: Records a decision: ``(board, kind, at, payload)``.
Decide = Callable[[int, str, float, dict[str, Any]], None]


class ResultLedger:
    """Every board's result, and the rules of who may change it.

    Args:
        decide: called with every ``result`` decision record, in order.
    """

    def __init__(self, decide: Decide) -> None:
        self._decide = decide
        self._results: dict[int, ResultState] = {}

    def __contains__(self, board: int) -> bool:
        return board in self._results

    def result_of(self, board: int) -> ResultState | None:
        """The board's result, None while there is none."""
        return self._results.get(board)

    def set(self, board: int, result: str, at: float) -> ResultState | None:
        """An arbiter sets the result, provisional until confirmed; ``*`` clears it.

        Raises:
            CommandRefused: not a result.
        """
        if result not in RESULTS:
            raise CommandRefused(f"result must be one of {', '.join(sorted(RESULTS))}")
        return self._change(board, result, ResultSource.ARBITER, at)

    def confirm(self, board: int, at: float) -> ResultState:
        """An arbiter confirms the board's result: it becomes final.

        Raises:
            CommandRefused: no result to confirm.
        """
        state = self._results.get(board)
        if state is None:
            raise CommandRefused(f"board {board} has no result to confirm")
        if not state.confirmed:
            state = dataclasses.replace(state, confirmed=True, confirmed_at=at)
            self._store(state, at)
        return state

    def propose(self, board: int, result: str, source: ResultSource, at: float) -> None:
        """An alert proposes a result; an arbiter's or a confirmed one stays."""
        current = self._results.get(board)
        if current is not None and (current.confirmed or current.source is ResultSource.ARBITER):
            return
        self._change(board, result, source, at)

    def withdraw_game_over(self, board: int, at: float) -> None:
        """Moves were taken back: a game-over proposal no longer holds."""
        state = self._results.get(board)
        if state is not None and state.source is ResultSource.GAME_OVER and not state.confirmed:
            self._change(board, "*", ResultSource.GAME_OVER, at)

    def forget(self, board: int) -> None:
        """The board starts a new round: its result belongs to the old one (no record)."""
        self._results.pop(board, None)

    def _change(
        self, board: int, result: str, source: ResultSource, at: float
    ) -> ResultState | None:
        if result == "*":
            if self._results.pop(board, None) is not None:
                payload = {"board": board, "result": "*", "source": source.value}
                self._decide(board, "result", at, payload)
            return None
        state = ResultState(board=board, result=result, source=source, at=at)
        self._store(state, at)
        return state

    def _store(self, state: ResultState, at: float) -> None:
        self._results[state.board] = state
        self._decide(state.board, "result", at, to_json_dict(state))
