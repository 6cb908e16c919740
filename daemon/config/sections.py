"""The configuration's sections: each one's event, defaults filled in, boards and pairing.

A file has one section (``[event]`` with ``[[boards]]``) or several (``[[sections]]``;
docs/configuration.md).

:class:`SectionReader` turns the validated tables into :class:`Section` values for
:class:`daemon.config.model.TableBuilder`, adding one line per problem to its list.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from daemon.config.tables import (
    BoardConfig,
    EventKeys,
    EventTable,
    FileTables,
    PairingConfig,
    SectionTable,
)
from daemon.game.durations import ClockRules, TimeControl

__all__ = ["EventConfig", "Section", "SectionReader"]

_DEFAULT_WARNING = 300  # seconds before the default time that the late-arrival warning comes
_EVENT_KEYS = tuple(EventKeys.model_fields)


@dataclass(frozen=True, slots=True, kw_only=True)
class EventConfig:
    """A section's event, with every default filled in.

    Attributes:
        name: the event's name (PGN ``Event``).
        site: where it is played (PGN ``Site``), "" when not given.
        date: the round's date; default the date of ``round_start``, else of the
            daemon's first start.
        round: the round number, 1 or more.
        round_start: when White's clocks are started (FIDE 6.6), time-zone aware; None
            when not configured: the round starts when the section's first clock is
            started (the default time counts from then, docs/alerts.md).
        time_control: what every clock of the section is set to (White's under time odds).
        black_time_control: Black's control under time odds (Armageddon), else None.
        draw_odds: ``"black"`` (or ``"white"``) when a draw counts as that colour's win.
        variant: ``"standard"`` or ``"chess960"``.
        dgt_mode: 23 when the clocks are computer-controlled (docs/protocol.md §8).
        default_time: seconds after the round's start a player absent from the board
            loses (FIDE 6.7); 0 when the regulations state none (then no late-arrival
            alert: a board cannot prove absence at the very start).
        default_time_warning: seconds before the default time that the late-arrival
            warning is given.
    """

    name: str
    site: str
    date: dt.date
    round: int
    round_start: dt.datetime | None
    time_control: TimeControl
    dgt_mode: int | None
    default_time: int
    default_time_warning: int
    black_time_control: TimeControl | None = None
    draw_odds: str | None = None
    variant: str = "standard"

    @property
    def clock_rules(self) -> ClockRules:
        """Each colour's time control and the draw odds."""
        black = self.black_time_control or self.time_control
        return ClockRules(white=self.time_control, black=black, draw_odds=self.draw_odds)

    @property
    def default_at(self) -> dt.datetime | None:
        """When the default time expires (FIDE 6.7); None while the start is not known."""
        if self.round_start is None:
            return None
        return self.round_start + dt.timedelta(seconds=self.default_time)


@dataclass(frozen=True, slots=True, kw_only=True)
class Section:
    """Boards that share an event and a time control; ``name`` is "" in the one-event form."""

    name: str
    event: EventConfig
    boards: tuple[BoardConfig, ...]
    #: Where the section's players and results go (``[pairing]``, ``[sections.pairing]``).
    pairing: PairingConfig | None = None


class SectionReader:
    """The sections of validated tables; every problem is appended to ``problems``.

    Args:
        tables: the file's validated tables.
        now: the daemon's start: the round's date when nothing else says it.
        resolve: makes a path of the file absolute (from the file's folder).
        problems: where the one-line problems go (the builder's own list).
    """

    def __init__(
        self,
        tables: FileTables,
        *,
        now: dt.datetime,
        resolve: Callable[[Path], Path],
        problems: list[str],
    ) -> None:
        self.tables = tables
        self.now = now
        self._resolve = resolve
        self.problems = problems

    def sections(self) -> list[tuple[Section, str]]:
        """Each section with the key path of its boards array (for error lines)."""
        tables = self.tables
        if tables.sections is not None:
            if tables.boards is not None:
                self.problems.append(
                    "boards: top-level [[boards]] cannot be combined with [[sections]];"
                    " move them into [[sections.boards]]"
                )
            if not tables.sections:
                self.problems.append("sections: no sections configured")
            if tables.event is None or tables.event.name is None:
                self.problems.append("event.name: required (the name the sections share)")
            return [self._section(i, table) for i, table in enumerate(tables.sections, 1)]
        if tables.event is None:
            self.problems.append("event: required table missing (or use [[sections]])")
        elif tables.event.name is None:
            self.problems.append("event.name: required")
        if not tables.boards:
            self.problems.append("boards: no boards configured; add [[boards]] tables")
        event = self._event(tables.event or EventTable(), None, "event")
        return [(Section(name="", event=event, boards=tuple(tables.boards or ())), "boards")]

    def _section(self, index: int, table: SectionTable) -> tuple[Section, str]:
        where = f"sections[{index}]"
        if not table.boards:
            self.problems.append(f"{where}.boards: no boards in this section")
        event = self._event(self.tables.event or EventTable(), table, where)
        return Section(name=table.name, event=event, boards=tuple(table.boards)), f"{where}.boards"

    def _event(self, shared: EventTable, own: SectionTable | None, where: str) -> EventConfig:
        values: dict[str, Any] = {key: getattr(shared, key) for key in _EVENT_KEYS}
        if own is not None:
            values.update({k: getattr(own, k) for k in _EVENT_KEYS if getattr(own, k) is not None})
        scope = "" if own is None else ", here or in [event]"
        for key in ("round", "time_control"):
            if values[key] is None and (own is not None or self.tables.event is not None):
                self.problems.append(f"{where}.{key}: required{scope}")
        round_start = values["round_start"]
        default_time = values["default_time"] or 0
        warning = values["default_time_warning"]
        return EventConfig(
            name=shared.name or "",
            site=values["site"] or "",
            date=values["date"] or (round_start or self.now).date(),
            round=values["round"] or 1,
            round_start=round_start,
            # A stand-in when it is missing: that is reported, and no Config is returned.
            time_control=values["time_control"] or TimeControl.from_pgn("60"),
            black_time_control=values["black_time_control"],
            draw_odds=values["draw_odds"],
            variant=values["variant"] or "standard",
            dgt_mode=values["dgt_mode"],
            default_time=default_time,
            default_time_warning=_DEFAULT_WARNING if warning is None else warning,
        )

    def with_pairings(self, sections: tuple[Section, ...]) -> tuple[Section, ...]:
        """Each section with its pairing: its own, or ``[pairing]`` for a single section."""
        shared = self.tables.pairing
        own = (
            [None] * len(sections)
            if self.tables.sections is None
            else [table.pairing for table in self.tables.sections]
        )
        if shared is not None and len(sections) > 1:
            self.problems.append(
                "pairing: one TRF is one tournament: with several [[sections]] give each its"
                " own [sections.pairing]"
            )
            shared = None
        return tuple(
            replace(section, pairing=self._pairing(table or shared, section.event.round, where))
            for index, (section, table) in enumerate(zip(sections, own, strict=True), 1)
            for where in [f"sections[{index}].pairing" if table is not None else "pairing"]
        )

    def _pairing(
        self, pairing: PairingConfig | None, round_number: int, where: str
    ) -> PairingConfig | None:
        if pairing is None:
            return None
        trf = self._resolve(pairing.trf)
        pairings = None if pairing.pairings is None else self._resolve(pairing.pairings)
        resolved = pairing.model_copy(update={"trf": trf, "pairings": pairings})
        if pairings is None:
            self.problems.append(
                f"{where}.pairings: required with [pairing] (the pairing program's output for"
                " this round): without it no confirmed result would reach the TRF"
            )
        for key, path in (("trf", trf), ("pairings", resolved.pairings_for(round_number))):
            if path is not None and not path.is_file():
                self.problems.append(f"{where}.{key}: no such file: {path}")
        return resolved
