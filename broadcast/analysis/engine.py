"""The engine's shell: one Stockfish process, driven through python-chess's ``chess.engine``.

:class:`Analyst` follows the public hub (a :class:`~broadcast.feed.subscriptions.BoardWatch`: the
latest state of each board, however many came meanwhile), asks the pure
:class:`~broadcast.analysis.plan.AnalysisPlan` what to analyse next, has the engine
process analyse it within the configured bound (time and/or depth, at most ``threads``
engine threads) and hands the evaluations to its sinks (the public hub's
:class:`~broadcast.feed.evaluations.EvaluationGate`, MQTT). The search runs in the
engine's own process; this side only converts its answer.

An engine that is missing, cannot start, crashes or stops answering never ends anything:
it is said once in plain words, every followed board gets "no evaluation" (viewers hide
the bar), and the engine is started again with the project's backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import chess
import chess.engine

from base.backoff import Backoff, BackoffPolicy
from broadcast.analysis.plan import Analysed, AnalysisPlan, Job
from broadcast.feed.hub import Hub
from broadcast.feed.messages import Evaluation

__all__ = [
    "DEBIAN_STOCKFISH",
    "DEFAULT_TIME",
    "Analyst",
    "AnalystSettings",
    "Engine",
    "EngineDown",
    "analysed_from_info",
    "engine_path",
]

log = logging.getLogger(__name__)

#: Where Debian's ``stockfish`` package puts the engine (not on every user's PATH).
DEBIAN_STOCKFISH = "/usr/games/stockfish"
#: The bound per position when ``[analysis]`` names neither time nor depth, seconds.
DEFAULT_TIME = 0.5
#: The longest line of best moves kept, in plies.
LINE_PLIES = 12


def engine_path(configured: str | None) -> str:
    """The engine to run: ``configured`` (a path, or a command found on PATH); by
    default ``stockfish`` on PATH, then Debian's /usr/games/stockfish."""
    name = configured or "stockfish"
    if os.sep in name or (os.altsep and os.altsep in name):
        return name
    found = shutil.which(name)
    if found is None and configured is None and os.access(DEBIAN_STOCKFISH, os.X_OK):
        return DEBIAN_STOCKFISH
    return found or name


@dataclass(frozen=True, slots=True, kw_only=True)
class AnalystSettings:
    """The ``[analysis]`` table as the shell needs it (docs/configuration.md).

    Attributes:
        engine: the engine's path or command (:func:`engine_path` resolves it).
        time / depth: the bound per position: seconds, plies, or both (the first reached).
        threads / hash_mb: the engine's ``Threads`` and ``Hash`` options.
        boards / sections: the boards followed (both None: every board).
        answer_timeout: seconds beyond the bound an engine may take before it is
            taken for hung (and started again).
        backoff: the waits between attempts to start the engine.
    """

    engine: str | None = None
    time: float | None = DEFAULT_TIME
    depth: int | None = None
    threads: int = 1
    hash_mb: int = 16
    boards: tuple[int, ...] | None = None
    sections: tuple[str, ...] | None = None
    answer_timeout: float = 30.0
    backoff: BackoffPolicy = field(
        default_factory=lambda: BackoffPolicy(initial=1.0, maximum=60.0, jitter=0.1)
    )

    @property
    def limit(self) -> chess.engine.Limit:
        """The bound per position, as python-chess says it."""
        return chess.engine.Limit(time=self.time, depth=self.depth)


def analysed_from_info(board: chess.Board, info: chess.engine.InfoDict) -> Analysed:
    """The engine's answer for ``board`` as an :class:`Analysed`: score from White's
    point of view, depth, and the best line in SAN (the legal prefix of its PV)."""
    score = info.get("score")
    white = score.white() if score is not None else None
    line: list[str] = []
    play = board.copy(stack=False)
    for move in info.get("pv", [])[:LINE_PLIES]:
        if move not in play.legal_moves:
            break
        line.append(play.san(move))
        play.push(move)
    return Analysed(
        cp=None if white is None or white.is_mate() else white.score(),
        mate=None if white is None else white.mate(),
        depth=int(info.get("depth", 0)),
        line=tuple(line),
    )


def _ended(board: chess.Board) -> Analysed | None:
    """A finished position needs no engine: mate is ``mate`` 0, any other end a draw; a
    position no game reaches (no king, the side not to move in check) gets no score:
    an engine may crash on one."""
    if not board.is_valid():
        return Analysed()
    if board.is_checkmate():
        return Analysed(mate=0)
    if board.is_stalemate() or board.is_insufficient_material():
        return Analysed(cp=0)
    return None


class EngineDown(Exception):
    """The engine cannot be started, crashed, or stopped answering (in plain words)."""


