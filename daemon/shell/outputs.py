"""The daemon's outputs, built from the configuration by one table of kinds (layer L4).

:data:`KINDS` is the daemon's table (:class:`~broadcast.outputs.kinds.OutputKind`): the
kinds it shares with a relay (:data:`~broadcast.outputs.kinds.PGN_FOLDER`,
:data:`~broadcast.outputs.kinds.WEBHOOK`), from the settings of daemon/links/settings.py,
and its own: MQTT (boards, results and arbiter commands, and the past rounds relays
serve), its lichess link (which reads its file again), the LiveChess API and PGN folder,
and the engine's analysis (after MQTT: its evaluations go there too).
:class:`DaemonOutputs` starts them when the daemon runs; :func:`claim_boards` asks the
broker at start whether another live daemon owns the boards or sections (a signed claim
refuses the start, any other is told the arbiters: :func:`claimed_alert`).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from broadcast.feed.alerts import AlertKind
from broadcast.feed.archive import RoundArchive
from broadcast.feed.messages import BoardState
from broadcast.outputs.kinds import (
    PGN_FOLDER,
    WEBHOOK,
    Feeds,
    NamedJob,
    OutputKind,
    OutputSettings,
    start_outputs,
)
from broadcast.outputs.mqtt import MqttPublisher
from broadcast.outputs.mqtt_client import MqttSettings, exposure
from broadcast.outputs.mqtt_wire import Ownership
from broadcast.outputs.output_alerts import OutputAlerts
from broadcast.relay.ownership import check_ownership
from broadcast.relay.remote import CommandListener
from daemon.config.model import Config, ConfigError
from daemon.links.analysis import AnalysisLink, analysis_settings
from daemon.links.lichess import LichessLink
from daemon.links.livechess import livechess_folder
from daemon.links.section_topics import SectionTopics
from daemon.links.settings import mqtt_settings, output_settings
from daemon.links.standings import StandingsRoutes
from daemon.round.core import RoundCore
from daemon.shell.service import RoundService

if TYPE_CHECKING:  # imported when [livechess] turns it on
    from broadcast.livechess.server import LiveChessServer

__all__ = ["KINDS", "DaemonOutputs", "claim_boards", "claimed_alert"]

log = logging.getLogger(__name__)


class DaemonOutputs:
    """The daemon's outputs: :meth:`jobs` builds them from :data:`KINDS`.

    Args:
        config: the round's configuration.
        service: the round service (MQTT's commands, the outputs' alerts).
        feeds: the hubs the outputs follow, and where they raise their alerts.
        core: the round (the boards MQTT announces, each section's round).
        archive / standings: past rounds and standings, which MQTT keeps for relays.
        livechess: the LiveChess API, made before the daemon listens (None: off).
    """

    def __init__(
        self,
        config: Config,
        service: RoundService,
        feeds: Feeds,
        *,
        core: RoundCore,
        archive: RoundArchive,
        standings: StandingsRoutes,
        livechess: LiveChessServer | None = None,
    ) -> None:
        self.config = config
        self.service = service
        self.feeds = feeds
        self.core = core
        self.archive = archive
        self.standings = standings
        self.livechess = livechess
        #: The settings of the kinds a relay runs too (set by :meth:`jobs`).
        self.settings = OutputSettings()
        #: The MQTT publisher (``[mqtt]``), to announce the boards a new round adds.
        self.mqtt: MqttPublisher | None = None
        #: The lichess push (None without [[lichess]]).
        self.lichess: LichessLink | None = None
        #: The engine's analysis of public positions (``[analysis]``).
        self.analysis: AnalysisLink | None = None

    def jobs(self) -> list[NamedJob]:
        """Build every configured output; its jobs, by name (run once, as the daemon runs)."""
        self.settings = output_settings(self.config)
        return start_outputs(KINDS, self, self.feeds)

    def announce(self) -> None:
        """Tell the broker every board the round has (and the sections) is this daemon's."""
        if self.mqtt is not None:
            boards = self.core.games
            self.mqtt.announce(_ownership(self.config, self.mqtt.topics.daemon_id, boards))

    def take_result(self, state: BoardState, result: Mapping[str, Any]) -> None:
        """A result decision: a final one goes to the broker."""
        if self.mqtt is not None and state.result_final:
            self.mqtt.publish_result(state)

    def section_topics(self, mqtt: MqttPublisher) -> SectionTopics:
        """Past rounds and standings on the broker, for relays (as this server shows them)."""
        server = self.config.server
        return SectionTopics(
            mqtt.publish_retained,
            mqtt.topics,
            self.archive,
            self.standings,
            lambda: {section.name: section.event.round for section in self.core.config.sections},
            delay=float(server.public_delay),
            results=server.results,
        )


def _mqtt(outputs: DaemonOutputs, feeds: Feeds) -> list[NamedJob]:
    config = outputs.config
    if config.mqtt is None or not config.mqtt.enabled:
        return []
    broker = _mqtt_settings(config)
    if (open_to := exposure(broker)) is not None:
        log.warning("= %s", open_to)
    outputs.mqtt = mqtt = MqttPublisher(broker, results=config.server.results)
    outputs.announce()
    journal = Path(outputs.service.journal.path)  # the commands carried out, kept beside it
    seen = journal.with_name(journal.stem + "-commands.json")
    listener = CommandListener(broker, outputs.service, seen_file=seen)
    sections = outputs.section_topics(mqtt)
    return [
        ("the MQTT commands", listener.run),
        ("the MQTT output", functools.partial(mqtt.serve, feeds.hub)),
        ("the relays' rounds", functools.partial(sections.serve, feeds.public)),
    ]


def _lichess(outputs: DaemonOutputs, feeds: Feeds) -> list[NamedJob]:
    if not outputs.config.lichess:
        return []
    outputs.lichess = LichessLink(outputs.config, feeds.alerts)
    return [("the lichess push", functools.partial(outputs.lichess.serve, feeds.public))]


def _livechess(outputs: DaemonOutputs, feeds: Feeds) -> list[NamedJob]:
    jobs: list[NamedJob] = []
    if outputs.livechess is not None:
        jobs.append(("the LiveChess API", outputs.livechess.serve))
    if (folder := livechess_folder(outputs.config)) is not None:
        jobs.append(("the LiveChess PGN folder", functools.partial(folder.serve, feeds.public)))
    return jobs


def _analysis(outputs: DaemonOutputs, feeds: Feeds) -> list[NamedJob]:
    if (analysis := analysis_settings(outputs.config.analysis)) is None:
        return []
    also = () if outputs.mqtt is None else (outputs.mqtt.publish_evaluation,)
    outputs.analysis = AnalysisLink(feeds.public, analysis, also)
    return [("the engine analysis", outputs.analysis.serve)]


def _shared(kind: OutputKind[OutputSettings]) -> OutputKind[DaemonOutputs]:
    """A kind a relay runs too, from the daemon's settings of it."""

    def start(outputs: DaemonOutputs, feeds: Feeds) -> list[NamedJob]:
        return kind.start(outputs.settings, feeds)

    return OutputKind(kind.key, start)


#: The daemon's outputs, in the order they start.
KINDS: tuple[OutputKind[DaemonOutputs], ...] = (
    OutputKind("mqtt", _mqtt),
    OutputKind("lichess", _lichess),  # not the relay's push: this one reads its file again
    _shared(PGN_FOLDER),
    OutputKind("livechess", _livechess),
    OutputKind("analysis", _analysis),  # after MQTT: its evaluations go there too
    _shared(WEBHOOK),
)


def _mqtt_settings(config: Config) -> MqttSettings:
    assert config.mqtt is not None
    return mqtt_settings(config.mqtt)


def _ownership(config: Config, daemon_id: str, boards: Iterable[int]) -> Ownership:
    """``boards`` (the round's, which a new round may add to) and the named sections."""
    sections = tuple(section.name for section in config.sections if section.name)
    return Ownership(
        daemon_id=daemon_id, boards=tuple(sorted(boards)), sections=sections, at=time.time()
    )


async def claim_boards(config: Config) -> list[str]:
    """Ask the broker whether another live daemon owns these boards or sections.

    Runs before the daemon opens or serves anything, for a bounded time. An unreachable
    broker is no clash: it is logged.

    Returns:
        What the arbiters are told (:func:`claimed_alert`): any claim, without an event
        key (it may be forged: it never stops the daemon), and a live daemon with the
        same id.

    Raises:
        ConfigError: one line per clash with a claim signed with the event key, which
            only a daemon of the event can make (docs/deployment.md).
    """
    if config.mqtt is None or not config.mqtt.enabled:
        return []
    settings = _mqtt_settings(config)
    boards = (board.number for board in config.boards)
    claims = await check_ownership(settings, _ownership(config, settings.daemon_id, boards))
    if claims is None:
        return []
    if claims.refusing:
        raise ConfigError([f"{config.source}: {line}" for line in claims.refusing])
    for line in claims.lines:
        log.warning("= %s", line)
    return claims.lines


def claimed_alert(alerts: OutputAlerts, lines: list[str]) -> None:
    """Tell the arbiters that another daemon claims this one's boards (it serves them)."""
    action = (
        f"{'; '.join(lines)}. This daemon serves its boards all the same. Without an"
        " [mqtt] event_key anyone who may write to the broker can forge such a claim; if no"
        " other daemon runs these boards, set one (docs/deployment.md, 'The event key'),"
        " else stop one of the two daemons"
    )
    alerts.raise_alert(AlertKind.BOARDS_CLAIMED, {"claims": lines}, action)
