"""POST each arbiter alert as JSON to a configured URL (a chat bot, a pager, a phone app).

Alerts wait in a bounded queue and are delivered one at a time, in order, by
:meth:`AlertWebhook.run`; :meth:`AlertWebhook.publish_alert` never blocks the daemon. Each
alert gets at most ``max_attempts`` tries with capped backoff (at least the server's
``Retry-After`` on 429/503); a refusal (4xx other than 408/425/429) is not repeated.

Each version of an alert is POSTed: raised, updated, acknowledged, resolved (docs/alerts.md,
"Life cycle"). The body is the alert's wire form (``broadcast/feed/alerts.py``
:func:`~broadcast.feed.alerts.alert_to_json`)::

    {"type": "alert", "id": 7, "kind": "flag_fall", "board": 3, "at": 1782259200.0,
     "details": {...}, "action": "...", "state": "open", "acknowledged": false,
     "history": [{"step": "raised", "at": 1782259200.0, "by": "dgtcast", "note": ""}]}

A receiver may get a version twice (its reply was lost, so it was sent again): ``id``
and the length of ``history`` tell duplicates apart.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from base.backoff import Backoff, BackoffPolicy
from broadcast.feed.alerts import Alert, alert_to_json
from broadcast.outputs.outgoing import (
    Outcome,
    PostFailed,
    classify_status,
    new_client,
    parse_retry_after,
    post,
)
from broadcast.outputs.output import HubOutput, WorkLoop
from broadcast.outputs.urls import check_url

if TYPE_CHECKING:
    import httpx

    from broadcast.feed.hub import Hub

__all__ = ["AlertWebhook", "WebhookSettings", "alert_body"]

log = logging.getLogger(__name__)

_REMEMBERED_IDS = 10_000  # alert ids remembered to send each version once


#: The default retry timing (seconds).
_WEBHOOK_RETRY = BackoffPolicy(initial=1.0, maximum=30.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookSettings:
    """Where alerts go and how hard to try.

    Attributes:
        url: an ``http://`` or ``https://`` URL.
        headers: extra request headers (for example ``Authorization``).
        max_attempts: tries per alert before it is given up (logged as an error).
        max_pending: alerts kept while the receiver is away; beyond, the oldest is dropped.
        time_limit: seconds for one whole request.
        retry: the delays between tries of one alert.
    """

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    max_attempts: int = 5
    max_pending: int = 1000
    time_limit: float = 10.0
    retry: BackoffPolicy = _WEBHOOK_RETRY

    def __post_init__(self) -> None:
        check_url(self.url)
        if any("\r" in k + v or "\n" in k + v for k, v in self.headers.items()):
            raise ValueError("webhook headers cannot contain line breaks")
        if self.max_attempts < 1 or self.max_pending < 1:
            raise ValueError("max_attempts and max_pending must be at least 1")


def alert_body(alert: Alert) -> bytes:
    """The JSON body POSTed for ``alert``."""
    data = alert_to_json(alert)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


class AlertWebhook(HubOutput):
    """Delivers alerts to one URL; run :meth:`run` as a task."""

    def __init__(
        self,
        settings: WebhookSettings,
        *,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._settings = settings
        self._wall_clock = wall_clock
        self._pending: collections.deque[Alert] = collections.deque()
        self._work = WorkLoop()
        self.delivered = 0
        self.given_up = 0
        self.dropped = 0

    @property
    def pending(self) -> int:
        """Alerts waiting for delivery (not counting the one being tried)."""
        return len(self._pending)

    def publish_alert(self, alert: Alert) -> None:
        """Queue ``alert`` for delivery; drops the oldest waiting one if the queue is full."""
        if len(self._pending) >= self._settings.max_pending:
            lost = self._pending.popleft()
            self.dropped += 1
            log.error("= webhook queue full: alert %d (%s) dropped", lost.id, lost.kind)
        self._pending.append(alert)
        self._work.wake()

    async def wait_idle(self) -> None:
        """Wait until every queued alert was delivered or given up (a flush at shutdown)."""
        await self._work.wait_idle()

    async def follow(self, hub: Hub) -> None:
        """Queue each new version of an alert of ``hub`` (raised, updated, acknowledged,
        resolved; versions that follow each other at once may come as the latest only).

        Alerts still open when following starts are sent too (after a daemon restart,
        a receiver may get them a second time).
        """
        seen: collections.OrderedDict[int, int] = collections.OrderedDict()
        async with hub.subscribe(alerts=True) as subscription:
            self._publish_unseen(hub.open_alerts(), seen)
            async for update in subscription:
                self._publish_unseen(update.alerts, seen)

    def _publish_unseen(
        self, alerts: Iterable[Alert], seen: collections.OrderedDict[int, int]
    ) -> None:
        for alert in alerts:
            version = len(alert.history)
            if seen.get(alert.id, -1) < version:
                seen[alert.id] = version
                seen.move_to_end(alert.id)
                if len(seen) > _REMEMBERED_IDS:
                    seen.popitem(last=False)
                self.publish_alert(alert)

    async def run(self) -> None:
        """Deliver alerts until cancelled; failures are logged, never raised."""
        async with new_client() as client:

            async def step() -> bool:
                if not self._pending:
                    return False
                await self._deliver(client, self._pending.popleft())
                return True

            await self._work.run(step)

    async def _deliver(self, client: httpx.AsyncClient, alert: Alert) -> None:
        """Try ``alert`` up to ``max_attempts`` times."""
        settings = self._settings
        backoff = Backoff(settings.retry)
        for attempt in range(1, settings.max_attempts + 1):
            outcome, retry_after = await self._attempt(client, alert, attempt)
            if outcome is Outcome.DELIVERED:
                self.delivered += 1
                return
            if outcome is Outcome.REFUSED:
                break
            if attempt < settings.max_attempts:
                await asyncio.sleep(backoff.next_delay(retry_after))
        self.given_up += 1
        log.error("= webhook gave up alert %d (%s, board %d)", alert.id, alert.kind, alert.board)

    async def _attempt(
        self, client: httpx.AsyncClient, alert: Alert, attempt: int
    ) -> tuple[Outcome, float | None]:
        """One POST; returns how it went and the server's Retry-After, if any."""
        url = self._settings.url
        log.info("> POST %s alert %d (%s) try %d", url, alert.id, alert.kind, attempt)
        headers = {"Content-Type": "application/json", **self._settings.headers}
        try:
            reply = await post(
                client,
                url,
                alert_body(alert),
                headers=headers,
                time_limit=self._settings.time_limit,
            )
        except PostFailed as exc:
            log.warning("< webhook alert %d failed: %s", alert.id, exc)
            return Outcome.RETRY, None
        outcome = classify_status(reply.status)
        log_level = logging.INFO if outcome is Outcome.DELIVERED else logging.WARNING
        log.log(log_level, "< webhook alert %d: %d %s", alert.id, reply.status, reply.reason)
        return outcome, parse_retry_after(reply.retry_after, self._wall_clock())
