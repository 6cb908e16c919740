"""Evaluations reach spectators with their position only: a gate before a public hub.

The daemon's engine analyses positions the public hub already shows; a relay receives
evaluations from MQTT, where its own public delay may still hold the position back. An
:class:`EvaluationGate` publishes an evaluation to its public hub while the board's
public position is the one evaluated (:func:`position_key`), and keeps the latest one of
each board until that position is public. An evaluation without a score (the engine is
missing or crashed) passes at once: it hides the bar and says nothing of a position.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState, ClockReading, Evaluation

__all__ = ["EvaluationGate", "position_key"]


def position_key(fen: str) -> str:
    """The position a FEN names, without its move counters (the same position again)."""
    return " ".join(fen.split()[:4])


class EvaluationGate:
    """Publishes evaluations to ``public`` once their position is public there.

    Use ``gate.start()`` (it follows the hub's boards), then :meth:`receive` each
    evaluation; :meth:`close` stops following.
    """

    def __init__(self, public: Hub) -> None:
        self.public = public
        self._held: dict[int, Evaluation] = {}
        self._remove: Callable[[], None] | None = None

    def start(self) -> None:
        """Follow the public boards (the positions held evaluations wait for)."""
        if self._remove is None:
            self._remove = self.public.add_listener(self._shown, _no_clock)

    def close(self) -> None:
        """Stop following; held evaluations are dropped."""
        if self._remove is not None:
            self._remove()
            self._remove = None
        self._held.clear()

    def receive(self, evaluation: Evaluation) -> None:
        """Publish ``evaluation`` now if its position is public, else once it is."""
        board = evaluation.board
        state = self.public.state(board)
        if not evaluation.has_score:
            self._held.pop(board, None)
            self.public.publish_evaluation(evaluation)
        elif state is not None and _same(state, evaluation):
            self._held.pop(board, None)
            self.public.publish_evaluation(dataclasses.replace(evaluation, fen=state.fen))
        else:
            self._held[board] = evaluation

    def _shown(self, state: BoardState) -> None:
        held = self._held.get(state.board)
        if held is not None and _same(state, held):
            del self._held[state.board]
            self.public.publish_evaluation(dataclasses.replace(held, fen=state.fen))


def _same(state: BoardState, evaluation: Evaluation) -> bool:
    return position_key(state.fen) == position_key(evaluation.fen)


def _no_clock(reading: ClockReading, now: float) -> None:
    """A clock reading moves no piece."""
