"""Catching up from a board's memory: the emulated board's EEPROM, read and replayed (pure).

The emulated firmware plays games as people do (noise: adjusted, knocked and slid
pieces); its EEPROM dump goes through the DGT reader (drivers/dgt/memory.py) and the
plan (daemon/game/recovery.py) into a tracker. Every move, and every ``[%clk]`` (the
clock's own reading at the lever press), must come out exactly.
"""

from __future__ import annotations

from pathlib import Path

import chess
import chess.pgn
import pytest

from daemon.game.events import GameStarted, MoveMade
from daemon.game.recovery import memory_needed, plan_recovery
from daemon.game.state import TrackerSettings
from daemon.game.tracker import GameTracker
from drivers.dgt.eeprom import EETag, EETagCode
from drivers.dgt.events import EEMoves
from drivers.dgt.memory import board_memory
from drivers.emulator.clock import ChessClock, ClockSettings
from drivers.emulator.eeprom import EepromLog
from drivers.emulator.firmware import BoardFirmware
from drivers.emulator.physical import PhysicalBoard
from drivers.emulator.player import HumanPlayer
from drivers.memory import BoardMemory, memory_from_payload, memory_payload
from drivers.observations import PlacementObserved
from tests.daemon.support import read_game
from tests.game.chess960_games import GAMES, chess960_game

CLOCK = ClockSettings.from_text("3+2")


def _firmware(
    *, rotated: bool = False, size: int | None = None, placement: chess.BaseBoard | None = None
) -> BoardFirmware:
    firmware = BoardFirmware(
        physical=PhysicalBoard(placement, rotated=rotated),
        clock=ChessClock(ClockSettings.from_text("3+2")),
    )
    if size is not None:
        firmware.eeprom = EepromLog(size=size)
        firmware.power_up(0.0)
    return firmware


def _play(firmware: BoardFirmware, game: chess.pgn.Game, *, at: float, seed: int = 1) -> float:
    """Play ``game`` (clock started first) from ``at``; returns the time of the last action."""
    player = HumanPlayer(seed=seed, speed=4, noise=0.3, white_side="left")
    start = chess.BaseBoard(game.board().board_fen())
    if firmware.physical.placement != start:
        firmware.receive_set_up(start, at)
    schedule = player.play(game)
    for timed in schedule:
        firmware.receive_action(timed.action, at + timed.at)
    return at + (schedule[-1].at if schedule else 0.0)


def _memory(firmware: BoardFirmware) -> BoardMemory:
    return board_memory(EEMoves.from_raw(firmware.eeprom.dump()).records)


def _feed(tracker: GameTracker, memory: BoardMemory, at: float) -> list[MoveMade]:
    return [e for e in _feed_events(tracker, memory, at) if isinstance(e, MoveMade)]


def _feed_events(tracker: GameTracker, memory: BoardMemory, at: float) -> list[object]:
    plan = plan_recovery(tracker, memory, at, start_seconds=CLOCK.start_seconds)
    assert plan is not None
    for observation in plan.observations:
        if isinstance(observation, PlacementObserved):
            tracker.receive_placement(observation)
        else:
            tracker.receive_clock(observation)
    return list(tracker.events_received())


def test_a_whole_game_comes_back_with_every_clock(games_dir: Path) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)
    firmware = _firmware()
    _play(firmware, game, at=0.0)
    tracker = GameTracker()
    assert memory_needed(tracker, firmware.physical.placement)
    moves = _feed(tracker, _memory(firmware), 1000.0)
    assert [m.uci for m in moves] == [m.uci() for m in game.mainline_moves()]
    assert [m.clock for m in moves] == [seconds for _, seconds in firmware.presses]


def test_a_rotated_board_with_earlier_games_in_its_memory(games_dir: Path) -> None:
    earlier = read_game(games_dir / "molinari-bordais-1979.pgn")
    game = read_game(games_dir / "nepomniachtchi-liren-game1.pgn")
    firmware = _firmware(rotated=True)
    at = _play(firmware, earlier, at=0.0) + 60
    firmware.receive_new_clock(ChessClock(CLOCK), at)
    firmware.presses.clear()
    firmware.receive_set_up(chess.BaseBoard(), at)
    _play(firmware, game, at=at, seed=5)
    tracker = GameTracker()
    moves = _feed(tracker, _memory(firmware), 10_000.0)
    assert tracker.rotated
    assert [m.uci for m in moves] == [m.uci() for m in game.mainline_moves()]
    assert [m.clock for m in moves] == [seconds for _, seconds in firmware.presses]


