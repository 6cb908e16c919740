"""The daemon: every board of the round at once, under one task group (layer L4).

:class:`Daemon` opens the journal, replays it, starts the broadcast server and one
:class:`~daemon.shell.pipeline.BoardSession` per e-board, the timer loop and the optional
outputs (MQTT, lichess push, PGN folder, alert webhook), all as tasks of one
``asyncio.TaskGroup``. A board that fails, disconnects or sends garbage stays inside its
supervisor's retry loop; only bugs reach the task group.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import gc
import logging
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from base.backoff import BackoffPolicy
from broadcast.feed.alerts import AlertKind
from broadcast.feed.archive import RoundArchive
from broadcast.feed.commands import CommandReply, SetClocks
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from broadcast.livechess.server import LiveChessServer
from broadcast.outputs.mqtt import MqttPublisher
from broadcast.outputs.mqtt_client import MqttSettings, exposure
from broadcast.outputs.mqtt_wire import Ownership
from broadcast.outputs.output_alerts import OutputAlerts
from broadcast.outputs.pgn_folder import PgnFolderWriter
from broadcast.outputs.webhook import AlertWebhook, WebhookSettings
from broadcast.relay.ownership import check_ownership
from broadcast.relay.remote import CommandListener
from broadcast.web.listen import ListenError
from broadcast.web.rounds import RoundRoutes
from broadcast.web.server import BroadcastServer
from daemon.config.local_token import ArbiterToken, daemon_token
from daemon.config.model import (
    Config,
    ConfigError,
    ConfigFile,
    is_every_interface,
    weak_token_problem,
)
from daemon.game.state import TrackerSettings
from daemon.journal.identity import abandon_journal, open_round_journal
from daemon.journal.inputs import START
from daemon.journal.store import EVENT_BOARD, ROUND, Journal, checkpoint
from daemon.links.analysis import AnalysisLink, analysis_off, analysis_settings
from daemon.links.lichess import LichessLink
from daemon.links.livechess import livechess_folder, livechess_off, livechess_settings
from daemon.links.pairing import PairingLink, apply_pairings, last_decisions
from daemon.links.prizes import PrizeRoutes
from daemon.links.section_topics import SectionTopics
from daemon.links.settings import mqtt_settings, pgn_folder_settings
from daemon.links.standings import StandingsRoutes
from daemon.pairing import ResultHandoff
from daemon.round.core import RoundCore
from daemon.round.link_silence import BOARD_SILENCE
from daemon.round.snapshot import SnapshotPolicy, fingerprint
from daemon.shell.archive import ArchiveKeeper
from daemon.shell.board_check import warn_unanswered
from daemon.shell.clock_set import choose_clocks, clock_reply
from daemon.shell.faults import Faults, keep_running
from daemon.shell.limits import connection_limits, quiet_accept_errors, raise_open_file_limit
from daemon.shell.logs import log_alerts
from daemon.shell.pipeline import BoardSession, board_supervisor, read_memory
from daemon.shell.rounds import RoundKeeper
from daemon.shell.service import RoundService
from drivers.dgt.aio.supervisor import BoardSupervisor, SerialSightings
from drivers.dgt.device_core import DeviceTimeouts

__all__ = [
    "Daemon",
    "DaemonOptions",
    "claim_boards",
    "load_round_config",
    "unless_stopped",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: A part of the daemon, started (again) by calling it.
Job = Callable[[], Coroutine[Any, Any, None]]

#: Journal record kind noting when the daemon first started this round.
STARTED = "daemon_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class DaemonOptions:
    """Knobs for tests, demos and the command line.

    Attributes:
        tracker: game tracker timers.
        device_timeouts / backoff: the boards' links.
        set_clocks_at_start: set every e-board clock (mode 23) when the round starts.
        port: listen on this port instead of the configured one (0: a free port).
        livechess_port: the same for the LiveChess API (``[livechess]``).
        supervisors: ready-made supervisors by board number (tests, the demo).
        new_journal: when the configured journal belongs to another round, keep it and
            start this round's journal beside it (daemon/journal/identity.py).
        progress: shown a line while something long is read (the journal), then None
            (the live console, daemon/console/view.py).
        board_patience: seconds after start before e-boards without a link are reported
            (at WARNING, with the reason and the fix).
        snapshots: when the round's state is added to the journal (default policy: None).
        board_silence: seconds an e-board may stay unheard after the start before it is
            ``board_offline`` (daemon/round/link_silence.py).
        alert_log: every step of every alert as one log line (without the live console:
            :func:`daemon.shell.logs.log_alerts`).
    """

    tracker: TrackerSettings | None = None
    device_timeouts: DeviceTimeouts | None = None
    backoff: BackoffPolicy | None = None
    set_clocks_at_start: bool = False
    port: int | None = None
    livechess_port: int | None = None
    supervisors: dict[int, BoardSupervisor] = field(default_factory=dict)
    new_journal: bool = False
    demo: bool = False
    board_patience: float = 5.0
    snapshots: SnapshotPolicy | None = None
    board_silence: float = BOARD_SILENCE
    progress: Callable[[str | None], None] | None = None
    alert_log: bool = False


def load_round_config(
    file: ConfigFile, journal: Journal | None = None, now: dt.datetime | None = None
) -> Config:
    """Load the configuration; the default round date is that of the journal's first start.

    The daemon's start is never the round's start (without ``round_start`` the round
    starts when its section's first clock is started, docs/alerts.md); it only dates a
    round whose configuration names no date, and after a restart past midnight that date
    must not move. Before the first start, ``now`` (default: now) is the start, and the
    daemon notes that same time in the journal.

    Raises:
        ConfigError: one line per problem.
    """
    first = (
        None if journal is None else next(journal.records(board=EVENT_BOARD, kinds={STARTED}), None)
    )
    if first is None:
        return file.build(now)
    return file.build(dt.datetime.fromtimestamp(float(first.payload["at"])).astimezone())


class Daemon:
    """One round: journal, core, service, broadcast server and board sessions.

    Open it with ``await Daemon.open(path, options)``, bind its port with
    :meth:`start` (a busy port or an unknown host raises :class:`ListenError` at once),
    then :meth:`run` it until a stop event is set.
    """

    def __init__(
        self,
        config: Config,
        journal: Journal,
        options: DaemonOptions,
        handoffs: Mapping[str, ResultHandoff] | None = None,
        *,
        open_files: int | None = None,
    ) -> None:
        self.options = options
        self.journal = journal
        self.config = config
        #: Each section's TRF hand-off, by section name (``[pairing]``).
        self.pairings = {n: PairingLink(h, section=n) for n, h in (handoffs or {}).items()}
        self.hub = Hub()
        self.core = RoundCore(self.config, options.tracker)
        self.service = RoundService(
            self.core,
            self.journal,
            self.hub,
            fingerprint=fingerprint(config, options.tracker),
            snapshots=options.snapshots,
        )
        self.service.clock_setter = self.set_clocks
        self.rounds = RoundKeeper(self.core, self.service, self.pairings)
        self.rounds.listeners.append(self._round_changed)
        #: Past rounds for spectators (``/rounds.json``, ``/round/N.pgn``), from the journal.
        self.archive = RoundArchive()
        self.archive_keeper = ArchiveKeeper(self.archive, self.hub, self.service.writer)
        self.rounds.before_change.append(self.archive_keeper.keep)
        self.service.round_changer = lambda c: self.rounds.next_round(c.section, force=c.force)
        self.replayed = 0
        self._start_fed = False
        #: The arbiter token and where it comes from (the daemon's own on loopback).
        self.token: ArbiterToken | None = None
        #: When the daemon was opened (epoch seconds): the first start, if it is one.
        self.opened_at = time.time()
        server = self.config.server
        self.server = BroadcastServer(
            self.hub,
            self.service,
            host=server.host,
            port=server.port if options.port is None else options.port,
            arbiter_token=server.arbiter_token,
            delay=float(server.public_delay),
            allowed_origins=tuple(server.allowed_origins),
            limits=connection_limits(open_files, server.max_connections_per_client),
            results=server.results,
            public_hub=Hub() if analysis_settings(config.analysis) is not None else None,
        )
        self.server.routes.extra.append(
            RoundRoutes(
                self.archive,
                self.server.public_hub,
                delay=float(server.public_delay),
                results=server.results,
            )
        )
        self.standings = StandingsRoutes(
            self.pairings,
            self.server.public_hub,
            self._section_names,
            configured=self._configured_tiebreaks,
        )
        self.server.routes.extra.append(self.standings)
        if config.prizes:
            self.server.routes.extra.append(
                PrizeRoutes(
                    self.pairings, self.server.public_hub, self._section_names, config.prizes
                )
            )
        self.livechess = self._livechess()
        #: Bugs the daemon survives: logged once, one ``internal_error`` alert each.
        self.faults = Faults(self.service.output_alerts)
        self._sightings = SerialSightings()  # boards by serial on the same ports
        self.sessions = {
            board.number: BoardSession(
                board,
                self.service,
                self._supervisor(board.number),
                section=self.config.section_of(board.number),
            )
            for board in self.config.boards
            if board.has_eboard
        }
        for number, session in self.sessions.items():
            session.on_fault = functools.partial(self._session_fault, number)
            session.new_supervisor = functools.partial(self._supervisor, number, again=True)
        self.service.memory_reader = functools.partial(read_memory, self.sessions)
        #: The lichess push, once the outputs run (None without [[lichess]]).
        self.lichess: LichessLink | None = None
        #: The MQTT publisher (``[mqtt]``), to announce the boards a new round adds.
        self.mqtt: MqttPublisher | None = None
        #: The engine's analysis of public positions (``[analysis]``), once it runs.
        self.analysis: AnalysisLink | None = None
        if (off := analysis_off(config)) is not None:
            log.warning("= %s", off)

    @classmethod
    async def open(cls, config_path: str | os.PathLike[str], options: DaemonOptions) -> Daemon:
        """Read the configuration, claim the boards, open and replay the journal.

        Raises:
            ConfigError: a bad configuration, or boards another live daemon owns.
            JournalError: a journal that cannot be used.
            PairingFileError: a TRF or pairings file that cannot be used.
        """
        file = ConfigFile.read(config_path)  # read once: built again below from its data
        opened = dt.datetime.now().astimezone()
        first = file.build(opened)
        weak = None if options.demo else weak_token_problem(first)
        if weak is not None:
            raise ConfigError([weak])
        claimed = await claim_boards(first)
        journal = open_round_journal(first, new_journal=options.new_journal)
        try:
            config = load_round_config(file, journal, opened)
            moved = {
                str(r.payload["section"]) for r in journal.records(board=EVENT_BOARD, kinds={ROUND})
            }
            config, handoffs = apply_pairings(config, skip=moved)
            token = daemon_token(config)
            server = config.server.model_copy(update={"arbiter_token": token.value})
            config = replace(config, server=server)
            open_files = raise_open_file_limit()
            daemon = cls(config, journal, options, handoffs, open_files=open_files)
            daemon.opened_at = opened.timestamp()
            daemon.token = token
            daemon._replay()
            if claimed:
                claimed_alert(daemon.service.output_alerts, claimed)
        except BaseException:
            abandon_journal(journal)
            raise
        return daemon

    def _replay(self) -> None:
        show = self.options.progress
        if show is not None:
            path = self.journal.path
            show(f"reading {path}")
            self.service.replay_progress = lambda done, total: show(
                f"reading {path}: {done:,} of {total:,} records"
            )
        try:
            self.replayed = self.service.replay()
        finally:
            self.service.replay_progress = None
            if show is not None:
                show(None)
        self.rounds.restore_links(self.journal)
        self.rounds.record_start(self.journal)
        current = {section.name: section.event.round for section in self.core.config.sections}
        self.archive_keeper.load(self.journal, current)
        for number, game in self.core.games.items():
            if number in self.sessions:
                self.sessions[number].board = game.config
        self.service.result_listeners.append(self._result_to_trf)
        for link in self.pairings.values():  # results changed just before a stop
            link.align(last_decisions(self.journal, link))

    def _section_names(self) -> list[str]:
        return [section.name for section in self.core.config.sections]

    def _configured_tiebreaks(self, name: str) -> list[str]:
        """A section's ``[pairing] tiebreaks`` (none: empty)."""
        for section in self.core.config.sections:
            if section.name == name and section.pairing is not None:
                return section.pairing.tiebreaks or []
        return []

    @property
    def address(self) -> str:
        """Where this machine's browser reaches the daemon: ``http://host:port`` (the
        loopback address when it listens on every interface: no browser opens 0.0.0.0)."""
        host = self.config.server.host
        host = "127.0.0.1" if is_every_interface(host) else host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.server.port}"

    @property
    def pairing(self) -> PairingLink | None:
        """The TRF hand-off of the first section that has one (one-section events)."""
        return next(iter(self.pairings.values()), None)

    def _result_to_trf(self, state: BoardState, result: Mapping[str, Any]) -> None:
        link = self.pairings.get(state.section)
        if link is not None:
            link.receive_result(state.board, result)

    def _round_changed(self, section: str, round_number: int) -> None:
        for number, session in self.sessions.items():
            game = self.core.games[number]
            if game.section.name == section:
                session.board = game.config
                session.new_round()
        self._announce()  # the boards the round adds are this daemon's too

    def _section_topics(self, mqtt: MqttPublisher) -> SectionTopics:
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

    def _announce(self) -> None:
        """Tell the broker every board the round has (and the sections) is this daemon's."""
        if self.mqtt is not None:
            self.mqtt.announce(_ownership(self.config, self.mqtt.topics.daemon_id, self.core.games))

    def _livechess(self) -> LiveChessServer | None:
        settings = livechess_settings(self.config)
        if settings is None:
            if (off := livechess_off(self.config)) is not None:
                log.warning("= %s", off)
            return None
        if self.options.livechess_port is not None:
            settings = replace(settings, port=self.options.livechess_port)
        return LiveChessServer(self.server.public_hub, settings, policy=self.server.policy)

    def _note_start(self) -> None:
        """Note the first start: the time the configuration's default round start is."""
        if next(self.journal.records(board=EVENT_BOARD, kinds={STARTED}), None) is None:
            now = self.opened_at
            self.journal.append(EVENT_BOARD, STARTED, {"at": now}, now)

    def _supervisor(self, number: int, *, again: bool = False) -> BoardSupervisor:
        """The board's supervisor: the one given in the options, the first time; else
        one for the board's port or serial (``again``: after the last one failed)."""
        given = self.options.supervisors.get(number)
        if given is not None and not again:
            return given
        board = self.sessions[number].board if again else self.config.board(number)
        return board_supervisor(
            board,
            timeouts=self.options.device_timeouts,
            backoff=self.options.backoff,
            sightings=self._sightings,
        )

    async def start(self) -> None:
        """Listen on the configured address (idempotent); note the round's first start.

        A start that fails leaves the journal as it was: the round's default start time
        (FIDE 6.7) is the first start that served.

        Raises:
            ListenError: the address cannot be listened on (one line: address and why).
        """
        quiet_accept_errors(asyncio.get_running_loop())
        await self.server.start()
        if self.livechess is not None:
            try:
                await self.livechess.start()
            except ListenError:
                await self.server.close()
                raise
        if self.token is not None:
            self.token.save()  # serving: a new local token goes to its file now
        self._note_start()
        if not self._start_fed:  # every start: no e-board's link is known yet
            self._start_fed = True
            silence = {"silence": self.options.board_silence}
            self.service.receive(EVENT_BOARD, START, silence, time.time())
            _report_zero_default_time(self.config)
            # What the start-up built (the replayed round, the configuration, modules)
            # lives as long as the daemon: kept out of the collector's full passes, which
            # would otherwise walk it all, pausing every board (docs/performance.md).
            gc.collect()
            gc.freeze()
            if freeze_survivors not in gc.callbacks:
                gc.callbacks.append(freeze_survivors)

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set; then shut everything down cleanly.

        Starts listening first if :meth:`start` was not awaited (raising what it raises).
        """
        try:
            await self.start()
            async with self.server, asyncio.TaskGroup() as tasks:
                for coro in self._jobs():
                    tasks.create_task(coro)
                log.info("= serving on http://%s:%d/", self.config.server.host, self.server.port)
                await stop.wait()
                await asyncio.gather(*(s.stop() for s in self.sessions.values()))
                raise _Stop
        except* _Stop:
            self.service.take_snapshot()  # a clean stop: the next start replays nothing
        finally:
            with contextlib.suppress(ValueError):
                gc.callbacks.remove(freeze_survivors)
            self.service.commit_group()
            self.journal.close()

    def _session_fault(self, board: int, where: str, exc: BaseException) -> None:
        self.faults.report(where, board, exc, then="its session goes on from its state")

    def _jobs(self) -> list[Coroutine[Any, Any, None]]:
        """Every part of the daemon, each kept running on its own: a bug in one (a
        board's session, an output, the timers) is reported and that part restarted
        (daemon/shell/faults.py); it never ends the daemon."""
        jobs: list[tuple[str, int, Job]] = [("the round's timers", 0, self.service.run_timers)]
        jobs += [
            (f"board {number}'s session", number, session.run)
            for number, session in self.sessions.items()
        ]
        self.journal.checkpoint_elsewhere()
        checkpoints = functools.partial(checkpoint_journal, self.journal)
        jobs.append(("the journal's checkpoints", 0, checkpoints))
        jobs += self._outputs()
        if self.sessions:
            jobs.append(("the e-board check", 0, self._warn_unanswered))
        if self.options.set_clocks_at_start:
            jobs.append(("setting the clocks", 0, self._set_clocks_when_online))
        if self.options.alert_log:
            jobs.append(("the alert log", 0, functools.partial(log_alerts, self.hub)))
        return [keep_running(where, board, job, self.faults) for where, board, job in jobs]

    def _outputs(self) -> list[tuple[str, int, Job]]:
        config, public = self.config, self.server.public_hub
        jobs: list[tuple[str, int, Job]] = []
        if config.mqtt is not None and config.mqtt.enabled:
            broker = _mqtt_settings(config)
            if (open_to := exposure(broker)) is not None:
                log.warning("= %s", open_to)
            self.mqtt = mqtt = MqttPublisher(broker, results=config.server.results)
            self._announce()
            journal = Path(self.journal.path)  # the commands carried out, kept beside it
            seen = journal.with_name(journal.stem + "-commands.json")
            listener = CommandListener(broker, self.service, seen_file=seen)
            jobs.append(("the MQTT commands", 0, listener.run))
            self.service.result_listeners.append(lambda state, _: _publish_final(mqtt, state))
            jobs.append(("the MQTT output", 0, functools.partial(mqtt.serve, self.hub)))
            sections = self._section_topics(mqtt)
            jobs.append(("the relays' rounds", 0, functools.partial(sections.serve, public)))
        if config.lichess:
            self.lichess = LichessLink(config, self.service.output_alerts)
            jobs.append(("the lichess push", 0, functools.partial(self.lichess.serve, public)))
        if (folder := pgn_folder_settings(config.pgn_folder)) is not None:
            writer = PgnFolderWriter(folder)
            jobs.append(("the PGN folder", 0, functools.partial(writer.serve, public)))
        if self.livechess is not None:
            jobs.append(("the LiveChess API", 0, self.livechess.serve))
        if (livechess_pgn := livechess_folder(config)) is not None:
            pgn_job = functools.partial(livechess_pgn.serve, public)
            jobs.append(("the LiveChess PGN folder", 0, pgn_job))
        if (analysis := analysis_settings(config.analysis)) is not None:
            also = () if self.mqtt is None else (self.mqtt.publish_evaluation,)
            self.analysis = AnalysisLink(public, analysis, also)
            jobs.append(("the engine analysis", 0, self.analysis.serve))
        if config.webhook is not None:
            webhook = AlertWebhook(WebhookSettings(url=config.webhook.url))
            jobs.append(("the alert webhook", 0, functools.partial(webhook.serve, self.hub)))
        return jobs

    async def _warn_unanswered(self) -> None:
        await warn_unanswered(self.sessions, patience=self.options.board_patience)

    async def set_clocks(self, command: SetClocks | None = None) -> CommandReply:
        """Set the e-board clocks to their time control (arbiter ``set_clocks``): every
        one, or the board's or the section's that ``command`` names.

        Each clock set decides afresh who adds its increments (daemon/round/mode23.py).
        """
        sections = {n: self.core.games[n].section.name for n in self.sessions}
        chosen = choose_clocks(sections, command)
        if isinstance(chosen, str):
            return CommandReply(ok=False, reason=chosen)
        sessions = [(self.sessions[n], self.core.games[n].section) for n in chosen]
        return clock_reply(await asyncio.gather(*(s.set_clock(sec) for s, sec in sessions)))

    async def _set_clocks_when_online(self) -> None:
        """``--set-clocks``: each clock as soon as its e-board answers (a board missing
        holds no other back), unless its game is under way: a restart during the round
        keeps the clocks the players are using."""
        await asyncio.gather(*(self._set_clock_when_online(n) for n in self.sessions))

    async def _set_clock_when_online(self, number: int) -> None:
        await self.sessions[number].online.wait()
        if self.core.games[number].record.moves:
            log.info("= board %d: its game is under way, its clock is not set", number)
            return
        reply = await self.set_clocks(SetClocks(board=number))
        if reply.ok:
            log.info("= board %d: clock set at round start", number)
        else:
            log.warning("clock not set at round start: %s", reply.reason)


def _report_zero_default_time(config: Config) -> None:
    """Say once, at start, which sections have no default time (FIDE 6.7's zero)."""
    zero = [s.name or "the event" for s in config.sections if s.event.default_time <= 0]
    if zero:
        log.warning(
            "= %s: default time 0 (no default_time: FIDE 6.7's default when the regulations"
            " state none): a player absent when the clocks start loses, as the arbiter sees"
            " at the board; no late-arrival alert is raised",
            ", ".join(zero),
        )


def freeze_survivors(phase: str, info: Mapping[str, Any]) -> None:
    """After each full collection, freeze what survived it (a ``gc.callbacks`` entry).

    What outlived a full pass (the games as they grow, the hub's states) is what the
    next pass would walk again, at a pause that grows with the round; frozen, the next
    pass walks only what was made since (docs/performance.md, "The collector"). A cycle
    among frozen objects that later becomes garbage is not freed (a round's games live
    as long as the daemon); objects freed by their reference count are freed as before.
    """
    if phase == "stop" and info.get("generation") == 2:
        gc.freeze()


async def checkpoint_journal(journal: Journal, records: int = 5000, every: float = 1.0) -> None:
    """Checkpoint the journal's WAL from a thread once ``records`` more records were
    written (about what fills SQLite's thousand pages; looked at every ``every``
    seconds), until cancelled (:meth:`~daemon.journal.store.Journal.checkpoint_elsewhere`)."""
    done = journal.last_seq
    while True:
        await asyncio.sleep(every)
        last = journal.last_seq
        if last - done < records:
            continue
        try:
            await asyncio.to_thread(checkpoint, journal.path)
            done = last
        except sqlite3.Error as exc:  # busy, or a failing disk: the commits say so
            log.debug("= journal checkpoint not done: %s", exc)


def _publish_final(mqtt: MqttPublisher, state: BoardState) -> None:
    if state.result_final:
        mqtt.publish_result(state)


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


async def unless_stopped(work: Awaitable[T], stop: asyncio.Event) -> T | None:
    """``await work``, unless ``stop`` is set first (then None, ``work`` cancelled).

    Start-up steps that wait on the network (the broker's ownership check, binding the
    port) thus never outlive a Ctrl-C or SIGTERM.
    """
    job = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({job, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
        if not job.done():
            job.cancel()
    if job.cancelled() or not job.done():
        with contextlib.suppress(asyncio.CancelledError):
            await job
        return None
    return job.result()


class _Stop(Exception):
    """Ends the task group on request."""
