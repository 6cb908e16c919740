"""Alerts raised by the outputs (a lichess round that refuses our pushes), not by a board.

They are about the event (board 0), live only as long as the daemon (or relay) runs (a
restart tries the output again and raises them anew if the trouble is still there) and
are not journalled. A daemon's ids start at :data:`FIRST_ID`, far above its alert
engine's, so one ``ack_alert`` command serves both; a relay's start at
:data:`RELAY_FIRST_ID`, above every id it gives the daemons' alerts
(:mod:`broadcast.relay.routing`). Acknowledging one resolves it (docs/alerts.md) and
calls its ``on_ack`` (the lichess push resumes: the arbiter says the token or round is
fixed).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from broadcast.feed.alerts import BY_ARBITER, Alert, AlertKind
from broadcast.feed.commands import CommandReply
from broadcast.feed.hub import Hub
from broadcast.feed.messages import to_json_dict

__all__ = ["FIRST_ID", "RELAY_FIRST_ID", "OutputAlerts"]

#: The first id of a daemon's output alert.
FIRST_ID = 1_000_000
#: The first id of a relay's own output alert (below 2**53: exact in JavaScript).
RELAY_FIRST_ID = 1 << 52
_EVENT_BOARD = 0


class OutputAlerts:
    """The open output alerts, published on ``hub``; ids from ``first_id`` on."""

    def __init__(
        self, hub: Hub, wall_clock: Callable[[], float], *, first_id: int = FIRST_ID
    ) -> None:
        self._hub = hub
        self._wall_clock = wall_clock
        self._first_id = first_id
        self._ids = itertools.count(first_id)
        self._open: dict[int, tuple[Alert, Callable[[], object] | None]] = {}

    def owns(self, alert_id: int) -> bool:
        """Whether ``alert_id`` is an output alert's id."""
        return alert_id >= self._first_id

    def raise_alert(
        self,
        kind: AlertKind,
        details: dict[str, Any],
        action: str,
        on_ack: Callable[[], object] | None = None,
        *,
        board: int = _EVENT_BOARD,
    ) -> Alert:
        """Raise an alert about the event (or about ``board``: a fault in its session);
        ``on_ack`` runs when an arbiter acknowledges it."""
        alert = Alert.raised(
            id=next(self._ids),
            kind=kind,
            board=board,
            at=self._wall_clock(),
            details=details,
            action=action,
        )
        self._open[alert.id] = (alert, on_ack)  # logged by whoever shows alerts (the
        # console, or the alert log: daemon/shell/logs.py), once
        self._hub.publish_alert(alert)
        return alert

    def resolve(self, kind: AlertKind, note: str) -> list[Alert]:
        """The trouble of every open alert of ``kind`` is fixed (``note`` says how)."""
        done = []
        for alert_id, (alert, _) in list(self._open.items()):
            if alert.kind is kind:
                del self._open[alert_id]
                done.append(alert.resolve(self._wall_clock(), note))
                self._hub.publish_alert(done[-1])
        return done

    def acknowledge(self, alert_id: int) -> CommandReply:
        """The arbiter's ``ack_alert`` for an output alert."""
        entry = self._open.pop(alert_id, None)
        if entry is None:
            return CommandReply(
                ok=False, reason=f"alert {alert_id} is not open (resolved already, or unknown)"
            )
        alert, on_ack = entry
        at = self._wall_clock()
        note = "an arbiter acknowledged it" + (": the output tries again" if on_ack else "")
        settled = alert.acknowledge(at).resolve(at, note, BY_ARBITER)
        self._hub.publish_alert(settled)
        if on_ack is not None:
            on_ack()
        return CommandReply(ok=True, details={"alerts": [to_json_dict(settled)]})
