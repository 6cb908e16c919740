"""The games of past rounds, kept for spectators: each section's finished rounds.

When a section moves on to its next round, the daemon hands the round's last board
states (PGN included) to :meth:`RoundArchive.keep`, and journals them so that a restart
rebuilds the archive (:mod:`daemon.shell.archive`). The broadcast server serves them
(:mod:`broadcast.web.rounds`): ``/rounds.json``, ``/round/N.pgn``, one game's PGN and
JSON.

Behind a public delay a round is public ``delay`` seconds after it was archived, as its
last moves would have been: :meth:`RoundArchive.rounds` takes the time up to which
archived rounds may be shown. Pure: no I/O, no clock reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from broadcast.feed.messages import BoardState

__all__ = ["ArchivedRound", "RoundArchive", "round_number"]


def round_number(state: BoardState) -> int | None:
    """The round a board state belongs to, from its ``round`` ("3.1" → 3); None if unknown."""
    head = state.round.split(".")[0]
    return int(head) if head.isascii() and head.isdigit() else None


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchivedRound:
    """One section's round as it ended: every board's last state, in board order."""

    section: str
    round: int
    at: float  # when it was archived (epoch seconds): the section moved on then
    states: tuple[BoardState, ...]

    def game(self, board: int) -> BoardState | None:
        """The game of board ``board`` in this round, or None."""
        return next((state for state in self.states if state.board == board), None)


class RoundArchive:
    """Past rounds by section and round number; a round kept again replaces the old copy."""

    def __init__(self) -> None:
        self._rounds: dict[tuple[str, int], ArchivedRound] = {}

    def keep(
        self, section: str, round_number: int, states: Iterable[BoardState], at: float
    ) -> None:
        """Keep a section's round: its boards' last states (boards without players left out)."""
        kept = tuple(
            sorted((s for s in states if s.white or s.black or s.moves), key=lambda s: s.board)
        )
        self._rounds[(section, round_number)] = ArchivedRound(
            section=section, round=round_number, at=at, states=kept
        )

    def forget(self, section: str, round_number: int) -> None:
        """Drop a round (it is being played again: a change that did not happen)."""
        self._rounds.pop((section, round_number), None)

    def rounds(self, *, until: float) -> list[ArchivedRound]:
        """The rounds archived by ``until``: sections in the order of their lowest board,
        each section's rounds in order."""
        shown = [r for r in self._rounds.values() if r.at <= until]
        first: dict[str, int] = {}
        for kept in shown:
            lowest = min((s.board for s in kept.states), default=0)
            first[kept.section] = min(first.get(kept.section, lowest), lowest)
        return sorted(shown, key=lambda r: (first[r.section], r.section, r.round))

    def __len__(self) -> int:
        return len(self._rounds)