def test_a_tracker_that_knows_the_start_of_the_game_gets_only_the_rest(games_dir: Path) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)
    firmware = _firmware()
    at = _play(firmware, game, at=0.0)
    memory = _memory(firmware)
    first = GameTracker()
    _feed(first, memory, 1000.0)
    known = GameTracker()
    partial = BoardMemory(steps=memory.steps[: len(memory.steps) // 2])
    seen = _feed(known, partial, 500.0)
    assert 5 < len(seen) < 35
    rest = _feed(known, memory, 1000.0 + at)
    assert [m.ply for m in rest] == list(range(len(seen) + 1, 38))
    assert [m.uci for m in seen + rest] == [m.uci() for m in game.mainline_moves()]


def test_a_repetition_does_not_skip_plies() -> None:
    line = ["e2e4", "e7e5"] + ["g1f3", "g8f6", "f3g1", "f6g8"] * 2 + ["d2d4"]
    game = chess.pgn.Game()
    node: chess.pgn.GameNode = game
    for uci in line:
        node = node.add_variation(chess.Move.from_uci(uci))
    firmware = _firmware()
    _play(firmware, game, at=0.0)
    memory = _memory(firmware)
    known = GameTracker()
    cut = next(i for i in range(len(memory.steps)) if _plies(memory, i) == 2)
    assert [m.uci for m in _feed(known, BoardMemory(steps=memory.steps[:cut]), 10.0)] == line[:2]
    rest = _feed(known, memory, 500.0)
    assert [m.uci for m in rest] == line[2:]


def _plies(memory: BoardMemory, end: int) -> int:
    part = BoardMemory(steps=memory.steps[:end])
    if plan_recovery(GameTracker(), part, 1.0) is None:
        return 0
    return len(_feed(GameTracker(), part, 1.0))


def test_a_wrapped_memory_without_the_start_follows_the_last_placement(games_dir: Path) -> None:
    game = read_game(games_dir / "kasparov-deep-blue-1997.pgn", 5)
    firmware = _firmware(size=400)  # a few plies only: the start is overwritten
    _play(firmware, game, at=0.0)
    memory = _memory(firmware)
    assert memory.dropped > 0 or not memory.steps
    tracker = GameTracker()
    assert plan_recovery(tracker, memory, 1.0) is None  # no game known, no start: lost


def test_the_journal_payload_round_trips(games_dir: Path) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")
    firmware = _firmware()
    _play(firmware, game, at=0.0)
    memory = _memory(firmware)
    assert memory_from_payload(memory_payload(memory)) == memory


CHESS960 = TrackerSettings(chess960=True)


@pytest.mark.parametrize("rotated", [False, True])
@pytest.mark.parametrize("number", sorted(GAMES))
def test_a_chess960_game_comes_back_castling_and_clocks_included(
    number: int, rotated: bool
) -> None:
    game = chess960_game(number)
    firmware = _firmware(rotated=rotated)
    _play(firmware, game, at=0.0, seed=number)
    records = EEMoves.from_raw(firmware.eeprom.dump()).records
    assert EETag(tag=EETagCode.FOUR_ROWS) in records  # the board marks the start (§6)
    memory = _memory(firmware)
    assert _feed(GameTracker(), memory, 1.0) == []  # a standard section: no game starts
    tracker = GameTracker(CHESS960)
    assert memory_needed(tracker, firmware.physical.placement)
    assert not memory_needed(tracker, chess.BaseBoard(game.board().board_fen()))
    events = _feed_events(tracker, memory, 1000.0)
    started = [e for e in events if isinstance(e, GameStarted)]
    assert [(e.chess960, e.rotated) for e in started] == [(number, rotated)]
    moves = [e for e in events if isinstance(e, MoveMade)]
    assert [m.uci for m in moves] == [m.uci() for m in game.mainline_moves()]
    assert [m.clock for m in moves] == [seconds for _, seconds in firmware.presses]


def test_a_tracker_that_knows_a_chess960_game_gets_the_rest_castling_included() -> None:
    game = chess960_game(672)
    start = chess.BaseBoard(game.board().board_fen())
    firmware = _firmware(rotated=True, placement=start)  # switched on set up: no other start
    at = _play(firmware, game, at=0.0)
    memory = _memory(firmware)
    known = GameTracker(CHESS960)
    cut = next(i for i in range(len(memory.steps)) if _chess960_plies(memory, i) == 3)
    seen = _feed(known, BoardMemory(steps=memory.steps[:cut]), 500.0)
    assert len(seen) == 3  # the castling moves (plies 5 and 6) are still to come
    rest = _feed(known, memory, 1000.0 + at)
    assert [m.ply for m in rest] == list(range(4, 27))
    assert [m.uci for m in seen + rest] == [m.uci() for m in game.mainline_moves()]
    assert [m.clock for m in seen + rest] == [seconds for _, seconds in firmware.presses]


def test_a_new_chess960_game_after_the_known_one_comes_back_whole() -> None:
    known = GameTracker(CHESS960)
    firmware = _firmware()
    _play(firmware, chess960_game(194), at=0.0)
    assert len(_feed(known, _memory(firmware), 500.0)) == 18
    firmware.receive_new_clock(ChessClock(CLOCK), 600.0)
    firmware.presses.clear()
    game = chess960_game(672)
    _play(firmware, game, at=600.0, seed=7)
    events = _feed_events(known, _memory(firmware), 2000.0)
    started = [e.chess960 for e in events if isinstance(e, GameStarted)]
    assert started == [672]
    moves = [e for e in events if isinstance(e, MoveMade)]
    assert [m.uci for m in moves] == [m.uci() for m in game.mainline_moves()]
    assert [m.clock for m in moves] == [seconds for _, seconds in firmware.presses]


def _chess960_plies(memory: BoardMemory, end: int) -> int:
    part = BoardMemory(steps=memory.steps[:end])
    if plan_recovery(GameTracker(CHESS960), part, 1.0) is None:
        return 0
    return len(_feed(GameTracker(CHESS960), part, 1.0))
