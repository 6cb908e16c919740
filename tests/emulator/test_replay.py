"""Whole games through the pure firmware: the byte stream replays to the final position."""

from __future__ import annotations

import itertools
from pathlib import Path

import chess
import chess.pgn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.dgt import commands as cmd
from drivers.dgt.events import BoardDump, ClockTimes, Event, FieldUpdated
from drivers.dgt.protocol import DgtProtocol
from drivers.emulator.clock import ChessClock, ClockSettings, Side
from drivers.emulator.firmware import BoardFirmware
from drivers.emulator.physical import PhysicalBoard
from drivers.emulator.player import HumanPlayer, TimedAction
from tests.emulator.support import placement, random_games, read_game


def run(firmware: BoardFirmware, schedule: list[TimedAction], until: float) -> list[Event]:
    """Drive the firmware through a schedule, waking it at every deadline on the way."""
    protocol = DgtProtocol()
    firmware.receive_data(cmd.encode(cmd.RequestBoard()) + cmd.encode(cmd.StartUpdateNice()), 0.0)
    now = 0.0
    for timed in [*schedule, None]:
        due = until if timed is None else timed.at
        while (deadline := firmware.next_deadline(now)) is not None and deadline <= due:
            now = deadline
            firmware.receive_tick(now)
        now = due
        if timed is not None:
            firmware.receive_action(timed.action, now)
        protocol.receive_data(firmware.data_to_send())
    assert protocol.violations == 0
    return protocol.events_received()


def replay(events: list[Event], *, rotated: bool) -> chess.BaseBoard:
    """What a driver sees: the dump with every field update applied, rotation undone."""
    dump = events[0]
    assert isinstance(dump, BoardDump)
    fields = list(dump.squares)
    for event in events:
        if isinstance(event, FieldUpdated):
            fields[event.field] = event.piece
    return placement(fields, rotated=rotated)


def test_a_real_game_with_noise_replays_to_its_end(games_dir: Path) -> None:
    game = read_game(games_dir / "anastasian-lewis.pgn")
    plies = len(list(game.mainline_moves()))
    firmware = BoardFirmware(
        clock=ChessClock(ClockSettings(base_seconds=3600, increment_seconds=30))
    )
    schedule = HumanPlayer(seed=11, speed=1.0, noise=0.3).play(game)
    events = run(firmware, schedule, until=schedule[-1].at + 3.0)
    assert replay(events, rotated=False) == game.end().board()
    times = [event for event in events if isinstance(event, ClockTimes)]
    assert all(a != b for a, b in itertools.pairwise(times))  # UPDATE_NICE: on change
    flips = sum(a.right_high != b.right_high for a, b in itertools.pairwise(times))
    assert flips == plies
    ticks = [(a, b) for a, b in itertools.pairwise(times) if a.right_high == b.right_high]
    for before, after in ticks:  # between lever presses: one second less on the running side
        side: Side = "right" if before.right_high else "left"
        assert _seconds(before, side) - _seconds(after, side) in (0, 1)


def _seconds(times: ClockTimes, side: Side) -> int:
    return (times.right if side == "right" else times.left).total_seconds


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    moves=random_games(min_plies=0, max_plies=30),
    seed=st.integers(0, 2**16),
    noise=st.floats(0.0, 1.0),
    rotated=st.booleans(),
    white_side=st.sampled_from(["left", "right"]),
)
def test_noisy_random_games_replay_to_their_end(
    moves: list[chess.Move], seed: int, noise: float, rotated: bool, white_side: Side
) -> None:
    end = chess.Board()
    for move in moves:
        end.push(move)
    clock = ChessClock(ClockSettings(base_seconds=600, increment_seconds=5, lever_up=white_side))
    firmware = BoardFirmware(physical=PhysicalBoard(rotated=rotated), clock=clock)
    player = HumanPlayer(seed=seed, speed=5.0, noise=noise, white_side=white_side)
    schedule = player.play(moves)
    events = run(firmware, schedule, until=(schedule[-1].at if schedule else 0.0) + 1.0)
    assert firmware.physical.placement == end
    assert replay(events, rotated=rotated) == end
    assert clock.flagged is None
