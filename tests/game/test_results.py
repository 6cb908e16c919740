"""Results on the board: the kings gesture (docs/protocol.md §9.1), flags (FIDE Laws 6.9),
checkmate, stalemate and dead positions (FIDE Laws 5)."""

from __future__ import annotations

import chess
import pytest

from daemon.game.events import (
    FlagFell,
    GameEnded,
    GameStarted,
    MoveMade,
    MovesWithdrawn,
    OutOfSync,
    ResultSignalled,
)
from daemon.game.record import GameRecord
from daemon.game.state import TrackerSettings, TrackerState
from drivers.emulator.clock import ClockSettings
from drivers.emulator.player import HumanPlayer
from drivers.observations import ClockSide
from tests.game.table import BLITZ, Table


def from_position(fen: str, clock: ClockSettings | None = BLITZ) -> Table:
    """A game from a set-up position, White to move (clock running if there is one)."""
    settings = TrackerSettings(white_side=ClockSide.LEFT)
    table = Table(placement=chess.Board(fen), settings=settings, clock=clock)
    table.start_clock()
    assert table.accept()
    return table


def started(moves: str) -> Table:
    table = Table()
    table.start_clock()
    for uci in moves.split():
        table.play(uci)
    return table


@pytest.mark.parametrize("result", ["1-0", "0-1", "1/2-1/2"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kings_gesture_signals_each_result(result: str, seed: int) -> None:
    # The centre is crowded after these moves: pieces in the way are taken off first.
    table = started("e2e4 e7e5 d2d4 d7d5 g1f3 b8c6")
    actions = HumanPlayer(seed=seed).signal_result(
        table.physical.placement, result, at=table.now + 2
    )
    table.apply(actions)
    table.wait(10)
    assert [(e.result) for e in table.of_type(ResultSignalled)] == [result]
    assert table.tracker.result == result
    assert table.tracker.state is TrackerState.ENDED
    assert table.tracker.ply == 6
    assert table.of_type(OutOfSync) == []


@pytest.mark.parametrize(
    ("white", "black", "result"),
    [
        (chess.E4, chess.D5, "1-0"),
        (chess.D5, chess.E4, "1-0"),
        (chess.E5, chess.D4, "0-1"),
        (chess.D5, chess.E5, "1/2-1/2"),
        (chess.D4, chess.E4, "1/2-1/2"),
        (chess.D4, chess.D5, "1/2-1/2"),
        (chess.E5, chess.E4, "1/2-1/2"),
    ],
)
@pytest.mark.parametrize("clock", [BLITZ, None])
def test_a_legal_first_king_move_is_never_recorded(
    white: int, black: int, result: str, clock: ClockSettings | None
) -> None:
    """White's king steps to the centre (a legal move), then Black's king joins it."""
    table = from_position("8/p7/6k1/8/8/3K4/P7/8 w - - 0 1", clock=clock)
    table.wait(3)
    table.slide(chess.D3, white)
    table.wait(2.5)
    table.slide(chess.G6, black)
    table.wait(30)
    assert table.of_type(MoveMade) == []
    assert [e.result for e in table.of_type(ResultSignalled)] == [result]


def test_a_king_passing_the_centre_signals_nothing() -> None:
    table = from_position("8/p7/8/4k3/8/3K4/P7/8 w - - 0 1")
    table.wait(2)
    table.slide(chess.D3, chess.D4)  # kings side by side for a moment: a stage
    table.wait(0.5)
    table.slide(chess.D4, chess.C3)
    table.wait(0.5)
    table.press(chess.WHITE)
    table.wait(10)
    assert table.of_type(ResultSignalled) == []
    assert table.moves() == ["d3c3"]


def test_kings_gesture_ends_an_out_of_sync_game() -> None:
    table = started("e2e4 e7e5")
    table.wait(1)
    table.lift(chess.A2)
    table.wait(5)
    assert len(table.of_type(OutOfSync)) == 1
    actions = HumanPlayer(seed=5).signal_result(table.physical.placement, "0-1", at=table.now)
    table.apply(actions)
    table.wait(10)
    assert [e.result for e in table.of_type(ResultSignalled)] == ["0-1"]


def test_after_the_result_nothing_is_recorded_until_a_new_game() -> None:
    table = started("e2e4 e7e5")
    table.apply(HumanPlayer(seed=1).signal_result(table.physical.placement, "1-0", at=table.now))
    table.wait(10)
    table.lift(chess.A2)
    table.wait(10)
    assert table.of_type(OutOfSync) == []
    assert table.tracker.ply == 2
    table.set_up(chess.BaseBoard())
    assert len(table.of_type(GameStarted)) == 2
    assert table.tracker.result == "*"


@pytest.mark.parametrize(
    ("fen", "flagged", "result"),
    [
        # White out of time; Black has king and rook: a loss.
        ("4k2r/8/8/8/8/8/8/4K3 w - - 0 1", "white", "0-1"),
        # White out of time; Black has a bare king: cannot mate, a draw.
        ("4k3/8/8/8/8/8/8/4K2R w - - 0 1", "white", "1/2-1/2"),
        # Against White's rook a lone knight could still mate (a helpmate): a loss.
        ("4k3/8/8/8/8/8/4n3/4K2R w - - 0 1", "white", "0-1"),
        # Black out of time (White moves at once); White can mate: a loss for Black.
        ("4k3/8/8/8/8/8/4n3/4K2R b - - 0 1", "black", "1-0"),
        # Black out of time; White has king and bishop only: a draw.
        ("4k3/8/8/8/8/8/r7/4KB2 b - - 0 1", "black", "1/2-1/2"),
    ],
)
def test_flag_fall_loses_unless_the_opponent_cannot_mate(
    fen: str, flagged: str, result: str
) -> None:
    clock = ClockSettings(base_seconds=10, increment_seconds=0)
    settings = TrackerSettings(white_side=ClockSide.LEFT)
    table = Table(placement=chess.Board(fen), settings=settings, clock=clock)
    table.start_clock()
    if flagged == "black":
        table.press(chess.WHITE)  # Black's clock runs
    assert table.accept()
    table.wait(30)
    fell = table.of_type(FlagFell)
    assert [(f.color, f.result, f.provisional) for f in fell] == [(flagged, result, True)]
    assert table.tracker.result == "*"  # a flag is the arbiter's to confirm


def test_flag_fall_is_reported_once_and_the_game_goes_on() -> None:
    table = Table(clock=ClockSettings(base_seconds=8, increment_seconds=0))
    table.start_clock()
    table.play("e2e4", think=1)
    table.wait(20)
    table.play("e7e5")  # the arbiter did not see it; play continues
    table.wait(5)
    assert [(f.color, f.result) for f in table.of_type(FlagFell)] == [("black", "1-0")]
    assert table.moves() == ["e2e4", "e7e5"]


def test_no_flag_after_checkmate() -> None:
    table = Table(clock=ClockSettings(base_seconds=60, increment_seconds=0))
    table.start_clock()
    for uci in ("f2f3", "e7e5", "g2g4", "d8h4"):
        table.play(uci, think=1)
    table.wait(120)
    assert [(e.result, e.termination) for e in table.of_type(GameEnded)] == [("0-1", "checkmate")]
    assert table.of_type(FlagFell) == []
    assert table.tracker.result == "0-1"


def test_a_mate_the_boards_memory_withdraws_lets_the_game_go_on() -> None:
    """A lost field update made the board's own line end in mate; the memory read that
    corrects it withdraws those plies: the game goes on, the record's result with it."""
    table = Table(clock=ClockSettings(base_seconds=60, increment_seconds=0))
    table.start_clock()
    for uci in ("f2f3", "e7e5", "g2g4", "d8h4"):
        table.play(uci, think=1)
    record = GameRecord()
    for event in table.events:
        record.receive_event(event)
    assert (table.tracker.state, record.result) == (TrackerState.ENDED, "0-1")
    table.tracker.withdraw(2, table.now)
    for event in table.tracker.events_received():
        record.receive_event(event)
    assert (table.tracker.state, table.tracker.result) == (TrackerState.PLAYING, "*")
    assert (record.result, [move.uci for move in record.moves]) == ("*", ["f2f3", "e7e5"])
    assert table.tracker.play_line([chess.Move.from_uci("g2g3")], table.now)
    assert table.tracker.ply == 3


def test_stalemate_ends_the_game() -> None:
    table = from_position("k7/8/8/2Q5/8/8/8/7K w - - 0 1")
    table.play("c5b6")
    ended = table.of_type(GameEnded)
    assert [(e.result, e.termination) for e in ended] == [("1/2-1/2", "stalemate")]


def test_a_capture_into_a_dead_position_ends_the_game() -> None:
    table = from_position("4k3/8/8/8/8/8/4n3/4KB2 w - - 0 1")
    table.play("e1e2")
    ended = table.of_type(GameEnded)
    assert [(e.result, e.termination) for e in ended] == [("1/2-1/2", "insufficient material")]


def test_a_reply_completes_a_held_king_move_without_a_clock() -> None:
    """Ke4 waits for a possible gesture; Black's reply shows it was a move."""
    table = from_position("4k3/p7/8/8/8/5K2/P7/8 w - - 0 1", clock=None)
    table.slide(chess.F3, chess.E4)
    table.wait(2)
    assert table.moves() == []
    table.slide(chess.A7, chess.A6)
    assert table.moves() == ["f3e4"]
    table.wait(1.5)
    table.slide(chess.E4, chess.D5)
    table.wait(6)
    assert table.moves() == ["f3e4", "a7a6", "e4d5"]
    assert table.of_type(MovesWithdrawn) == []
