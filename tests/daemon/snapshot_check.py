"""A journal the daemon wrote, restarted from snapshots at many points: each restart must
equal a replay of the whole journal (games with every [%clk], clocks, statuses, alerts
with their ids, results, timers)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from broadcast.feed.hub import Hub
from daemon.arbiter.results import CommandRefused
from daemon.config.model import Config, ConfigFile
from daemon.journal.inputs import INPUT_KINDS
from daemon.journal.store import Journal
from daemon.round.codec import input_of
from daemon.round.core import RoundCore
from daemon.round.snapshot import dump_state, fingerprint, load_state
from daemon.shell.service import RoundService
from daemon.shell.startup import load_round_config

__all__ = ["check_restarts_from_snapshots", "observed"]

#: The time the restarted boards are rendered at (both sides alike).
NOW = 2_000_000_000.0
#: Inputs a core loaded from a snapshot takes beside the one that made it.
_FOLLOW = 60


def observed(core: RoundCore) -> dict[str, Any]:
    """Everything the round shows and will do: boards, alerts, results, next timer."""
    return {
        "boards": [core.board_state(n, NOW) for n in sorted(core.games)],
        "alerts": core.engine.alerts,
        "open": core.engine.open_alerts,
        "results": [core.engine.result_of(n) for n in sorted(core.games)],
        "deadline": core.next_deadline(),
    }


def _restart(config: Config, journal: Journal, print_: str | None) -> RoundService:
    service = RoundService(
        RoundCore(config), journal, Hub(), wall_clock=lambda: NOW, fingerprint=print_
    )
    service.replay()
    return service


def check_restarts_from_snapshots(config_path: Path, cuts: int = 16) -> int:
    """Snapshots after ``cuts`` inputs spread over the journal (the first and the last
    included); a restart from each equals the full replay. Returns the points checked.

    The daemon must be stopped; the journal's own snapshots are replaced.
    """
    with Journal(config_path.parent / "journal.db") as journal:
        config = load_round_config(ConfigFile.read(config_path), journal)
        print_ = fingerprint(config, None)
        journal._db.execute("DELETE FROM snapshots")
        full = _restart(config, journal, None)
        assert full.replayed_from == 0
        expected = observed(full.core)
        seqs = [record.seq for record in journal.records(kinds=INPUT_KINDS)]
        assert len(seqs) > cuts, "too short a journal to cut"
        picks = {seqs[round(i * (len(seqs) - 1) / (cuts - 1))] for i in range(cuts)}
        states = _follow(config, journal, picks)
        for seq, state in states:
            journal._db.execute("DELETE FROM snapshots")
            journal.write_snapshot(seq, NOW, print_, state)
            quick = _restart(config, journal, print_)
            assert quick.replayed_from == seq
            assert observed(quick.core) == expected, f"restart from the snapshot at {seq}"
        journal._db.execute("DELETE FROM snapshots")
        return len(states)


def _follow(config: Config, journal: Journal, picks: set[int]) -> list[tuple[int, bytes]]:
    """One replay, dumping the state at each of ``picks``; a core loaded from each dump
    then takes the next inputs alongside and shows the same round every few of them."""
    core = RoundCore(config)
    states: list[tuple[int, bytes]] = []
    following: list[tuple[RoundCore, int]] = []  # (a loaded core, inputs it has taken)
    for record in journal.records(kinds=INPUT_KINDS):
        for target in [core, *(loaded for loaded, _ in following)]:
            with contextlib.suppress(CommandRefused):
                target.apply(input_of(record.board, record.kind, record.payload, record.at))
        following = [(loaded, taken + 1) for loaded, taken in following if taken < _FOLLOW]
        for loaded, taken in following:
            if taken % 5 == 0:
                assert observed(loaded) == observed(core), f"{taken} inputs after a snapshot"
        if record.seq in picks:
            state = dump_state(core)
            states.append((record.seq, state))
            loaded = RoundCore(config)
            load_state(loaded, state)
            assert observed(loaded) == observed(core), f"the snapshot at {record.seq}"
            following.append((loaded, 0))
    return states
