"""The daemon: every board of the round at once, under one task group (layer L4).

:class:`Daemon` opens the round and replays its journal (daemon/shell/startup.py),
starts the broadcast server and one :class:`~daemon.shell.pipeline.BoardSession` per
e-board, the timer loop and the configured outputs (daemon/shell/outputs.py), all as
tasks of one ``asyncio.TaskGroup``. A board that fails, disconnects or sends garbage
stays inside its supervisor's retry loop; only bugs reach the task group.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from base.backoff import BackoffPolicy
from broadcast.feed.archive import RoundArchive
from broadcast.feed.commands import CommandReply, NextRound, RebuildFromMemory, SetClocks
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from broadcast.outputs.kinds import Feeds, Job
from broadcast.web.listen import ListenError
from broadcast.web.rounds import RoundRoutes
from broadcast.web.server import BroadcastServer
from daemon.config.local_token import ArbiterToken
from daemon.config.model import BoardConfig, Config, is_every_interface
from daemon.game.state import TrackerSettings
from daemon.journal.identity import abandon_journal
from daemon.journal.store import Journal, checkpoint
from daemon.links.analysis import AnalysisLink, analysis_off, analysis_settings
from daemon.links.lichess import REFUSAL_FIX, LichessLink
from daemon.links.livechess import livechess_off, livechess_settings
from daemon.links.pairing import PairingLink, last_decisions
from daemon.links.prizes import PrizeRoutes
from daemon.links.standings import StandingsRoutes
from daemon.pairing import ResultHandoff
from daemon.round.core import RoundCore
from daemon.round.inputs import StartInput
from daemon.round.link_silence import BOARD_SILENCE
from daemon.round.snapshot import SnapshotPolicy, fingerprint
from daemon.shell.archive import ArchiveKeeper
from daemon.shell.board_check import warn_unanswered
from daemon.shell.clock_set import DaemonClocks
from daemon.shell.faults import Faults, keep_running
from daemon.shell.limits import connection_limits, quiet_accept_errors, raise_open_file_limit
from daemon.shell.logs import log_alerts
from daemon.shell.outputs import DaemonOutputs, claimed_alert
from daemon.shell.pipeline import BoardSession, board_supervisor, read_memory
from daemon.shell.rounds import RoundKeeper
from daemon.shell.service import RoundService
from daemon.shell.startup import (
    freeze_start,
    note_start,
    open_round,
    replay_journal,
    report_zero_default_time,
    unfreeze,
)
from drivers.dgt.aio.supervisor import BoardSupervisor, SerialSightings
from drivers.dgt.device_core import DeviceTimeouts

if TYPE_CHECKING:  # imported when [livechess] turns it on
    from broadcast.livechess.server import LiveChessServer

__all__ = ["Daemon", "DaemonOptions"]

log = logging.getLogger(__name__)


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


class Daemon:
    """One round: journal, core, service, broadcast server, board sessions and outputs.

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
        token: ArbiterToken | None = None,
        opened_at: float | None = None,
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
            clock_setter=self.set_clocks,
            round_changer=self._next_round,
            result_listeners=[self._result_to_trf, self._result_to_outputs],
            memory_reader=self._read_memory,
        )
        #: Past rounds for spectators (``/rounds.json``, ``/round/N.pgn``), from the journal.
        self.archive = RoundArchive()
        self.archive_keeper = ArchiveKeeper(self.archive, self.hub, self.service.writer)
        self.rounds = RoundKeeper(
            self.core,
            self.service,
            self.pairings,
            listeners=[self._round_changed],
            before_change=[self.archive_keeper.keep],
        )
        self.replayed = 0
        self._start_fed = False
        #: The arbiter token and where it comes from (the daemon's own on loopback).
        self.token = token
        #: When the daemon was opened (epoch seconds): the first start, if it is one.
        self.opened_at = time.time() if opened_at is None else opened_at
        #: The standings the server answers (``/standings.json``), made with the server.
        self.standings: StandingsRoutes
        self.server = self._server(open_files)
        #: Bugs the daemon survives: logged once, one ``internal_error`` alert each.
        self.faults = Faults(self.service.output_alerts)
        self._sightings = SerialSightings()  # boards by serial on the same ports
        self.sessions = {b.number: self._session(b) for b in self.config.boards if b.has_eboard}
        self.clocks = DaemonClocks(self.sessions, self.core)
        self.outputs = self._outputs()
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
        opened = await open_round(config_path, demo=options.demo, new_journal=options.new_journal)
        try:
            daemon = cls(
                opened.config,
                opened.journal,
                options,
                opened.handoffs,
                open_files=raise_open_file_limit(),
                token=opened.token,
                opened_at=opened.opened.timestamp(),
            )
            daemon._replay()
            if opened.claimed:
                claimed_alert(daemon.service.output_alerts, opened.claimed)
        except BaseException:
            abandon_journal(opened.journal)
            raise
        return daemon

    def _server(self, open_files: int | None) -> BroadcastServer:
        server = self.config.server
        return BroadcastServer(
            self.hub,
            self.service,
            host=server.host,
            port=server.port if self.options.port is None else self.options.port,
            arbiter_token=server.arbiter_token,
            delay=float(server.public_delay),
            allowed_origins=tuple(server.allowed_origins),
            limits=connection_limits(open_files, server.max_connections_per_client),
            results=server.results,
            public_hub=Hub() if analysis_settings(self.config.analysis) is not None else None,
            extra_routes=self._routes,
        )

    def _session(self, board: BoardConfig) -> BoardSession:
        return BoardSession(
            board,
            self.service,
            self._supervisor(board.number),
            section=self.config.section_of(board.number),
            on_fault=functools.partial(self._session_fault, board.number),
            new_supervisor=functools.partial(self._supervisor, board.number, again=True),
        )

    def _outputs(self) -> DaemonOutputs:
        feeds = Feeds(
            hub=self.hub,
            public=self.server.public_hub,
            alerts=self.service.output_alerts,
            refusal_fix=REFUSAL_FIX,
        )
        return DaemonOutputs(
            self.config,
            self.service,
            feeds,
            core=self.core,
            archive=self.archive,
            standings=self.standings,
            livechess=self._livechess(),
        )

    def _routes(self, public: Hub) -> list[RoundRoutes | StandingsRoutes | PrizeRoutes]:
        """What the server answers besides a round's boards, from its ``public`` hub: past
        rounds, standings, prizes."""
        server = self.config.server
        self.standings = StandingsRoutes(
            self.pairings, public, self._section_names, configured=self._configured_tiebreaks
        )
        past = RoundRoutes(
            self.archive, public, delay=float(server.public_delay), results=server.results
        )
        routes: list[RoundRoutes | StandingsRoutes | PrizeRoutes] = [past, self.standings]
        if self.config.prizes:
            prizes = PrizeRoutes(self.pairings, public, self._section_names, self.config.prizes)
            routes.append(prizes)
        return routes

    def _replay(self) -> None:
        self.replayed = replay_journal(self.service, self.options.progress)
        self.rounds.restore_links(self.journal)
        self.rounds.record_start(self.journal)
        current = {section.name: section.event.round for section in self.core.config.sections}
        self.archive_keeper.load(self.journal, current)
        for number, game in self.core.games.items():
            if number in self.sessions:
                self.sessions[number].board = game.config
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

    @property
    def livechess(self) -> LiveChessServer | None:
        """The LiveChess API (``[livechess]``), made before the daemon listens."""
        return self.outputs.livechess

    @property
    def lichess(self) -> LichessLink | None:
        """The lichess push, once the outputs run (None without [[lichess]])."""
        return self.outputs.lichess

    @property
    def analysis(self) -> AnalysisLink | None:
        """The engine's analysis of public positions (``[analysis]``), once it runs."""
        return self.outputs.analysis

    def _result_to_trf(self, state: BoardState, result: Mapping[str, Any]) -> None:
        link = self.pairings.get(state.section)
        if link is not None:
            link.receive_result(state.board, result)

    def _result_to_outputs(self, state: BoardState, result: Mapping[str, Any]) -> None:
        self.outputs.take_result(state, result)

    def _next_round(self, command: NextRound) -> CommandReply:
        return self.rounds.next_round(command.section, force=command.force)

    def _round_changed(self, section: str, round_number: int) -> None:
        for number, session in self.sessions.items():
            game = self.core.games[number]
            if game.section.name == section:
                session.board = game.config
                session.new_round()
        self.outputs.announce()  # the boards the round adds are this daemon's too

    def _livechess(self) -> LiveChessServer | None:
        settings = livechess_settings(self.config)
        if settings is None:
            if (off := livechess_off(self.config)) is not None:
                log.warning("= %s", off)
            return None
        if self.options.livechess_port is not None:
            settings = replace(settings, port=self.options.livechess_port)
        from broadcast.livechess.server import LiveChessServer  # on: imported for it only

        return LiveChessServer(self.server.public_hub, settings, policy=self.server.policy)

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
        note_start(self.journal, self.opened_at)
        if not self._start_fed:  # every start: no e-board's link is known yet
            self._start_fed = True
            self.service.receive(StartInput(at=time.time(), silence=self.options.board_silence))
            report_zero_default_time(self.config)
            freeze_start()

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
            unfreeze()
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
        jobs += [(where, 0, job) for where, job in self.outputs.jobs()]
        if self.sessions:
            jobs.append(("the e-board check", 0, self._warn_unanswered))
        if self.options.set_clocks_at_start:
            jobs.append(("setting the clocks", 0, self.clocks.set_when_online))
        if self.options.alert_log:
            jobs.append(("the alert log", 0, functools.partial(log_alerts, self.hub)))
        return [keep_running(where, board, job, self.faults) for where, board, job in jobs]

    async def _warn_unanswered(self) -> None:
        await warn_unanswered(self.sessions, patience=self.options.board_patience)

    async def set_clocks(self, command: SetClocks | None = None) -> CommandReply:
        """Set the e-board clocks to their time control (arbiter ``set_clocks``): every
        one, or the board's or the section's that ``command`` names
        (:class:`~daemon.shell.clock_set.DaemonClocks`)."""
        return await self.clocks.set_clocks(command)

    def _read_memory(self, command: RebuildFromMemory) -> CommandReply:
        """An arbiter's ``rebuild_from_memory``: the board's session reads its memory now."""
        return read_memory(self.sessions, command)


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


class _Stop(Exception):
    """Ends the task group on request."""
