"""Group commits: the board sessions' inputs journalled together, published after the commit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from daemon.journal.inputs import CLOCK, INPUT_KINDS, LINK, TICK
from daemon.journal.store import Journal
from daemon.round.codec import input_of
from daemon.round.core import RoundCore
from daemon.round.snapshot import SnapshotPolicy, fingerprint, load_state
from daemon.shell.service import RoundService
from tests.daemon.played_inputs import START, board_inputs, three_boards
from tests.hand_clock import HandClock
from tests.waiting import wait_until


def _round(folder: Path, **options: Any) -> tuple[RoundService, Journal, HandClock]:
    config = three_boards(folder)
    journal = Journal(folder / "group.db")
    clock = HandClock(START)
    service = RoundService(
        RoundCore(config, None),
        journal,
        Hub(),
        wall_clock=clock,
        fingerprint=fingerprint(config, None),
        **options,
    )
    return service, journal, clock


def _play(service: RoundService, clock: HandClock, plies: int) -> None:
    """Board 1's inputs through the sessions' door, with ticks when the core asks."""
    for at, board, kind, payload in board_inputs(1, plies):
        deadline = service.core.next_deadline()
        if deadline is not None and deadline <= at:
            clock.now = deadline
            service.receive(input_of(0, TICK, {}, deadline))
        clock.now = at
        service.receive_grouped(input_of(board, kind, payload, at))


def _shown(state: BoardState | None) -> tuple[Any, ...]:
    assert state is not None
    return (state.moves, state.white_clock, state.black_clock, state.running, state.pgn)


async def test_inputs_are_journalled_in_order_before_what_they_changed_is_shown(
    tmp_path: Path,
) -> None:
    service, journal, clock = _round(tmp_path)
    before = journal.last_seq
    _play(service, clock, 6)  # each move is committed (and shown) at once
    moved = journal.last_seq
    assert moved > before
    shown = _shown(service.hub.state(1))
    thinking = [i for i in board_inputs(1, 7) if i[2] == CLOCK][-4:-1]  # ply 7's ticking
    for at, board, kind, payload in thinking:
        clock.now = at
        service.receive_grouped(input_of(board, kind, payload, at))
    assert journal.last_seq == moved  # applied, waiting for the group's commit ...
    assert _shown(service.hub.state(1)) == shown  # ... and not shown before it
    await wait_until(lambda: journal.last_seq > moved, what="the group's commit")
    inputs = [r for r in journal.records(after=before) if r.kind in INPUT_KINDS]
    assert [(r.at, r.kind, r.payload) for r in inputs if r.kind != TICK] == [
        (at, kind, payload) for at, _, kind, payload in [*board_inputs(1, 6), *thinking]
    ]
    kinds = [r.kind for r in journal.records(after=before)]
    assert "game.MoveMade" in kinds
    assert "game.ClockUpdated" not in kinds  # the clock input again, by colour: not kept
    # the hub shows what the core holds, clock tags included, as a whole state would
    whole = service.core.board_state(1, clock.now)
    assert _shown(service.hub.state(1)) == _shown(whole)
    journal.close()


async def test_a_direct_input_commits_the_group_before_it(tmp_path: Path) -> None:
    service, journal, clock = _round(tmp_path)
    for at, board, kind, payload in list(board_inputs(1, 1))[:4]:
        clock.now = at
        service.receive_grouped(input_of(board, kind, payload, at))
    service.receive(input_of(1, LINK, {"state": "offline", "reason": "cable"}, clock.now + 1))
    kinds = [r.kind for r in journal.records() if r.kind in INPUT_KINDS]
    assert kinds == [LINK, "placement", CLOCK, CLOCK, LINK]
    journal.close()


async def test_a_replay_of_the_grouped_journal_gives_the_same_round(tmp_path: Path) -> None:
    service, journal, clock = _round(tmp_path)
    _play(service, clock, 12)
    service.commit_group()
    journal.close()
    again, journal, _ = _round(tmp_path)
    again.replay()
    assert again.core.board_state(1, START) == service.core.board_state(1, START)
    journal.close()


async def test_a_snapshot_pickled_by_a_child_loads_as_the_round_it_was_taken_at(
    tmp_path: Path,
) -> None:
    service, journal, clock = _round(tmp_path, snapshots=SnapshotPolicy(every_inputs=30))
    for at, board, kind, payload in board_inputs(1, 6):  # only the sessions' door
        clock.now = at
        service.receive_grouped(input_of(board, kind, payload, at))
    service.commit_group()  # 30 inputs and more: a child pickles the core
    await wait_until(lambda: service.snapshots_written == 1, what="the child's snapshot")
    found = journal.latest_snapshot(service.fingerprint or "")
    assert found is not None
    seq, data = found
    copy = RoundCore(service.core.config, None)
    load_state(copy, data)
    replayed = RoundCore(service.core.config, None)
    for record in journal.records(kinds=INPUT_KINDS):
        if record.seq <= seq:
            replayed.apply(input_of(record.board, record.kind, record.payload, record.at))
    assert copy.board_state(1, START) == replayed.board_state(1, START)
    journal.close()