class Engine:
    """One engine process: :meth:`start`, :meth:`analyse` positions, :meth:`close`."""

    def __init__(self, settings: AnalystSettings) -> None:
        self.settings = settings
        self.path = engine_path(settings.engine)
        self.transport: asyncio.SubprocessTransport | None = None
        self.protocol: chess.engine.UciProtocol | None = None

    @property
    def pid(self) -> int | None:
        """The engine's process id while it runs."""
        return None if self.transport is None else self.transport.get_pid()

    async def start(self) -> None:
        settings = self.settings
        try:
            async with asyncio.timeout(settings.answer_timeout):
                self.transport, self.protocol = await chess.engine.popen_uci(self.path)
                options = {"Threads": settings.threads, "Hash": settings.hash_mb}
                known = {k: v for k, v in options.items() if k in self.protocol.options}
                await self.protocol.configure(known)
        except (OSError, chess.engine.EngineError, TimeoutError) as exc:
            await self.close()
            raise EngineDown(_words(self.path, exc)) from None

    async def analyse(self, job: Job) -> Analysed:
        try:
            board = chess.Board(job.fen, chess960=job.chess960)
        except ValueError:
            return Analysed()
        ended = _ended(board)
        if ended is not None:
            return ended
        assert self.protocol is not None
        bound = (self.settings.time or 0.0) + self.settings.answer_timeout
        try:
            async with asyncio.timeout(bound):
                info = await self.protocol.analyse(board, self.settings.limit)
        except (chess.engine.EngineError, TimeoutError) as exc:
            raise EngineDown(_words(self.path, exc)) from None
        return analysed_from_info(board, info)

    async def idle(self, work: asyncio.Event) -> bool:
        """Wait for ``work``; True when the engine process ended meanwhile."""
        assert self.protocol is not None
        ended: asyncio.Future[Any] = self.protocol.returncode
        waiter: asyncio.Future[Any] = asyncio.ensure_future(work.wait())
        try:
            await asyncio.wait({waiter, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        return ended.done()

    async def close(self) -> None:
        protocol, transport = self.protocol, self.transport
        self.protocol = self.transport = None
        if protocol is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await protocol.quit()
        if transport is not None:
            transport.close()


def _words(path: str, exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"the engine {path} is not installed (apt-get install stockfish, or set engine)"
    if isinstance(exc, TimeoutError):
        return f"the engine {path} stopped answering"
    if isinstance(exc, chess.engine.EngineTerminatedError):
        return f"the engine {path} ended unexpectedly"
    return f"the engine {path} cannot run: {exc}"


#: What an engine that ended by itself raised, had it been asked.
ENDED = chess.engine.EngineTerminatedError("ended")

Sink = Callable[[Evaluation], None]


class Analyst:
    """Analyses the public positions of ``public`` and hands evaluations to ``sinks``.

    Run :meth:`run` as a task; it ends only when cancelled.
    """

    def __init__(self, public: Hub, settings: AnalystSettings, sinks: Sequence[Sink]) -> None:
        self.public = public
        self.settings = settings
        self.sinks = list(sinks)
        self.plan = AnalysisPlan(boards=settings.boards, sections=settings.sections)
        self.engine = Engine(settings)
        self.running = asyncio.Event()  # the engine is up
        self._work = asyncio.Event()
        self._down = False  # said once until the engine runs again

    async def run(self) -> None:
        """Follow the public hub and analyse, until cancelled."""
        try:
            async with asyncio.TaskGroup() as tasks:
                tasks.create_task(self._follow())
                tasks.create_task(self._analyse())
        finally:
            self.running.clear()
            await self.engine.close()

    def _tell(self, evaluations: list[Evaluation]) -> None:
        for evaluation in evaluations:
            for sink in self.sinks:
                sink(evaluation)

    async def _follow(self) -> None:
        with self.public.watch() as watch:
            for state in self.public.states():
                self._tell(self.plan.receive_state(state))
            self._work.set()
            while True:
                for state in await watch.changed():
                    self._tell(self.plan.receive_state(state))
                if self.plan.waiting:
                    self._work.set()

    async def _analyse(self) -> None:
        backoff = Backoff(self.settings.backoff)
        while True:
            if self.engine.protocol is None:
                try:
                    await self.engine.start()
                except EngineDown as exc:
                    self._went_down(str(exc), None)
                    await asyncio.sleep(backoff.next_delay())
                    continue
                self._came_up()
            job = self.plan.next_job()
            if job is None:
                self._work.clear()
                if await self.engine.idle(self._work):
                    await self.engine.close()
                    self._went_down(_words(self.engine.path, ENDED), None)
                    await asyncio.sleep(backoff.next_delay())
                continue
            try:
                analysed = await self.engine.analyse(job)
            except EngineDown as exc:
                await self.engine.close()
                self._went_down(str(exc), job)
                await asyncio.sleep(backoff.next_delay())
                continue
            backoff.reset()
            self._tell(self.plan.receive_result(job, analysed))

    def _went_down(self, words: str, job: Job | None) -> None:
        self.running.clear()
        if not self._down:
            self._down = True
            log.warning(
                "= analysis: %s; no evaluation is shown until it runs again (trying again)",
                words,
            )
        self._tell(self.plan.receive_failure(job))

    def _came_up(self) -> None:
        self.running.set()
        if self._down:
            self._down = False
            log.warning("= analysis: the engine %s runs again", self.engine.path)
        else:
            log.info("= analysis: the engine %s runs (pid %s)", self.engine.path, self.engine.pid)
        self._tell(self.plan.receive_engine_up())
