"""Snapshots: a restart from one gives exactly what a replay of the whole journal gives."""

from __future__ import annotations

import asyncio
import functools
import logging
import pickle
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broadcast.feed.commands import AckAlert, SetResult
from broadcast.feed.hub import Hub
from daemon.config.model import Config
from daemon.journal.inputs import INPUT_KINDS, LINK, TICK
from daemon.journal.store import Journal
from daemon.round import snapshot
from daemon.round.codec import input_of
from daemon.round.core import RoundCore
from daemon.round.snapshot import SnapshotPolicy, dump_state, fingerprint
from daemon.shell.app import Daemon, DaemonOptions
from daemon.shell.service import RoundService
from tests.daemon.played_inputs import START, board_inputs, three_boards
from tests.daemon.support import FAST_TRACKER, BoardSpec, write_config
from tests.hand_clock import HandClock


def _service(config: Config, journal: Journal, clock: HandClock, fp: str | None) -> RoundService:
    core = RoundCore(config, FAST_TRACKER)
    return RoundService(core, journal, Hub(), wall_clock=clock, fingerprint=fp)


def _drive(service: RoundService, clock: HandClock, inputs: list[Any]) -> None:
    """Feed inputs as the daemon would, with ticks when the core asks for them."""
    for at, board, kind, payload in inputs:
        deadline = service.core.next_deadline()
        if deadline is not None and deadline <= at:
            clock.now = deadline
            service.receive(input_of(0, TICK, {}, deadline))
        clock.now = at
        service.receive(input_of(board, kind, payload, at))


def _commands(service: RoundService, clock: HandClock) -> None:
    alerts = service.core.engine.alerts
    assert alerts, "the round raised no alert"
    asyncio.run(service.execute(AckAlert(id=alerts[0].id)))
    asyncio.run(service.execute(SetResult(board=3, result="1/2-1/2")))
    asyncio.run(service.execute(AckAlert(id=999)))  # refused: journalled, changes nothing


def _observed(core: RoundCore) -> dict[str, Any]:
    """Everything the round shows: boards, clocks, alerts with their ids, results."""
    return {
        "boards": [core.board_state(n, START) for n in sorted(core.games)],
        "alerts": core.engine.alerts,
        "results": [core.engine.result_of(n) for n in sorted(core.games)],
        "deadline": core.next_deadline(),
    }


@functools.cache
def _round(folder: Path) -> tuple[Config, list[Any], list[Any]]:
    """A journal of three boards (written once): what was played, and what comes after."""
    config = three_boards(folder)
    streams = [list(board_inputs(n, 24)) for n in (1, 2, 3)]
    played = sorted((i for s in streams for i in s), key=lambda i: (i[0], i[1]))
    later = [list(board_inputs(n, 30))[len(s) :] for n, s in zip((1, 2, 3), streams, strict=True)]
    after = sorted((i for s in later for i in s), key=lambda i: (i[0], i[1]))
    clock = HandClock(START)
    with Journal(config.storage.path) as journal:
        service = _service(config, journal, clock, None)
        _drive(service, clock, played)
        _commands(service, clock)
    return config, played, after


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Config, list[Any], list[Any]]:
    return _round(tmp_path_factory.mktemp("round"))


def _restart(config: Config, journal: Journal, fp: str | None) -> RoundService:
    snapshot._FIELDS.clear()  # as in a new process: nothing learnt while dumping
    service = _service(config, journal, HandClock(START), fp)
    service.replay()
    return service


def _snapshot_at(config: Config, journal: Journal, cut: int, fp: str) -> None:
    """The state after the records up to ``cut``, made as the service makes it."""
    core = RoundCore(config, FAST_TRACKER)
    for record in journal.records(kinds=INPUT_KINDS):
        if record.seq > cut:
            break
        try:
            core.apply(input_of(record.board, record.kind, record.payload, record.at))
        except Exception:  # a refused command
            continue
    journal.write_snapshot(cut, START, fp, dump_state(core))


@pytest.mark.slow
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(fraction=st.floats(0.0, 1.0))
def test_a_restart_from_any_snapshot_equals_a_full_replay(
    played: tuple[Config, list[Any], list[Any]], fraction: float
) -> None:
    config, _, after = played
    fp = fingerprint(config, FAST_TRACKER)
    with Journal(config.storage.path) as journal:
        last = journal.last_seq
        cut = max(1, int(fraction * last))
        full = _restart(config, journal, None)
        assert full.replayed_from == 0
        _snapshot_at(config, journal, cut, fp)
        try:
            quick = _restart(config, journal, fp)
            assert quick.replayed_from == cut
            assert _observed(quick.core) == _observed(full.core)
            # and both carry on alike (nothing hidden diverged): a few more inputs each
            for service in (full, quick):
                for at, board, kind, payload in after[:40]:
                    service.core.apply(input_of(board, kind, payload, at))
            assert _observed(quick.core) == _observed(full.core)
        finally:
            db = sqlite3.connect(config.storage.path)
            db.execute("DELETE FROM snapshots")
            db.commit()
            db.close()


