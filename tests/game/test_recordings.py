"""The three real DGT recordings reproduce their games exactly (docs/protocol.md §13).

The recordings carry no timestamps: message ``i`` is given the time ``i * DT``. Real boards
send a clock reading once a second while a clock runs, with the field updates of a move
in between, so a quarter of a second per message is about life speed. The games must
also come out right at other speeds, and a naive reader's three traps are pinned down:
a piece slid through a legal square (game 1's rook a1-d1-e1-f1, johan's rook a8-d8-e8),
a board set up rotated (game 2: every sensed square is ``sq ^ 63``, and the pawn
d2-d3-d4 slide), and the kings gesture after a flag fall (johan).
"""

from __future__ import annotations

import base64
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn
import pytest

from daemon.game.events import (
    ClockSidesLearned,
    FlagFell,
    GameEvent,
    GameStarted,
    MoveMade,
    MovesWithdrawn,
    OutOfSync,
    ResultSignalled,
)
from daemon.game.state import TrackerSettings
from daemon.game.tracker import GameTracker
from drivers.dgt.events import ClockTimes
from drivers.dgt.observe import SensorBoard, clock_observation
from drivers.dgt.protocol import DgtProtocol
from drivers.observations import ClockObserved, ClockSide, PlacementObserved
from tests.game.table import final_moves

DT = 0.25


@dataclass(frozen=True, slots=True)
class Replay:
    """What one recording produced."""

    tracker: GameTracker
    events: list[GameEvent]
    clocks: list[ClockObserved]
    placements: list[PlacementObserved]


def replay(path: Path, dt: float = DT, settings: TrackerSettings | None = None) -> Replay:
    """Feed a recording through the DGT parser, the sensor board and a tracker."""
    protocol, sensor, tracker = DgtProtocol(), SensorBoard(), GameTracker(settings)
    events: list[GameEvent] = []
    clocks: list[ClockObserved] = []
    placements: list[PlacementObserved] = []
    lines = path.read_text().split()
    for index, line in enumerate(lines):
        at = index * dt
        protocol.receive_data(base64.b64decode(line))
        for event in protocol.events_received():
            placement = sensor.receive_event(event, at)
            if placement is not None:
                placements.append(placement)
                tracker.receive_placement(placement)
            if isinstance(event, ClockTimes):
                clocks.append(clock_observation(event, at))
                tracker.receive_clock(clocks[-1])
        events.extend(tracker.events_received())
    tracker.receive_tick(len(lines) * dt + 60.0)
    events.extend(tracker.events_received())
    return Replay(tracker, events, clocks, placements)


def expected_moves(recordings_dir: Path, name: str) -> list[str]:
    """The reference game of a recording, as UCI moves."""
    if name == "johan":
        with (recordings_dir / "johan.pgn").open() as handle:
            game = chess.pgn.read_game(handle)
        assert game is not None
        return [move.uci() for move in game.mainline_moves()]
    text = (recordings_dir / f"{name}.uci").read_text()
    return re.findall(r"\b[a-h][1-8][a-h][1-8][qrbn]?\b", text)


def lever_presses(clocks: list[ClockObserved]) -> list[tuple[ClockSide, int, int]]:
    """Every change of the running side: (side pressed, time before, time right after)."""
    presses = []
    for before, after in itertools.pairwise(clocks):
        if before.running is not None and after.running not in (None, before.running):
            side = before.running
            left = side is ClockSide.LEFT
            presses.append(
                (
                    side,
                    before.left_seconds if left else before.right_seconds,
                    after.left_seconds if left else after.right_seconds,
                )
            )
    return presses


@pytest.mark.parametrize(
    ("name", "plies", "rotated", "white_side"),
    [
        ("1", 57, False, ClockSide.LEFT),
        ("2", 99, True, ClockSide.RIGHT),
        ("johan", 43, False, ClockSide.LEFT),
    ],
)
def test_recording_reproduces_its_game(
    recordings_dir: Path, name: str, plies: int, rotated: bool, white_side: ClockSide
) -> None:
    result = replay(recordings_dir / f"{name}.inbytes")
    expected = expected_moves(recordings_dir, name)
    assert len(expected) == plies
    assert final_moves(result.events) == expected
    assert [type(e) for e in result.events if isinstance(e, MovesWithdrawn)] == []
    assert [e.rotated for e in result.events if isinstance(e, GameStarted)] == [rotated]
    learned = [e.white_side for e in result.events if isinstance(e, ClockSidesLearned)]
    assert learned == [white_side]
    assert result.tracker.ply == plies


