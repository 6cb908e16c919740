"""The tracker's transition table and settings."""

from __future__ import annotations

import chess
import pytest

from daemon.game.state import (
    TRANSITIONS,
    InvalidTransition,
    TrackerSettings,
    TrackerState,
    Trigger,
    next_state,
)
from tests.game.table import Table


def test_every_state_is_reachable_and_ended_only_restarts_or_has_its_end_withdrawn() -> None:
    reached = {TrackerState.WAITING} | set(TRANSITIONS.values())
    assert reached == set(TrackerState)
    assert {trigger for state, trigger in TRANSITIONS if state is TrackerState.ENDED} == {
        Trigger.START,
        Trigger.WITHDRAW,
    }


def test_a_transition_outside_the_table_is_a_bug() -> None:
    with pytest.raises(InvalidTransition, match="lose is not allowed in waiting"):
        next_state(TrackerState.WAITING, Trigger.LOSE)


@pytest.mark.parametrize(
    "bad",
    [
        {"settle_time": -1.0},
        {"out_of_sync_hold": -0.5},
        {"new_game_after_plies": 0},
        {"increment": -2.0},
    ],
)
def test_settings_are_checked(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=r"negative|at least"):
        TrackerSettings(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("placement", "playable"),
    [
        ("4k3/8/8/8/8/8/8/8", False),  # no white king
        ("4k3/8/8/8/8/8/4r3/4K3", True),  # White to move, in check: fine
        ("4k3/4R3/8/8/8/8/8/4K3", False),  # White to move, Black in check
        ("P3k3/8/8/8/8/8/8/4K3", False),  # a pawn on its last rank
    ],
)
def test_accept_refuses_boards_no_game_goes_on_from(placement: str, playable: bool) -> None:
    table = Table(placement=chess.BaseBoard(placement), clock=None)
    assert table.accept() is playable
    assert table.tracker.state is (TrackerState.PLAYING if playable else TrackerState.WAITING)