def test_the_service_takes_snapshots_as_it_goes_and_keeps_every_record(tmp_path: Path) -> None:
    config = three_boards(tmp_path)
    streams = [list(board_inputs(n, 16)) for n in (1, 2, 3)]
    inputs = sorted((i for s in streams for i in s), key=lambda i: (i[0], i[1]))
    fp = fingerprint(config, FAST_TRACKER)
    clock = HandClock(START)
    with Journal(config.storage.path) as journal:
        core = RoundCore(config, FAST_TRACKER)
        service = RoundService(
            core,
            journal,
            Hub(),
            wall_clock=clock,
            fingerprint=fp,
            snapshots=SnapshotPolicy(every_inputs=50, every_seconds=1e9),
        )
        _drive(service, clock, inputs)
        seqs = [r[0] for r in journal._db.execute("SELECT seq FROM snapshots ORDER BY seq")]
        assert len(seqs) == 2  # the two newest are kept
        inputs_kept = sum(1 for _ in journal.records(kinds=INPUT_KINDS))
        assert inputs_kept >= len(inputs)
        quick = _restart(config, journal, fp)
        assert quick.replayed_from == seqs[-1]
        assert _observed(quick.core) == _observed(_restart(config, journal, None).core)


def test_another_config_or_a_broken_snapshot_falls_back_to_the_whole_journal(
    played: tuple[Config, list[Any], list[Any]], caplog: pytest.LogCaptureFixture
) -> None:
    config, _, _ = played
    fp = fingerprint(config, FAST_TRACKER)
    with Journal(config.storage.path) as journal:
        full = _observed(_restart(config, journal, None).core)
        _snapshot_at(config, journal, journal.last_seq // 2, fp)
        other = _restart(config, journal, fingerprint(config, None))  # other tracker timers
        assert other.replayed_from == 0
        db = sqlite3.connect(config.storage.path)
        for state in (zlib.compress(pickle.dumps(None)), b"not zlib"):
            db.execute("UPDATE snapshots SET state = ?", (state,))
            db.commit()
            caplog.clear()
            with caplog.at_level(logging.WARNING):
                broken = _restart(config, journal, fp)
            assert broken.replayed_from == 0
            assert "not used" in caplog.text
            assert _observed(broken.core) == full
        db.execute("DELETE FROM snapshots")
        db.commit()
        db.close()


async def test_a_clean_stop_leaves_a_snapshot_and_the_restart_replays_nothing(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, [BoardSpec(1, None), BoardSpec(2, None)])
    options = DaemonOptions(port=0)
    daemon = await Daemon.open(config, options)
    await daemon.service.execute(SetResult(board=1, result="1-0"))
    stop = asyncio.Event()
    stop.set()
    await daemon.run(stop)
    again = await Daemon.open(config, options)
    try:
        assert again.replayed == 0
        assert again.service.replayed_from > 0
        state = again.core.engine.result_of(1)
        assert state is not None
        assert state.result == "1-0"
    finally:
        again.journal.close()


def test_state_that_cannot_be_pickled_skips_the_snapshot_not_the_input(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = three_boards(tmp_path)
    clock = HandClock(START)
    with Journal(config.storage.path) as journal:
        service = RoundService(
            RoundCore(config, FAST_TRACKER),
            journal,
            Hub(),
            wall_clock=clock,
            fingerprint=fingerprint(config, FAST_TRACKER),
            snapshots=SnapshotPolicy(every_inputs=1),
        )
        service.core.unpicklable = lambda: None  # type: ignore[attr-defined]
        with caplog.at_level(logging.WARNING):
            service.receive(input_of(1, LINK, {"state": "online", "reason": ""}, START))
        assert "snapshot not written" in caplog.text
        assert journal.latest_snapshot(service.fingerprint or "") is None
        assert [r.kind for r in journal.records(kinds=INPUT_KINDS)] == [LINK]


def test_the_policy_counts_the_replay_time_as_well_as_inputs_and_seconds() -> None:
    policy = SnapshotPolicy()
    assert not policy.due(29_999, 599.0, 0.99)
    assert policy.due(29_999, 599.0, 1.0)  # a move-heavy stretch: few inputs, costly
    assert policy.due(30_000, 0.0, 0.0)
    assert policy.due(1, 600.0, 0.0)
    assert not policy.due(0, 1e9, 1e9)  # nothing came since the last


@pytest.mark.parametrize(("budget", "taken"), [(1e-9, True), (1e9, False)])
def test_the_service_takes_a_snapshot_once_replaying_would_take_its_budget(
    tmp_path: Path, budget: float, taken: bool
) -> None:
    config = three_boards(tmp_path)
    inputs = list(board_inputs(1, 4))
    fp = fingerprint(config, FAST_TRACKER)
    clock = HandClock(START)
    policy = SnapshotPolicy(replay_seconds=budget, every_inputs=10**9, every_seconds=1e12)
    with Journal(config.storage.path) as journal:
        core = RoundCore(config, FAST_TRACKER)
        service = RoundService(
            core, journal, Hub(), wall_clock=clock, fingerprint=fp, snapshots=policy
        )
        _drive(service, clock, inputs)
        found = journal.latest_snapshot(fp)
        if taken:  # every input costs more than a nanosecond of the core's time
            assert found is not None
            assert found[0] == journal.last_seq
        else:
            assert found is None