@pytest.mark.parametrize("name", ["1", "2", "johan"])
def test_every_move_carries_the_clock_after_its_lever_press(
    recordings_dir: Path, name: str
) -> None:
    result = replay(recordings_dir / f"{name}.inbytes")
    moves = [e for e in result.events if isinstance(e, MoveMade)]
    presses = lever_presses(result.clocks)
    assert len(presses) >= len(moves) - 1
    for move, (_, before, after) in zip(moves, presses, strict=False):
        assert (move.clock, move.clock_before) == (after, before)
    # Game 2 ends with White's move and no press: its [%clk] is the time shown then.
    assert all(move.clock is not None and move.emt is not None for move in moves)


@pytest.mark.parametrize(("name", "start", "increment"), [("1", 182, 2), ("johan", 305, 5)])
def test_elapsed_times_add_up_to_the_time_used(
    recordings_dir: Path, name: str, start: int, increment: int
) -> None:
    # Fischer clocks start at base + one increment (docs/protocol.md §7.2 "Observed").
    settings = TrackerSettings(increment=increment)
    result = replay(recordings_dir / f"{name}.inbytes", settings=settings)
    moves = [e for e in result.events if isinstance(e, MoveMade)]
    for parity in (0, 1):
        own = moves[parity::2]
        emts = [move.emt for move in own]
        assert None not in emts
        last = own[-1].clock
        assert last is not None
        assert sum(emt for emt in emts if emt is not None) == start + len(own) * increment - last


def test_johan_flag_fall_then_kings_signal_one_nil(recordings_dir: Path) -> None:
    result = replay(recordings_dir / "johan.inbytes")
    tail = [e for e in result.events if isinstance(e, FlagFell | ResultSignalled | MoveMade)]
    assert tail[-2:] == [
        FlagFell(color="black", result="1-0", provisional=True, at=tail[-2].at),
        ResultSignalled(result="1-0", at=tail[-1].at),
    ]
    assert result.tracker.result == "1-0"
    assert result.tracker.ply == 43


@pytest.mark.parametrize("name", ["1", "2", "johan"])
def test_no_out_of_sync_at_life_speed(recordings_dir: Path, name: str) -> None:
    result = replay(recordings_dir / f"{name}.inbytes")
    assert [e for e in result.events if isinstance(e, OutOfSync)] == []


@pytest.mark.parametrize("dt", [0.02, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("name", ["1", "2", "johan"])
def test_games_come_out_right_at_any_speed(recordings_dir: Path, name: str, dt: float) -> None:
    """At 3 s per message a slide outlasts the settle time: corrected, never left wrong."""
    result = replay(recordings_dir / f"{name}.inbytes", dt=dt)
    assert final_moves(result.events) == expected_moves(recordings_dir, name)
    withdrawn = [e.reason for e in result.events if isinstance(e, MovesWithdrawn)]
    assert set(withdrawn) <= ({"correction"} if dt > 1.0 else set())


def _legal_placements(board: chess.Board) -> dict[str, chess.Move]:
    placements = {}
    for move in board.legal_moves:
        board.push(move)
        placements[board.board_fen()] = move
        board.pop()
    return placements


@pytest.mark.parametrize(
    ("name", "ply", "passing", "played"),
    [("1", 35, "a1d1", "a1f1"), ("johan", 34, "a8d8", "a8e8"), ("2", 5, "d2d3", "d2d4")],
)
def test_a_piece_slid_through_a_legal_square_is_not_a_move(
    recordings_dir: Path, name: str, ply: int, passing: str, played: str
) -> None:
    """The naive reader's trap: the sliding piece shows a legal move on its way."""
    result = replay(recordings_dir / f"{name}.inbytes")
    board = chess.Board()
    for uci in expected_moves(recordings_dir, name)[: ply - 1]:
        board.push_uci(uci)
    legal = _legal_placements(board)
    flip = name == "2"
    seen = {
        legal[fen].uci()
        for p in result.placements
        if (
            fen := (
                p.board.transform(chess.flip_vertical).transform(chess.flip_horizontal)
                if flip
                else p.board
            ).board_fen()
        )
        in legal
    }
    assert {passing, played} <= seen
    assert final_moves(result.events)[ply - 1] == played
