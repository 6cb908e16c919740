"""A lichess refusal as an arbiter alert (``lichess_refused``), for a daemon or a relay.

A refusal (401 bad token, 403 not a contributor, 404 no such round) stops the pushes to
that lichess round (:class:`~broadcast.outputs.lichess_push.LichessPusher`); the alert says what
lichess answered and how to go on, and acknowledging it resumes the round's pushes.
"""

from __future__ import annotations

from collections.abc import Callable

from broadcast.feed.alerts import Alert, AlertKind
from broadcast.outputs.lichess import Refusal
from broadcast.outputs.output_alerts import OutputAlerts

__all__ = ["ACK_TO_RESUME", "raise_refusal_alert"]

#: How an acknowledgement resumes the pushes; ends every refusal alert's action.
ACK_TO_RESUME = "fix it on lichess and acknowledge this alert to push again"


def raise_refusal_alert(
    alerts: OutputAlerts,
    refusal: Refusal,
    resume: Callable[[str], object],
    *,
    fix: str,
) -> Alert:
    """Raise ``lichess_refused`` for ``refusal``; its acknowledgement calls ``resume``.

    Args:
        fix: what else mends it, before :data:`ACK_TO_RESUME` (e.g. "save a new token").
    """
    return alerts.raise_alert(
        AlertKind.LICHESS_REFUSED,
        {"round_id": refusal.round_id, "status": refusal.status, "message": refusal.message},
        f"lichess refused round {refusal.round_id} ({refusal.status}: {refusal.message}):"
        f" {fix}, or {ACK_TO_RESUME}",
        on_ack=lambda: resume(refusal.round_id),
    )
