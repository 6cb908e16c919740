"""What the journal holds and hands back: entries, records, the round identity, and its errors.

Pure values, used by :mod:`daemon.journal.store` (which exports them too) and its readers.

Exceptions::

    JournalError        the file cannot be used as this round's journal
     +-- JournalDamaged the records cannot be trusted from record ``seq`` on
     +-- JournalLocked  another process holds the journal
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "Entry",
    "JournalDamaged",
    "JournalEntry",
    "JournalError",
    "JournalLocked",
    "JournalMissing",
    "Record",
    "RoundIdentity",
]


class JournalError(Exception):
    """The file cannot be used as a journal (not SQLite, not ours, too new, unwritable)."""


class JournalDamaged(JournalError):
    """The journal's records cannot be trusted from record ``seq`` on."""

    def __init__(self, path: str, seq: int, why: str) -> None:
        self.seq = seq
        super().__init__(f"{path}: journal damaged at record {seq} ({why})")


class JournalLocked(JournalError):
    """Another process (a second daemon) has the journal open for writing."""


class JournalMissing(JournalError):
    """No journal to read yet: no file, or one a daemon has only begun to create."""


class JournalEntry(Protocol):
    """Anything that can be appended: a board, a kind, a time and a JSON payload."""

    @property
    def board(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def at(self) -> float: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """A record to append (see :meth:`Journal.append_many`)."""

    board: int
    kind: str
    at: float
    payload: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    """A record read back, with its global sequence number."""

    seq: int
    board: int
    kind: str
    at: float
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundIdentity:
    """What a journal belongs to: an event and the round each of its sections plays.

    Attributes:
        event: the event's name.
        rounds: the round of each section, by section name ("" in the one-event form).
    """

    event: str
    rounds: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> str:
        """The identity as stored in the journal."""
        return json.dumps({"event": self.event, "rounds": dict(sorted(self.rounds.items()))})

    @classmethod
    def from_json(cls, text: str) -> RoundIdentity:
        """The inverse of :meth:`to_json`."""
        data = json.loads(text)
        return cls(event=str(data["event"]), rounds={k: int(v) for k, v in data["rounds"].items()})

    def describe(self) -> str:
        """``event "X", round 3`` or ``event "X", sections A round 3 and B round 2``."""
        rounds = set(self.rounds.values())
        if len(rounds) == 1 and (len(self.rounds) == 1 or "" in self.rounds):
            return f'event "{self.event}", round {rounds.pop()}'
        parts = [f"{name or '(main)'} round {n}" for name, n in sorted(self.rounds.items())]
        return f'event "{self.event}", sections ' + " and ".join(parts)
