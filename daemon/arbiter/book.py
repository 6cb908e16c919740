"""Every alert the engine raised, each with its life cycle (pure; docs/alerts.md).

An alert is *open* while its condition holds (or while the decision it asks for is not
made) and *resolved* once the condition cleared (or the decision was made). The
:class:`AlertBook` keeps one open alert per *condition* (the kind, the board and, for a
few kinds, a scope such as the colour whose increment is wrong): a draft for a condition
that is open already updates that alert instead of raising another; a draft whose
*episode* was raised before is dropped (the inputs repeat themselves). Every new version
of an alert (raised, updated, acknowledged, resolved) is recorded through ``record`` for
the journal and drained by :meth:`AlertBook.changed` for the broadcast.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from broadcast.feed.alerts import BY_ARBITER, BY_DGTCAST, Alert, AlertKind
from broadcast.feed.messages import to_json_dict
from daemon.arbiter.results import CommandRefused
from daemon.arbiter.watch import AlertDraft, Condition, Episode

__all__ = ["AlertBook", "Record"]

#: Called with (board, at, payload) for each new version of an alert.
Record = Callable[[int, float, dict[str, Any]], None]


class AlertBook:
    """The alerts, their open conditions and the episodes raised already."""

    def __init__(self, record: Record) -> None:
        self._record = record
        self._alerts: dict[int, Alert] = {}
        self._open: dict[Condition, int] = {}
        self._episodes: set[Episode] = set()
        self._next_id = 1
        self._changed: list[Alert] = []

    # -- changes ---------------------------------------------------------------------------

    def raise_draft(self, board: int, at: float, draft: AlertDraft) -> bool:
        """Raise ``draft``, or update the open alert of its condition; True when either."""
        if draft.episode in self._episodes:
            return False
        self._episodes.add(draft.episode)
        condition = (draft.kind.value, board, *draft.scope)
        open_id = self._open.get(condition)
        if open_id is None:
            alert = Alert.raised(
                id=self._next_id,
                kind=draft.kind,
                board=board,
                at=at,
                details=draft.details,
                action=draft.action,
            )
            self._next_id += 1
            self._open[condition] = alert.id
        else:
            before = self._alerts[open_id]
            if (before.details, before.action) == (draft.details, draft.action):
                return True
            alert = before.updated(at, draft.details, draft.action, draft.update_note)
        self._store(alert, at)
        return True

    def resolve(
        self,
        board: int,
        kinds: Collection[AlertKind],
        at: float,
        note: str,
        *,
        by: str = BY_DGTCAST,
        scope: tuple[Any, ...] | None = None,
    ) -> list[Alert]:
        """Resolve the board's open alerts of ``kinds`` (only ``scope`` if given)."""
        names = {kind.value for kind in kinds}
        done = []
        for condition, alert_id in list(self._open.items()):
            kind, number, *rest = condition
            if number != board or kind not in names or scope not in (None, tuple(rest)):
                continue
            del self._open[condition]
            alert = self._alerts[alert_id].resolve(at, note, by)
            self._store(alert, at)
            done.append(alert)
        return done

    def acknowledge(self, alert_id: int, at: float) -> Alert:
        """An arbiter saw the alert (it stays open while its condition holds).

        Raises:
            CommandRefused: no such alert.
        """
        alert = self._alerts.get(alert_id)
        if alert is None:
            raise CommandRefused(f"no alert {alert_id}")
        acked = alert.acknowledge(at, BY_ARBITER)
        if acked is not alert:
            self._store(acked, at)
        return acked

    def forget_episodes(self, keep: Callable[[Episode], bool]) -> None:
        """Drop the episodes ``keep`` rejects: they may be raised again."""
        self._episodes = {episode for episode in self._episodes if keep(episode)}

    def _store(self, alert: Alert, at: float) -> None:
        self._alerts[alert.id] = alert
        self._changed.append(alert)
        self._record(alert.board, at, {"alert": to_json_dict(alert)})

    # -- reading -----------------------------------------------------------------------------

    def changed(self) -> list[Alert]:
        """Drain the new versions of alerts since the last call, in order."""
        changed, self._changed = self._changed, []
        return changed

    def open_alert(self, board: int, kind: AlertKind) -> Alert | None:
        """The board's open alert of ``kind`` without a scope, if any."""
        alert_id = self._open.get((kind.value, board))
        return None if alert_id is None else self._alerts[alert_id]

    def open_of(self, board: int) -> Iterable[Alert]:
        """The board's open alerts."""
        return [self._alerts[i] for (_, number, *_), i in self._open.items() if number == board]

    @property
    def alerts(self) -> list[Alert]:
        """Every alert raised, in its latest version, oldest first."""
        return [self._alerts[i] for i in sorted(self._alerts)]
