"""What the engine analyses next, and which boards an analysis answers (pure).

:class:`AnalysisPlan` takes every public state of the followed boards
(:meth:`~AnalysisPlan.receive_state`) and keeps the latest position of each board
waiting: a board that moves on drops its older position, so the queue holds one
position per board at most, oldest board first. Each position is analysed once: a
result is kept (a bounded cache by position, shared by every board and spectator) and
answers every board standing on that position, now or later. Boards without an e-board
and without a move (results entered by hand) are not analysed. No I/O, no clock.
"""

from __future__ import annotations

import collections
from collections.abc import Collection
from dataclasses import dataclass

from broadcast.feed.evaluations import position_key
from broadcast.feed.messages import BoardState, BoardStatus, Evaluation

__all__ = ["Analysed", "AnalysisPlan", "Job"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Analysed:
    """What the engine said of a position (White's point of view, see :class:`Evaluation`)."""

    cp: int | None = None
    mate: int | None = None
    depth: int = 0
    line: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """A position to analyse: its FEN, and whether the game is Chess960."""

    fen: str
    chess960: bool = False

    @property
    def key(self) -> tuple[str, bool]:
        """The position (without move counters) as the cache knows it."""
        return position_key(self.fen), self.chess960


class AnalysisPlan:
    """The followed boards' positions, the queue of those to analyse, and the cache.

    Args:
        boards: the board numbers followed (with ``sections``; both None: every board).
        sections: the section names whose boards are followed.
        cache_size: how many analysed positions are kept.
    """

    def __init__(
        self,
        *,
        boards: Collection[int] | None = None,
        sections: Collection[str] | None = None,
        cache_size: int = 20_000,
    ) -> None:
        self._boards = None if boards is None else frozenset(boards)
        self._sections = None if sections is None else frozenset(sections)
        self._cache_size = cache_size
        self._cache: collections.OrderedDict[tuple[str, bool], Analysed] = collections.OrderedDict()
        self._at: dict[int, Job] = {}  # each followed board's public position
        self._waiting: dict[int, Job] = {}  # the boards whose position waits, oldest first
        self.analysed = 0  # positions analysed (cache misses)

    def follows(self, state: BoardState) -> bool:
        """Whether the board of ``state`` is analysed."""
        if self._boards is None and self._sections is None:
            return True
        return (self._boards is not None and state.board in self._boards) or (
            self._sections is not None and state.section in self._sections
        )

    def receive_state(self, state: BoardState) -> list[Evaluation]:
        """A public state: its position waits, unless analysed already (returned then).

        A board without an e-board and without a move (its result is entered by hand)
        has no game to show: it gets no evaluation. An e-board's start position does.
        """
        if not self.follows(state):
            return []
        if state.status is BoardStatus.MANUAL and not state.moves:
            self._at.pop(state.board, None)
            self._waiting.pop(state.board, None)
            return []
        job = Job(fen=state.fen, chess960=state.variant == "chess960")
        if self._at.get(state.board) == job:
            return []
        self._at[state.board] = job
        return self._place(state.board, job)

    def _place(self, board: int, job: Job) -> list[Evaluation]:
        self._waiting.pop(board, None)
        known = self._cache.get(job.key)
        if known is not None:
            self._cache.move_to_end(job.key)
            return [_evaluation(board, job, known)]
        self._waiting[board] = job
        return []

    def next_job(self) -> Job | None:
        """The position to analyse now (the board waiting longest), or None."""
        for board in self._waiting:
            return self._waiting.pop(board)
        return None

    @property
    def waiting(self) -> int:
        """How many boards wait for their position to be analysed."""
        return len(self._waiting)

    def receive_result(self, job: Job, analysed: Analysed) -> list[Evaluation]:
        """The engine analysed ``job``: every board standing on it is answered."""
        self.analysed += 1
        self._cache[job.key] = analysed
        self._cache.move_to_end(job.key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        answered = [b for b, at in self._at.items() if at.key == job.key]
        for board in answered:
            self._waiting.pop(board, None)
        return [_evaluation(b, self._at[b], analysed) for b in sorted(answered)]

    def receive_failure(self, job: Job | None = None) -> list[Evaluation]:
        """The engine is down: no evaluation for any followed board (``job``, if it was
        being analysed, waits again while a board stands on it)."""
        if job is not None:
            for board, at in self._at.items():
                if at.key == job.key and board not in self._waiting:
                    self._waiting[board] = at
        return [Evaluation(board=board) for board in sorted(self._at)]

    def receive_engine_up(self) -> list[Evaluation]:
        """The engine runs again: every board's position is answered or waits again."""
        evaluations: list[Evaluation] = []
        for board, job in sorted(self._at.items()):
            evaluations += self._place(board, job)
        return evaluations


def _evaluation(board: int, job: Job, analysed: Analysed) -> Evaluation:
    return Evaluation(
        board=board,
        fen=job.fen,
        cp=analysed.cp,
        mate=analysed.mate,
        depth=analysed.depth,
        line=analysed.line,
    )
