"""The daemon's lichess push: targets from the configuration, refusals as arbiter alerts.

A refusal (401 bad token, 403 not a contributor, 404 no such round) stops the pushes to
that lichess round and raises a ``lichess_refused`` alert with lichess's message. The
push resumes when the arbiter

* acknowledges the alert (on the arbiter page, or ``ack_alert`` from a relay): after
  fixing it on lichess (a new round, the account made a contributor), or
* saves the configuration file with a new ``token`` or new round ids: the daemon reads
  its ``[[lichess]]`` tables again within :data:`WATCH_INTERVAL` seconds, without a
  restart (a file with problems is reported in one line per problem and ignored), and
  the alert resolves (if lichess still refuses, that is a new alert).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path

from broadcast.feed.alerts import AlertKind
from broadcast.feed.hub import Hub
from broadcast.outputs.lichess import Refusal
from broadcast.outputs.lichess_push import LichessPusher
from broadcast.outputs.lichess_refusal import raise_refusal_alert
from broadcast.outputs.output_alerts import OutputAlerts
from daemon.config.lichess import lichess_targets
from daemon.config.model import Config, ConfigError, load_config

__all__ = ["REFUSAL_FIX", "WATCH_INTERVAL", "LichessLink"]

log = logging.getLogger(__name__)

#: Seconds between two looks at the configuration file.
WATCH_INTERVAL = 2.0
#: What mends a lichess refusal on a daemon, besides lichess itself.
REFUSAL_FIX = "fix the token or the round id in the configuration and save it"


class LichessLink:
    """The push, its alerts and the configuration watch; :meth:`serve` runs them."""

    def __init__(
        self,
        config: Config,
        alerts: OutputAlerts,
        *,
        load: Callable[[Path], Config] = load_config,
        watch_interval: float = WATCH_INTERVAL,
    ) -> None:
        self.pusher = LichessPusher(lichess_targets(config.lichess), on_refusal=self._refused)
        self._alerts = alerts
        self._source = config.source
        self._tables = config.lichess
        self._load = load
        self._watch_interval = watch_interval

    async def serve(self, public: Hub) -> None:
        """Push the public boards and watch the configuration, until cancelled."""
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(self.pusher.serve(public))
            tasks.create_task(self._watch())

    def _refused(self, refusal: Refusal) -> None:
        raise_refusal_alert(self._alerts, refusal, self.pusher.resume, fix=REFUSAL_FIX)

    async def _watch(self) -> None:
        stamp = _stamp(self._source)
        while True:
            await asyncio.sleep(self._watch_interval)
            now = _stamp(self._source)
            if now != stamp:
                stamp = now
                await self._reload()

    async def _reload(self) -> None:
        try:
            config = await asyncio.to_thread(self._load, self._source)
        except ConfigError as exc:
            for problem in exc.problems:
                log.warning("= lichess settings not reloaded: %s", problem)
            return
        if config.lichess != self._tables:
            self._tables = config.lichess
            log.info("= lichess: %d [[lichess]] tables read again", len(config.lichess))
            self.pusher.replace_targets(lichess_targets(config.lichess))
            note = "the lichess settings were saved again: pushing again"
            self._alerts.resolve(AlertKind.LICHESS_REFUSED, note)  # a new refusal: a new alert


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size
