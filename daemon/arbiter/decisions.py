"""What the alert engine is given and what it hands out: every board's rules, decisions.

:class:`AlertSettings` come from the configuration; each :class:`Decision` is a record
for the journal (a new version of an alert, or a result).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from daemon.arbiter.watch import BoardRules
from daemon.config.model import Config

__all__ = ["DECISION_KINDS", "AlertSettings", "Decision"]

#: Journal kinds of the decision records: each new version of an alert, each result.
DECISION_KINDS = frozenset({"alert", "result"})


@dataclass(frozen=True, slots=True, kw_only=True)
class AlertSettings:
    """Every board's rules, and the slack of the clock checks (readings are whole seconds)."""

    boards: Mapping[int, BoardRules]
    clock_tolerance: float = 1.0

    @classmethod
    def from_config(cls, config: Config) -> AlertSettings:
        """The rules of every configured board, from its section's event."""
        boards = {}
        for section in config.sections:
            event = section.event
            for board in section.boards:
                boards[board.number] = BoardRules.of_event(
                    event, has_eboard=board.has_eboard, section=section.name
                )
        return cls(boards=boards)


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """A record for the journal (it fits :class:`daemon.journal.store.JournalEntry`)."""

    board: int
    kind: str
    at: float
    payload: Mapping[str, Any]
