"""A section moving on to its next round, as one journalled input (pure).

``dgtcast round next`` (or the arbiter page's "next round") becomes one journal record of
kind :data:`~daemon.journal.store.ROUND` (board 0) whose payload says everything the round
core needs, so a replay rebuilds the change without reading the pairing files again::

    {"section": "Open", "round": 5, "round_start": null, "date": "2026-10-04",
     "boards": [{"number": 1, "white": "Lindqvist, Maja", "white_elo": 2012, ...}, ...],
     "pairs": [[1, 2, 1], [2, 13, 4], ..., [7, 11, null]], "source": "round5.txt"}

``boards`` carries the players only (a board's e-board, its ``port`` and ``serial``,
stays what the configuration says); ``pairs`` (board, white rank, black rank or null for
the bye) lets the TRF hand-off be rebuilt after a restart; ``source`` says where the
pairings came from. The first start of a journal records the configured round the same
way, so that a restart never depends on files that have changed since.

:func:`section_after` is what the core does with it: the section's event gets the new
round, start time and date (``round_start`` null: the round starts when the section's
first clock is started, docs/alerts.md; older journals hold the change's time); the
listed boards get their new players; boards of the section that the new round does not
list keep their e-board and get no players.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from daemon.config.model import BoardConfig
from daemon.config.sections import Section

__all__ = ["PLAYER_FIELDS", "RoundChange", "section_after"]

#: The fields of a ``[[boards]]`` table that name the players (the rest is hardware).
PLAYER_FIELDS = (
    "white",
    "black",
    "white_elo",
    "black_elo",
    "white_fide_id",
    "black_fide_id",
    "white_title",
    "black_title",
)

Pair = tuple[int, int, int | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundChange:
    """One section's move to a round (the payload of a ``round`` journal record).

    Attributes:
        section: the section's name ("" in the one-event form).
        round: the round it now plays.
        round_start: when the round starts (FIDE 6.6), epoch seconds; None: when the
            section's first clock is started.
        date: the round's date (ISO); "" = the date of ``round_start``.
        boards: each board's number and players.
        pairs: the pairings as (board, white rank, black rank or None), when known.
        source: where the players came from (a pairings file, the TRF, the configuration).
    """

    section: str
    round: int
    round_start: float | None
    boards: tuple[BoardConfig, ...]
    pairs: tuple[Pair, ...] | None = None
    source: str = ""
    date: str = ""

    def __post_init__(self) -> None:
        if self.round_start is None and not self.date:
            raise ValueError("a round change needs a date when it has no start time")
        if not self.date:  # the date of the start time, written out
            object.__setattr__(self, "date", self.round_date.isoformat())
        if self.round < 1:
            raise ValueError(f"a round is 1 or more, not {self.round}")
        numbers = [board.number for board in self.boards]
        if len(set(numbers)) != len(numbers):
            raise ValueError("a board is listed twice")

    @classmethod
    def from_section(
        cls, section: Section, *, pairs: Sequence[Pair] | None = None, source: str = ""
    ) -> RoundChange:
        """The section as it is configured now (the record of a journal's first start)."""
        return cls(
            section=section.name,
            round=section.event.round,
            round_start=_timestamp(section.event.round_start),
            date=section.event.date.isoformat(),
            boards=tuple(_players_only(board) for board in section.boards),
            pairs=None if pairs is None else tuple(pairs),
            source=source,
        )

    def payload(self) -> dict[str, Any]:
        """The journal payload (JSON data)."""
        return {
            "section": self.section,
            "round": self.round,
            "round_start": self.round_start,
            "date": self.round_date.isoformat(),
            "boards": [b.model_dump(mode="json", exclude_none=True) for b in self.boards],
            "pairs": None if self.pairs is None else [list(p) for p in self.pairs],
            "source": self.source,
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> RoundChange:
        """The inverse of :meth:`payload`.

        Raises:
            ValueError: not a round change (pydantic's ValidationError is one).
        """
        pairs = payload.get("pairs")
        return cls(
            section=str(payload["section"]),
            round=int(payload["round"]),
            round_start=None if payload["round_start"] is None else float(payload["round_start"]),
            date=str(payload.get("date") or ""),
            boards=tuple(BoardConfig.model_validate(b) for b in payload["boards"]),
            pairs=None if pairs is None else tuple(_pair(p) for p in pairs),
            source=str(payload.get("source", "")),
        )

    @property
    def round_start_time(self) -> dt.datetime | None:
        """``round_start`` in this machine's time zone (None: the first clock's start)."""
        if self.round_start is None:
            return None
        return dt.datetime.fromtimestamp(self.round_start).astimezone()

    @property
    def round_date(self) -> dt.date:
        """The round's date: ``date``, else the date of ``round_start``."""
        if self.date:
            return dt.date.fromisoformat(self.date)
        start = self.round_start_time
        assert start is not None, "a round change has a date or a start"
        return start.date()


def _timestamp(start: dt.datetime | None) -> float | None:
    return None if start is None else start.timestamp()


def _pair(values: Sequence[Any]) -> Pair:
    board, white, black = values
    return int(board), int(white), None if black is None else int(black)


def _players_only(board: BoardConfig) -> BoardConfig:
    return BoardConfig.model_validate(
        {"number": board.number, **{name: getattr(board, name) for name in PLAYER_FIELDS}}
    )


def section_after(section: Section, change: RoundChange) -> Section:
    """The section playing ``change``'s round: new event, new players on its boards.

    A listed board keeps its e-board fields (``port``, ``serial``, ``clock_white_side``)
    if the section had it; a board of the section the change does not list keeps its
    e-board and gets no players.
    """
    event = dataclasses.replace(
        section.event,
        round=change.round,
        round_start=change.round_start_time,
        date=change.round_date,
    )
    current = {board.number: board for board in section.boards}
    boards: list[BoardConfig] = []
    for listed in change.boards:
        base = current.pop(listed.number, None) or BoardConfig(number=listed.number)
        boards.append(base.model_copy(update=_players(listed)))
    empty = dict.fromkeys(PLAYER_FIELDS)
    empty.update(white="", black="")
    boards += [current[n].model_copy(update=empty) for n in sorted(current)]
    return dataclasses.replace(section, event=event, boards=tuple(boards))


def _players(board: BoardConfig) -> dict[str, Any]:
    return {name: getattr(board, name) for name in PLAYER_FIELDS}
