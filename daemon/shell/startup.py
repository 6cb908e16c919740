"""The daemon's start-up: the round opened, its journal replayed, the first start noted.

:func:`open_round` reads the configuration, refuses a weak arbiter token and boards
another live daemon owns, opens the round's journal and dates the round by its first
start (:func:`load_round_config`); :func:`replay_journal` rebuilds the round from the
journal, telling the person at the terminal how far it got. Once the daemon serves, what
the start-up built lives as long as the daemon: :func:`freeze_start` keeps it out of the
collector's full passes. :func:`unless_stopped` bounds every start-up step that waits on
the network by a stop request.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import gc
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from daemon.config.local_token import ArbiterToken, daemon_token
from daemon.config.model import Config, ConfigError, ConfigFile, weak_token_problem
from daemon.journal.identity import abandon_journal, open_round_journal
from daemon.journal.store import EVENT_BOARD, ROUND, Journal
from daemon.links.pairing import apply_pairings
from daemon.pairing import ResultHandoff
from daemon.shell.outputs import claim_boards
from daemon.shell.service import RoundService

__all__ = [
    "STARTED",
    "OpenedRound",
    "freeze_start",
    "freeze_survivors",
    "load_round_config",
    "note_start",
    "open_round",
    "replay_journal",
    "report_zero_default_time",
    "unfreeze",
    "unless_stopped",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Journal record kind noting when the daemon first started this round.
STARTED = "daemon_start"


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


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenedRound:
    """A round ready for its daemon: configuration, journal, TRF hand-offs, token, and
    the claims of other daemons on its boards that the arbiters are to be told."""

    config: Config
    journal: Journal
    handoffs: Mapping[str, ResultHandoff]
    token: ArbiterToken
    opened: dt.datetime
    claimed: list[str]


async def open_round(
    config_path: str | os.PathLike[str], *, demo: bool, new_journal: bool
) -> OpenedRound:
    """Read the configuration, claim the boards, open the journal (see the module).

    Raises:
        ConfigError: a bad configuration, or boards another live daemon owns.
        JournalError: a journal that cannot be used.
        PairingFileError: a TRF or pairings file that cannot be used.
    """
    file = ConfigFile.read(config_path)  # read once: built again below from its data
    opened = dt.datetime.now().astimezone()
    first = file.build(opened)
    weak = None if demo else weak_token_problem(first)
    if weak is not None:
        raise ConfigError([weak])
    claimed = await claim_boards(first)
    journal = open_round_journal(first, new_journal=new_journal)
    try:
        config = load_round_config(file, journal, opened)
        moved = {
            str(r.payload["section"]) for r in journal.records(board=EVENT_BOARD, kinds={ROUND})
        }
        config, handoffs = apply_pairings(config, skip=moved)
        token = daemon_token(config)
        server = config.server.model_copy(update={"arbiter_token": token.value})
        config = replace(config, server=server)
    except BaseException:
        abandon_journal(journal)
        raise
    return OpenedRound(
        config=config,
        journal=journal,
        handoffs=handoffs,
        token=token,
        opened=opened,
        claimed=claimed,
    )


def replay_journal(
    service: RoundService, progress: Callable[[str | None], None] | None = None
) -> int:
    """Replay the service's journal; ``progress`` is shown a line while it reads, then
    None. Returns the inputs replayed."""
    if progress is None:
        return service.replay()
    path = service.journal.path
    progress(f"reading {path}")
    try:
        return service.replay(
            progress=lambda done, total: progress(f"reading {path}: {done:,} of {total:,} records")
        )
    finally:
        progress(None)


def note_start(journal: Journal, at: float) -> None:
    """Note the first start: the time the configuration's default round start is."""
    if next(journal.records(board=EVENT_BOARD, kinds={STARTED}), None) is None:
        journal.append(EVENT_BOARD, STARTED, {"at": at}, at)


def report_zero_default_time(config: Config) -> None:
    """Say once, at start, which sections have no default time (FIDE 6.7's zero)."""
    zero = [s.name or "the event" for s in config.sections if s.event.default_time <= 0]
    if zero:
        log.warning(
            "= %s: default time 0 (no default_time: FIDE 6.7's default when the regulations"
            " state none): a player absent when the clocks start loses, as the arbiter sees"
            " at the board; no late-arrival alert is raised",
            ", ".join(zero),
        )


def freeze_start() -> None:
    """Keep what the start-up built (the replayed round, the configuration, modules),
    which lives as long as the daemon, out of the collector's full passes: they would
    otherwise walk it all, pausing every board (docs/performance.md)."""
    gc.collect()
    gc.freeze()
    if freeze_survivors not in gc.callbacks:
        gc.callbacks.append(freeze_survivors)


def unfreeze() -> None:
    """The daemon stops: no more freezing after full collections."""
    with contextlib.suppress(ValueError):
        gc.callbacks.remove(freeze_survivors)


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
