"""Takebacks, missed replies, illegal moves, out of sync, new games, rotation, no clock."""

from __future__ import annotations

import chess
import pytest

from daemon.game.events import (
    ClockUpdated,
    FlagFell,
    GameStarted,
    InSync,
    MoveMade,
    MovesWithdrawn,
    OutOfSync,
    PositionAccepted,
)
from daemon.game.state import TrackerSettings, TrackerState
from drivers.emulator.clock import ClockSettings
from drivers.observations import LinkObserved, LinkState
from tests.game.table import Table

N = chess.Piece(chess.KNIGHT, chess.WHITE)


def started(moves: str = "", **kwargs: bool) -> Table:
    table = Table(rotated=kwargs.get("rotated", False))
    table.start_clock()
    for uci in moves.split():
        table.play(uci)
    return table


def test_takeback_withdraws_the_moves_after_the_earlier_position() -> None:
    table = started("e2e4 e7e5 g1f3")
    table.wait(2)
    table.slide(chess.F3, chess.G1)
    table.wait(10)
    assert [(w.from_ply, w.reason) for w in table.of_type(MovesWithdrawn)] == [(3, "takeback")]
    assert table.tracker.ply == 2
    table.press(chess.BLACK)  # the clock handed back to White
    table.play("d2d4")
    assert table.moves() == ["e2e4", "e7e5", "d2d4"]
    assert table.of_type(MoveMade)[-1].ply == 3


def test_takeback_of_two_plies() -> None:
    table = started("e2e4 e7e5 g1f3 b8c6")
    table.wait(2)
    table.slide(chess.C6, chess.B8)
    table.wait(0.5)
    table.slide(chess.F3, chess.G1)
    table.wait(10)
    assert [(w.from_ply, w.reason) for w in table.of_type(MovesWithdrawn)] == [(3, "takeback")]
    assert table.moves() == ["e2e4", "e7e5"]


def test_a_repeated_position_is_read_forward_not_as_a_takeback() -> None:
    # After 1. Nf3 Nf6 2. Ng1, ...Ng8 brings back the start placement: that is a move.
    table = started("g1f3 g8f6 f3g1 f6g8")
    assert table.moves() == ["g1f3", "g8f6", "f3g1", "f6g8"]
    assert table.of_type(MovesWithdrawn) == []
    assert len(table.of_type(GameStarted)) == 1


def test_takeback_over_repetitions_goes_to_the_latest_earlier_ply() -> None:
    table = started("g1f3 g8f6 f3g1 f6g8 g1f3 g8f6")
    table.wait(2)
    table.slide(chess.F6, chess.G8)
    table.wait(10)
    # Taking back 3...Nf6 shows the placement of plies 1 and 5: the latest one is meant.
    assert [(w.from_ply, w.reason) for w in table.of_type(MovesWithdrawn)] == [(6, "takeback")]
    assert table.tracker.ply == 5


def test_a_missed_quick_reply_gives_both_plies() -> None:
    """The board reports the four squares in an order where the first move alone never
    shows (field order, as a dump-based driver might see it); both presses follow."""
    table = started()
    after = chess.Board()
    after.push_uci("e2e4")
    after.push_uci("e7e5")
    table.wait(2)
    table.set_up(after)
    table.press(chess.WHITE)
    table.wait(0.5)
    table.press(chess.BLACK)
    made = table.of_type(MoveMade)
    assert [(m.ply, m.uci) for m in made] == [(1, "e2e4"), (2, "e7e5")]
    assert all(m.clock is not None for m in made)
    assert table.of_type(MovesWithdrawn) == []


def test_a_missed_quick_reply_without_clock_completes_after_settling() -> None:
    table = Table(clock=None)
    after = chess.Board()
    after.push_uci("d2d4")
    after.push_uci("d7d5")
    table.set_up(after)
    table.wait(0.5)
    assert table.moves() == []
    table.wait(1)
    assert table.moves() == ["d2d4", "d7d5"]


def test_illegal_move_reported_once_and_restored_by_the_arbiter() -> None:
    table = started("e2e4 e7e5")
    table.wait(2)
    table.slide(chess.G1, chess.G3)  # a knight cannot go there
    table.wait(0.5)
    table.press(chess.WHITE)
    table.wait(2)
    table.lift(chess.H2)  # more fiddling: still one report
    table.wait(5)
    out = table.of_type(OutOfSync)
    assert len(out) == 1
    assert out[0].expected_fen == table.tracker.board.fen()
    assert out[0].placement == "rnbqkbnr/pppp1ppp/8/4p3/4P3/6N1/PPPP1PP1/RNBQKB1R"
    assert not table.tracker.is_in_sync
    table.place(chess.H2, chess.Piece(chess.PAWN, chess.WHITE))
    table.slide(chess.G3, chess.G1)
    assert table.of_type(InSync)[-1].at == table.now
    assert table.tracker.is_in_sync
    table.play("g1f3")
    assert table.moves() == ["e2e4", "e7e5", "g1f3"]


