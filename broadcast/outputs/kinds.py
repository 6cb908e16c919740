"""The kinds of output: one table from a configuration key to how that output runs.

An output follows a hub until cancelled: the public one (boards as spectators see them)
or the live one (alerts as they happen). :class:`OutputKind` names the configuration
table an output comes from and turns a program's settings into its named jobs (none when
the table is absent). The kinds here start from :class:`OutputSettings`, which hold only
the broadcast layer's settings: a relay (broadcast/relay/server.py) starts :data:`SHARED`,
a daemon's table (daemon/shell/outputs.py) lists :data:`PGN_FOLDER` and :data:`WEBHOOK`
beside kinds of its own (MQTT, its lichess link that reads its file again, the LiveChess
API, the engine analysis). A new output is one entry (here, or in the daemon's table),
its module, its configuration table and its settings.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from broadcast.feed.hub import Hub
from broadcast.outputs.lichess import LichessTarget, Refusal
from broadcast.outputs.lichess_push import LichessPusher
from broadcast.outputs.lichess_refusal import raise_refusal_alert
from broadcast.outputs.output_alerts import OutputAlerts
from broadcast.outputs.pgn_folder import PgnFolderSettings, PgnFolderWriter
from broadcast.outputs.webhook import AlertWebhook, WebhookSettings

__all__ = [
    "LICHESS",
    "PGN_FOLDER",
    "SHARED",
    "WEBHOOK",
    "Feeds",
    "Job",
    "NamedJob",
    "OutputKind",
    "OutputSettings",
    "start_outputs",
]

#: A part of a program, started (again) by calling it.
Job = Callable[[], Coroutine[Any, Any, None]]
#: A job and the name it goes by in logs and alerts ("the PGN folder").
NamedJob = tuple[str, Job]

C = TypeVar("C")


@dataclass(frozen=True, slots=True, kw_only=True)
class Feeds:
    """What an output follows, and where it raises alerts of its own.

    Attributes:
        hub: the live hub (every board and alert as it happens).
        public: the spectators' hub (the public delay, results as the public sees them).
        alerts: the program's own alerts (a lichess refusal), acknowledged by the arbiter.
        refusal_fix: what mends a lichess refusal besides lichess itself.
    """

    hub: Hub
    public: Hub
    alerts: OutputAlerts
    refusal_fix: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputSettings:
    """The settings of the kinds of this module (empty or None: that output is off)."""

    lichess: tuple[LichessTarget, ...] = ()
    pgn_folder: PgnFolderSettings | None = None
    webhook: WebhookSettings | None = None


@dataclass(frozen=True, slots=True)
class OutputKind(Generic[C]):
    """One kind of output: its configuration key, and its jobs from settings ``C``."""

    key: str
    start: Callable[[C, Feeds], list[NamedJob]]


def start_outputs(kinds: Iterable[OutputKind[C]], settings: C, feeds: Feeds) -> list[NamedJob]:
    """The jobs of every kind that ``settings`` configures, in the order of ``kinds``."""
    return [job for kind in kinds for job in kind.start(settings, feeds)]


def _lichess(settings: OutputSettings, feeds: Feeds) -> list[NamedJob]:
    """The push of the public boards; a refusal is an alert whose acknowledgement resumes."""
    if not settings.lichess:
        return []

    def refused(refusal: Refusal) -> None:
        raise_refusal_alert(feeds.alerts, refusal, pusher.resume, fix=feeds.refusal_fix)

    pusher = LichessPusher(settings.lichess, on_refusal=refused)
    return [("the lichess push", functools.partial(pusher.serve, feeds.public))]


def _pgn_folder(settings: OutputSettings, feeds: Feeds) -> list[NamedJob]:
    if settings.pgn_folder is None:
        return []
    writer = PgnFolderWriter(settings.pgn_folder)
    return [("the PGN folder", functools.partial(writer.serve, feeds.public))]


def _webhook(settings: OutputSettings, feeds: Feeds) -> list[NamedJob]:
    if settings.webhook is None:
        return []
    webhook = AlertWebhook(settings.webhook)
    return [("the alert webhook", functools.partial(webhook.serve, feeds.hub))]


LICHESS = OutputKind("lichess", _lichess)  # ``[[lichess]]``
PGN_FOLDER = OutputKind("pgn_folder", _pgn_folder)  # ``[pgn_folder]``
WEBHOOK = OutputKind("webhook", _webhook)  # ``[webhook]``

#: The kinds a relay runs, in the order they start (a daemon's: daemon/shell/outputs.py).
SHARED: tuple[OutputKind[OutputSettings], ...] = (LICHESS, PGN_FOLDER)