def test_arbiter_restores_an_earlier_position_after_an_illegal_move() -> None:
    table = started("e2e4 e7e5 g1f3")
    table.wait(2)
    table.slide(chess.F8, chess.F6)  # bishop moved like a rook: illegal
    table.wait(5)
    assert len(table.of_type(OutOfSync)) == 1
    # The arbiter reinstates the position after 1...e5 (FIDE Laws 7.5).
    table.slide(chess.F6, chess.F8)
    table.slide(chess.F3, chess.G1)
    table.wait(10)
    assert len(table.of_type(InSync)) == 1
    assert [(w.from_ply, w.reason) for w in table.of_type(MovesWithdrawn)] == [(3, "takeback")]
    assert table.moves() == ["e2e4", "e7e5"]


def test_illegal_move_accepted_by_the_arbiter_and_the_game_goes_on() -> None:
    table = started("e2e4 e7e5")
    table.wait(2)
    table.slide(chess.G1, chess.G3)
    table.wait(0.5)
    table.press(chess.WHITE)  # Black's clock runs: Black is to move
    table.wait(5)
    assert table.tracker.state is TrackerState.OUT_OF_SYNC
    assert table.accept()
    accepted = table.of_type(PositionAccepted)
    assert [a.fen for a in accepted] == [
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/6N1/PPPP1PPP/RNBQKB1R b KQkq - 0 2"
    ]
    assert table.of_type(InSync)[-1].at == accepted[0].at
    table.play("b8c6")
    made = table.of_type(MoveMade)[-1]
    assert (made.ply, made.san) == (4, "Nc6")
    assert table.tracker.ply == 4


def test_accepting_without_a_clock_alternates_and_drops_lost_castling_rights() -> None:
    table = Table(clock=None)
    for uci in ("e2e4", "e7e5"):
        table.play(uci, press=False)
        table.wait(2)
    table.slide(chess.H1, chess.H3)  # illegal rook jump over the pawn
    table.wait(5)
    assert table.accept()
    assert table.tracker.board.fen() == (
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/7R/PPPP1PPP/RNBQKBN1 b Qkq - 0 2"
    )


def test_accept_refuses_a_board_without_kings() -> None:
    table = started("e2e4")
    table.wait(1)
    table.lift(chess.E8)
    table.wait(5)
    assert not table.accept()
    assert table.tracker.state is TrackerState.OUT_OF_SYNC


def test_accept_when_in_sync_changes_nothing() -> None:
    table = started("e2e4")
    assert table.accept()
    assert table.of_type(PositionAccepted) == []
    assert table.moves() == ["e2e4"]


def test_accept_completes_a_move_the_board_shows() -> None:
    table = started("e2e4")
    table.wait(1)
    table.slide(chess.E7, chess.E5)
    assert table.moves() == ["e2e4"]
    assert table.accept()
    assert table.moves() == ["e2e4", "e7e5"]


def test_out_of_sync_keeps_tracking_clock_and_flag() -> None:
    table = Table(clock=ClockSettings(base_seconds=20, increment_seconds=0))
    table.start_clock()
    table.play("e2e4")
    table.wait(1)
    table.lift(chess.A8)  # a knocked piece, left off the board
    table.wait(5)
    assert table.tracker.state is TrackerState.OUT_OF_SYNC
    updates = len(table.of_type(ClockUpdated))
    table.wait(30)
    assert len(table.of_type(ClockUpdated)) > updates
    assert [(f.color, f.result) for f in table.of_type(FlagFell)] == [("black", "1-0")]


def test_start_position_after_several_plies_is_a_new_game() -> None:
    table = started("e2e4 e7e5 g1f3 b8c6 f1c4 f8c5")
    table.wait(5)
    table.set_up(chess.BaseBoard())
    assert len(table.of_type(GameStarted)) == 2
    assert table.tracker.ply == 0
    table.start_clock()
    table.play("d2d4")
    assert table.of_type(MoveMade)[-1].ply == 1


def test_start_position_after_two_plies_is_a_takeback() -> None:
    table = started("e2e4 e7e5")
    table.wait(2)
    table.set_up(chess.BaseBoard())
    table.wait(10)
    assert len(table.of_type(GameStarted)) == 1
    assert [(w.from_ply, w.reason) for w in table.of_type(MovesWithdrawn)] == [(1, "takeback")]


def test_rotated_board_reads_real_squares() -> None:
    table = Table(rotated=True, white_side="right")
    table.start_clock()
    for uci in ("e2e4", "c7c5", "g1f3", "d7d6", "d2d4"):
        table.play(uci)
    assert table.of_type(GameStarted)[0].rotated
    assert table.moves() == ["e2e4", "c7c5", "g1f3", "d7d6", "d2d4"]
    table.wait(1)
    table.lift(chess.A1)
    table.wait(5)
    assert table.of_type(OutOfSync)[0].placement.endswith("/1NBQKB1R")


def test_a_rotated_start_during_a_game_starts_a_rotated_game() -> None:
    table = started("e2e4 e7e5")
    rotated_start = chess.BaseBoard().transform(chess.flip_vertical)
    rotated_start = rotated_start.transform(chess.flip_horizontal)
    table.set_up(rotated_start)
    assert [g.rotated for g in table.of_type(GameStarted)] == [False, True]


def test_without_clock_moves_complete_after_the_settle_time() -> None:
    table = Table(clock=None, settings=TrackerSettings(settle_time=1.0))
    table.slide(chess.E2, chess.E4)
    table.wait(0.9)
    assert table.moves() == []
    table.wait(0.2)
    made = table.of_type(MoveMade)
    assert [(m.uci, m.clock, m.emt) for m in made] == [("e2e4", None, None)]
    table.slide(chess.A7, chess.A6)  # a short pause on a6...
    table.wait(0.5)
    table.slide(chess.A6, chess.A5)  # ...then on to a5: one move
    table.wait(2)
    assert table.moves() == ["e2e4", "a7a5"]
    assert table.of_type(MovesWithdrawn) == []


def test_with_a_running_clock_a_forgotten_press_settles_later() -> None:
    table = started()
    table.wait(1)
    table.slide(chess.E2, chess.E4)
    table.wait(4)
    assert table.moves() == []
    table.wait(2)
    made = table.of_type(MoveMade)
    assert [m.uci for m in made] == ["e2e4"]
    assert made[0].clock == made[0].clock_before  # the time shown when it was seen


def test_no_timer_runs_while_the_board_is_offline() -> None:
    table = Table(clock=None)
    table.slide(chess.E2, chess.E4)
    table.tracker.receive_link(LinkObserved(state=LinkState.OFFLINE, at=table.now))
    assert table.tracker.next_deadline() is None
    table.wait(10)
    assert table.moves() == []
    table.tracker.receive_link(LinkObserved(state=LinkState.ONLINE, at=table.now))
    table.lift(chess.E4)
    table.place(chess.E4, chess.Piece(chess.PAWN, chess.WHITE))
    table.wait(2)
    assert table.moves() == ["e2e4"]


@pytest.mark.parametrize("placement", ["8/8/8/8/8/8/8/8", "rnbqkbnr/8/8/8/8/8/8/RNBQKBNR"])
def test_no_game_until_the_start_position_stands(placement: str) -> None:
    table = Table(placement=chess.BaseBoard(placement))
    table.wait(10)
    assert [e for e in table.events if not isinstance(e, ClockUpdated)] == []  # the clocks show
    assert table.tracker.state is TrackerState.WAITING
    table.set_up(chess.BaseBoard())
    assert len(table.of_type(GameStarted)) == 1


def test_accept_before_any_game_starts_one_from_the_set_up_position() -> None:
    table = Table(placement=chess.BaseBoard("4k3/8/8/8/8/8/4P3/4K3"), clock=None)
    assert table.accept()
    assert [type(e) for e in table.events] == [GameStarted, PositionAccepted]
    table.play("e2e4", press=False)
    table.wait(2)
    assert table.moves() == ["e2e4"]


def test_a_press_reported_before_the_placement_completes_the_move_when_it_shows() -> None:
    """Sensor lag: the lever press arrives before the board reports the piece put down."""
    table = started()
    table.wait(3)
    pawn = table.lift(chess.E2)
    table.wait(0.3)
    table.press(chess.WHITE)
    table.wait(0.2)
    table.place(chess.E4, pawn)
    made = table.of_type(MoveMade)
    assert [(m.uci, m.at) for m in made] == [("e2e4", table.now)]
    assert (made[0].clock_before, made[0].clock) == (179, 181)


def test_a_press_out_of_turn_never_completes_a_later_move() -> None:
    """Black presses before White moved (the clock now runs for White's opponent);
    White's move then needs White's own press, and Black's old press is no use later."""
    table = started()
    table.wait(1)
    table.press(chess.WHITE)  # White hands the clock over without moving
    table.wait(1)
    table.press(chess.BLACK)  # Black hands it back
    table.play("e2e4")
    table.wait(1)
    table.slide(chess.E7, chess.E5)
    assert table.moves() == ["e2e4"]
    table.wait(0.5)
    table.press(chess.BLACK)
    assert table.moves() == ["e2e4", "e7e5"]
