"""The arbiter alert engine: each alert once, with its details; acks; the result flow.

How alerts resolve (their life cycle) is tested in test_alert_lifecycle.py.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest

from base.colors import Color
from broadcast.feed.alerts import Alert, AlertStep
from broadcast.feed.messages import to_json_dict
from daemon.arbiter.decisions import DECISION_KINDS, AlertSettings, Decision
from daemon.arbiter.engine import AlertEngine
from daemon.arbiter.results import CommandRefused, ResultSource
from daemon.arbiter.watch import BoardRules
from daemon.config.model import load_config
from daemon.game.durations import TimeControl
from daemon.game.events import (
    ClockUpdated,
    FlagFell,
    GameEnded,
    GameEvent,
    GameStarted,
    InSync,
    MoveMade,
    MovesWithdrawn,
    OutOfSync,
    PositionAccepted,
    ResultSignalled,
)
from daemon.game.tracker import GameTracker
from daemon.journal.store import Journal
from drivers.dgt.events import ClockTimes
from drivers.dgt.observe import SensorBoard, clock_observation
from drivers.dgt.protocol import DgtProtocol
from tests.shared_data import ROOT

T0 = 1_750_000_000.0  # round start
START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
AFTER_E5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
RAPID = TimeControl.from_pgn("5400+30")


def rules(
    *, default_time: float = 60.0, warning: float = 20.0, has_eboard: bool = True
) -> BoardRules:
    return BoardRules(
        round_start=T0,
        default_time=default_time,
        warning=warning,
        time_control=RAPID,
        has_eboard=has_eboard,
    )


def make_engine(*, default_time: float = 60.0) -> AlertEngine:
    """Boards 1 and 2 with e-boards, board 3 without."""
    eboard = rules(default_time=default_time)
    return AlertEngine(AlertSettings(boards={1: eboard, 2: eboard, 3: rules(has_eboard=False)}))


def e4(at: float) -> MoveMade:
    return MoveMade(
        ply=1, uci="e2e4", san="e4", clock=5430, clock_before=5400, emt=30, fen=AFTER_E4, at=at
    )


def e5(at: float) -> MoveMade:
    return MoveMade(
        ply=2, uci="e7e5", san="e5", clock=5430, clock_before=5400, emt=30, fen=AFTER_E5, at=at
    )


def feed(engine: AlertEngine, board: int, *events: GameEvent) -> list[Alert]:
    for event in events:
        engine.receive_game_event(board, event)
    return engine.alerts_raised()


def kinds(alerts: list[Alert]) -> list[str]:
    return [alert.kind for alert in alerts]


# -- flag fall -------------------------------------------------------------------------------


def test_flag_fall_raised_once_with_the_provisional_result() -> None:
    engine = make_engine()
    flag = FlagFell(color="white", result="0-1", provisional=True, at=T0 + 4000)
    (alert,) = feed(engine, 1, GameStarted(rotated=False, at=T0), e4(T0 + 5), flag)
    assert (alert.id, alert.kind, alert.board, alert.at) == (1, "flag_fall", 1, T0 + 4000)
    assert alert.details == {"color": "white", "result": "0-1", "provisional": True}
    assert "White's flag fell" in alert.action
    assert "White loses: 0-1 (FIDE 6.9)" in alert.action
    state = engine.result_of(1)
    assert state is not None
    assert (state.result, state.source, state.confirmed) == ("0-1", ResultSource.FLAG_FALL, False)
    assert feed(engine, 1, flag) == []


def test_flag_fall_against_a_lone_king_proposes_a_draw() -> None:
    engine = make_engine()
    flag = FlagFell(color="black", result="1/2-1/2", provisional=True, at=T0 + 10)
    (alert,) = feed(engine, 2, flag)
    assert "drawn, as the opponent cannot checkmate: 1/2-1/2" in alert.action
    state = engine.result_of(2)
    assert state is not None
    assert state.result == "1/2-1/2"


def test_a_flag_in_a_new_game_while_the_first_waits_for_its_decision_is_the_same_alert() -> None:
    engine = make_engine()
    flag = FlagFell(color="white", result="0-1", provisional=True, at=T0 + 10)
    (first,) = feed(engine, 1, GameStarted(rotated=False, at=T0), flag)
    again = FlagFell(color="black", result="1-0", provisional=True, at=T0 + 99)
    (updated,) = feed(engine, 1, GameStarted(rotated=False, at=T0 + 50), again)
    assert (updated.id, updated.details["color"], updated.is_open) == (first.id, "black", True)
    assert [step.step for step in updated.history] == ["raised", "updated"]
    assert engine.open_alerts == [updated]


# -- late arrival (FIDE 6.7) ----------------------------------------------------------------


def test_late_white_gets_a_warning_then_the_default_alert_with_the_forfeit() -> None:
    engine = make_engine()
    assert engine.next_deadline() == T0 + 40
    engine.receive_tick(T0 + 39.9)
    assert engine.alerts_raised() == []
    engine.receive_tick(T0 + 40)
    warning_1, warning_2 = engine.alerts_raised()
    assert (warning_1.board, warning_2.board) == (1, 2)
    assert warning_1.kind == "late_arrival"
    assert warning_1.at == T0 + 40
    assert warning_1.details == {
        "stage": "warning",
        "color": "white",
        "default_at": T0 + 60,
        "board_online": True,
    }
    assert engine.result_of(1) is None
    assert engine.next_deadline() == T0 + 60
    engine.receive_game_event(2, e4(T0 + 50))
    (moved,) = engine.alerts_raised()  # White came: board 2's warning resolves
    assert (moved.board, moved.state, moved.history[-1].note) == (
        2,
        "resolved",
        "White made a move",
    )
    engine.receive_game_event(2, e5(T0 + 55))
    engine.receive_tick(T0 + 61)
    (alert,) = engine.alerts_raised()  # board 1's warning, now the default stage
    assert (alert.id, alert.board, alert.at) == (warning_1.id, 1, T0 + 40)
    assert (alert.history[-1].step, alert.history[-1].at) == ("updated", T0 + 60)
    assert alert.details == {
        "stage": "default",
        "color": "white",
        "default_at": T0 + 60,
        "board_online": True,
        "result": "-+",
    }
    assert "only White's absence is provable" in alert.action
    assert "confirm the forfeit -+" in alert.action
    state = engine.result_of(1)
    assert state is not None
    assert (state.result, state.source, state.confirmed) == ("-+", ResultSource.LATE_ARRIVAL, False)
    engine.receive_tick(T0 + 3600)
    assert engine.alerts_raised() == []
    assert engine.next_deadline() is None


def test_late_black_when_white_moved_and_black_did_not_reply() -> None:
    engine = make_engine()
    engine.receive_game_event(1, e4(T0 + 3))
    engine.receive_tick(T0 + 40)
    warnings = engine.alerts_raised()
    assert [(a.board, a.details["color"]) for a in warnings] == [(1, "black"), (2, "white")]
    engine.receive_game_event(2, e4(T0 + 45))
    engine.receive_game_event(2, e5(T0 + 59))
    engine.receive_tick(T0 + 60)
    resolved, alert = engine.alerts_raised()
    assert (resolved.board, resolved.state) == (2, "resolved")
    assert (alert.board, alert.details["color"], alert.details["result"]) == (1, "black", "+-")
    assert "White has moved; Black has not replied" in alert.action
    state = engine.result_of(1)
    assert state is not None
    assert state.result == "+-"


def test_presence_counts_at_the_default_time_not_when_the_tick_comes() -> None:
    engine = make_engine()
    engine.receive_game_event(1, e4(T0 + 75))  # White arrived after the default time
    engine.receive_game_event(2, e4(T0 + 10))
    engine.receive_game_event(2, e5(T0 + 20))
    engine.receive_tick(T0 + 1000)  # the daemon was late: only the default stage remains
    (alert,) = engine.alerts_raised()
    assert (alert.board, alert.at, alert.details["stage"]) == (1, T0 + 60, "default")
    assert alert.details["color"] == "white"


def test_a_zero_default_time_raises_no_late_arrival() -> None:
    # FIDE 6.7's default when the regulations state none: a player absent at the start
    # loses, which the arbiter sees at the board; a board cannot prove it at once.
    engine = make_engine(default_time=0.0)
    assert engine.next_deadline() is None
    engine.receive_tick(T0 + 3600)
    assert engine.alerts_raised() == []


def _unscheduled(default_time: float = 60.0, section: str = "") -> BoardRules:
    return BoardRules(
        round_start=None,
        default_time=default_time,
        warning=20.0,
        time_control=RAPID,
        section=section,
    )


def test_without_a_start_time_the_sections_first_clock_starts_the_round() -> None:
    boards = {1: _unscheduled(), 2: _unscheduled(), 5: _unscheduled(section="U12")}
    engine = AlertEngine(AlertSettings(boards=boards))
    engine.receive_tick(T0 + 3600)  # the daemon has run an hour: nothing started yet
    assert engine.alerts_raised() == []
    assert engine.next_deadline() is None
    start = T0 + 3600
    feed(engine, 1, GameStarted(rotated=False, at=start - 30), clock(5430, 5430, "white", start))
    assert engine.next_deadline() == start + 40  # board 1's clock started the section's round
    engine.receive_tick(start + 60)
    alerts = engine.alerts_raised()
    assert [(a.board, a.details["stage"]) for a in alerts] == [(1, "default"), (2, "default")]
    assert alerts[1].details["default_at"] == start + 60
    assert "the default time (1m) has passed" in alerts[1].action


def test_a_new_round_waits_for_its_first_clock_again() -> None:
    engine = AlertEngine(AlertSettings(boards={1: _unscheduled()}))
    feed(engine, 1, GameStarted(rotated=False, at=T0), clock(5430, 5430, "white", T0))
    feed(engine, 1, e4(T0 + 5))
    engine.receive_tick(T0 + 600)  # White moved; Black never did: the default alert
    assert kinds(engine.alerts_raised()) == ["late_arrival"]
    late = engine.alerts[0]
    engine.new_round(1, _unscheduled(), T0 + 3600)
    engine.receive_tick(T0 + 7200)
    # the old round's alert resolves; the new round raises nothing before its first clock
    assert [(a.id, a.is_open) for a in engine.alerts_raised()] == [(late.id, False)]
    assert engine.next_deadline() is None


def test_no_late_arrival_without_eboard_or_with_a_result_already_set() -> None:
    engine = AlertEngine(AlertSettings(boards={1: rules(), 3: rules(has_eboard=False)}))
    engine.set_result(1, "+-", T0 - 600)  # a known forfeit, entered before the round
    engine.receive_tick(T0 + 3600)
    assert engine.alerts_raised() == []


def test_late_arrival_on_an_offline_board_says_so() -> None:
    engine = make_engine()
    engine.receive_link(1, online=False, at=T0 - 5)
    engine.receive_tick(T0 + 60)
    alerts = [a for a in engine.alerts_raised() if a.kind == "late_arrival" and a.board == 1]
    assert alerts[0].details["board_online"] is False
    assert "The e-board is offline: look at the board." in alerts[0].action


# -- links -----------------------------------------------------------------------------------


def test_board_offline_once_per_episode_and_back_online() -> None:
    engine = make_engine()
    engine.receive_link(1, online=True, at=T0)
    assert engine.alerts_raised() == []
    for at in (T0 + 10, T0 + 11, T0 + 12):
        engine.receive_link(1, online=False, at=at)
    (offline,) = engine.alerts_raised()
    assert (offline.kind, offline.at, offline.details) == (
        "board_offline",
        T0 + 10,
        {"since": T0 + 10},
    )
    assert "USB cable" in offline.action
    engine.receive_link(1, online=True, at=T0 + 40)
    engine.receive_link(1, online=True, at=T0 + 41)
    (online,) = engine.alerts_raised()  # back online: the same alert, resolved
    assert (online.id, online.kind, online.state) == (offline.id, "board_offline", "resolved")
    assert online.history[-1] == AlertStep(
        step="resolved", at=T0 + 40, by="dgtcast", note="the e-board answers again after 30s"
    )
    engine.receive_link(1, online=False, at=T0 + 50)
    (again,) = engine.alerts_raised()
    assert (again.kind, again.id, again.is_open) == ("board_offline", offline.id + 1, True)


def test_a_board_that_never_comes_up_is_offline() -> None:
    engine = make_engine()
    engine.receive_link(2, online=False, at=T0 - 100)
    assert kinds(engine.alerts_raised()) == ["board_offline"]


def test_clock_unplugged_once_per_episode() -> None:
    engine = make_engine()
    engine.receive_clock_link(1, connected=True, at=T0)
    for second in range(5):
        engine.receive_clock_link(1, connected=False, at=T0 + 20 + second)
    (unplugged,) = engine.alerts_raised()
    assert (unplugged.kind, unplugged.at) == ("clock_offline", T0 + 20)
    engine.receive_clock_link(1, connected=True, at=T0 + 30)
    engine.receive_clock_link(1, connected=False, at=T0 + 40)
    back, again = engine.alerts_raised()
    assert (back.id, back.state, back.history[-1].note) == (
        unplugged.id,
        "resolved",
        "a clock answers again",
    )
    assert (again.kind, again.is_open) == ("clock_offline", True)


def test_unknown_boards_are_misuse() -> None:
    engine = make_engine()
    with pytest.raises(ValueError, match="board 9 is not configured"):
        engine.receive_link(9, online=False, at=T0)


# -- sync ------------------------------------------------------------------------------------


def test_out_of_sync_raised_once_per_episode_with_the_positions() -> None:
    engine = make_engine()
    lost = OutOfSync(expected_fen=AFTER_E4, placement="8/8/8/8/8/8/8/8", at=T0 + 30)
    (alert,) = feed(engine, 1, GameStarted(rotated=False, at=T0), e4(T0 + 10), lost)
    assert alert.kind == "out_of_sync"
    assert alert.details == {"expected_fen": AFTER_E4, "placement": "8/8/8/8/8/8/8/8"}
    assert "FIDE 7.5" in alert.action
    again = OutOfSync(expected_fen=AFTER_E4, placement="8/8/8/8/8/8/8/8", at=T0 + 35)
    assert feed(engine, 1, again) == []
    relost = OutOfSync(expected_fen=AFTER_E4, placement="8/8/8/8/8/8/8/K7", at=T0 + 60)
    synced, second = feed(engine, 1, InSync(at=T0 + 40), relost)
    assert (synced.id, synced.state, second.is_open) == (alert.id, "resolved", True)
    assert synced.history[-1].note == "the pieces match the game again"
    engine.accept_position(1, T0 + 80)  # the arbiter's accept_position, before the tracker's
    after = OutOfSync(expected_fen=AFTER_E4, placement="8/8/8/8/8/8/8/k7", at=T0 + 90)
    accepted, third = feed(engine, 1, PositionAccepted(fen=AFTER_E4, at=T0 + 80), after)
    assert (accepted.id, accepted.state, accepted.history[-1].by) == (
        second.id,
        "resolved",
        "arbiter",
    )
    assert (third.kind, third.is_open) == ("out_of_sync", True)


# -- clock checks ----------------------------------------------------------------------------


def clock(white: float, black: float, running: Color | None, at: float) -> ClockUpdated:
    return ClockUpdated(white=white, black=black, running=running, at=at)


def test_clock_set_to_the_wrong_time_at_the_start() -> None:
    engine = make_engine()
    paused = clock(3600, 3600, None, T0)  # checked at White's first press, not before
    assert feed(engine, 1, GameStarted(rotated=False, at=T0), paused) == []
    assert feed(engine, 1, clock(3600, 3600, "white", T0 + 1)) == []
    before = clock(3590, 3600, "white", T0 + 11)
    (alert,) = feed(engine, 1, before, clock(3620, 3600, "black", T0 + 11.3), e4(T0 + 11.3))
    assert alert.kind == "clock_mismatch"
    assert alert.details == {
        "check": "start",
        "white": 3590,
        "black": 3600,
        "expected": [5400, 5430],
        "time_control": "5400+30",
    }
    assert "not the time control 1h30m + 30s" in alert.action
    assert feed(engine, 1, clock(3620, 3590, "black", T0 + 21)) == []


def test_a_clock_still_showing_the_last_round_and_then_set_raises_nothing() -> None:
    engine = make_engine()
    last_round = clock(1234, 876, None, T0 - 120)
    assert feed(engine, 1, GameStarted(rotated=False, at=T0 - 130), last_round) == []
    assert feed(engine, 1, clock(5430, 5430, None, T0 - 60)) == []  # "Set clocks"
    assert feed(engine, 1, clock(5430, 5430, "white", T0)) == []


@pytest.mark.parametrize(
    "presses",
    [
        # Black's lever pressed to start White's time (Black's ran: play with its lever up)
        [clock(5430, 5430, "black", T0), clock(5430, 5429, "white", T0 + 1)],
        # White's lever pressed before moving (Black's time starts), then Black's
        [
            clock(5430, 5430, "white", T0),
            clock(5429, 5430, "black", T0 + 1),
            clock(5429, 5429, "white", T0 + 2),
        ],
    ],
)
def test_presses_that_only_start_the_clock_are_no_moves(presses: list[ClockUpdated]) -> None:
    engine = make_engine()
    assert feed(engine, 1, GameStarted(rotated=False, at=T0 - 10), *presses) == []
    # White's move 1 and its press (mode 23: dgtcast added the 30 s), Black's reply
    move_1 = clock(5425 + 30, 5429, "black", T0 + 8)
    assert feed(engine, 1, clock(5425, 5429, "white", T0 + 7), move_1, e4(T0 + 8)) == []
    reply = [clock(5455, 5421, "black", T0 + 16), clock(5455, 5421 + 30, "white", T0 + 17)]
    assert feed(engine, 1, *reply) == []


def test_whites_first_press_without_its_increment_is_still_a_mismatch() -> None:
    engine = make_engine()
    feed(engine, 1, GameStarted(rotated=False, at=T0 - 10), clock(5430, 5430, "white", T0))
    no_bonus = clock(5425, 5430, "black", T0 + 8)
    (alert,) = feed(engine, 1, clock(5425, 5430, "white", T0 + 7), no_bonus, e4(T0 + 8))
    assert alert.details == {"check": "increment", "color": "white", "move": 1, "added": 0}


def test_a_press_after_lost_readings_is_measured_from_an_older_reading() -> None:
    """Two readings lost before White's press: the one before it is 2 s old, White ran
    meanwhile, and the gain seen is short by that much, not by a wrong increment."""
    engine = make_engine()
    feed(engine, 1, GameStarted(rotated=False, at=T0 - 10), clock(5430, 5430, "white", T0))
    before = clock(5420, 5430, "white", T0 + 10)
    press = clock(5448, 5430, "black", T0 + 12.01)  # 30 s added to 5418
    assert feed(engine, 1, before, press, e4(T0 + 12.01)) == []
    short = clock(5448, 5420, "black", T0 + 22), clock(5448, 5448, "white", T0 + 23)
    (alert,) = feed(engine, 1, *short)  # a reading a second old: 2 s short is wrong
    assert alert.details == {"check": "increment", "color": "black", "move": 1, "added": 28}


@pytest.mark.parametrize(
    "first",
    [
        clock(5430, 5430, None, T0 - 60),
        clock(5400, 5400, None, T0 - 60),
        clock(5430, 5430, "white", T0),
        clock(5410, 5430, "white", T0 + 20),  # the daemon came up 20 s into the round
    ],
)
def test_a_correctly_set_clock_raises_nothing(first: ClockUpdated) -> None:
    engine = make_engine()
    assert feed(engine, 1, GameStarted(rotated=False, at=T0 - 100), first) == []


def test_a_running_clock_far_below_the_base_is_a_mismatch() -> None:
    engine = make_engine()
    started: list[GameEvent] = [
        GameStarted(rotated=False, at=T0),
        clock(2400, 5430, "white", T0 + 5),
    ]
    press: list[GameEvent] = [clock(2430, 5430, "black", T0 + 5.3), e4(T0 + 5.3)]
    assert kinds(feed(engine, 1, *started, *press)) == ["clock_mismatch"]


@pytest.mark.parametrize(
    "events",
    [
        [GameStarted(rotated=False, at=T0), e4(T0 + 5), clock(100, 100, "black", T0 + 6)],
        # sides learned from White's first press: its reading comes before the MoveMade
        [GameStarted(rotated=False, at=T0), clock(5460, 5430, "black", T0 + 6), e4(T0 + 6)],
        # no start position seen (the daemon came up mid-game), or a position accepted
        [clock(1200, 900, "white", T0 + 2400)],
        [
            GameStarted(rotated=False, at=T0),
            PositionAccepted(fen=AFTER_E4, at=T0 + 2),
            clock(1200, 900, "black", T0 + 3),
        ],
    ],
)
def test_readings_that_are_not_a_game_start_are_not_checked(events: list[GameEvent]) -> None:
    assert feed(make_engine(), 1, *events) == []


def test_increment_not_applied_raised_once_per_episode() -> None:
    engine = make_engine()
    readings: list[GameEvent] = [
        clock(5430, 5430, "white", T0),
        clock(5420, 5430, "white", T0 + 10),
        clock(5450, 5430, "black", T0 + 10.5),  # White's press: +30, right
        e4(T0 + 10.5),  # the move it completed (before it, presses only start the clock)
        clock(5450, 5401, "black", T0 + 40),
        clock(5450, 5401, "white", T0 + 40.4),  # Black's press: +0, wrong
        clock(5440, 5401, "white", T0 + 50),
        clock(5470, 5401, "black", T0 + 50.2),
        clock(5470, 5390, "black", T0 + 61),
        clock(5470, 5389, "white", T0 + 61.9),  # Black again -1: the same episode
    ]
    (alert,) = feed(engine, 1, GameStarted(rotated=False, at=T0), *readings)
    assert (alert.kind, alert.at) == ("clock_mismatch", T0 + 40.4)
    assert alert.details == {"check": "increment", "color": "black", "move": 1, "added": 0}
    assert "added 0 s instead of 30 s" in alert.action
    fixed = [
        clock(5470, 5420, "white", T0 + 70),  # the arbiter fixed the clock ...
        clock(5460, 5420, "white", T0 + 80),
        clock(5490, 5420, "black", T0 + 80.3),
        clock(5490, 5400, "black", T0 + 100),
        clock(5490, 5430, "white", T0 + 100.3),  # ... Black's press adds 30 s
        clock(5470, 5430, "white", T0 + 120),
        clock(5500, 5430, "black", T0 + 120.4),
        clock(5500, 5410, "black", T0 + 140),
        clock(5500, 5408, "white", T0 + 140.5),  # and then it fails again: a new episode
    ]
    fixed_alert, again = feed(engine, 1, *fixed)
    assert (fixed_alert.id, fixed_alert.state) == (alert.id, "resolved")
    assert fixed_alert.history[-1].note == (
        "the clock added the right increment after Black's move 3"
    )
    assert again.details == {"check": "increment", "color": "black", "move": 4, "added": -2}


def test_one_second_tick_during_the_press_is_tolerated() -> None:
    engine = make_engine()
    readings = [clock(5430, 5430, "white", T0), clock(5459, 5430, "black", T0 + 1)]
    assert feed(engine, 1, *readings) == []


# -- results ---------------------------------------------------------------------------------


def test_signalled_result_and_game_over_propose_results_to_confirm() -> None:
    engine = make_engine()
    (signal,) = feed(engine, 1, ResultSignalled(result="1/2-1/2", at=T0 + 900))
    assert (signal.kind, signal.details) == ("result_signalled", {"result": "1/2-1/2"})
    assert feed(engine, 1, ResultSignalled(result="1/2-1/2", at=T0 + 901)) == []
    mate = GameEnded(result="1-0", termination="checkmate", at=T0 + 950)
    (over,) = feed(engine, 2, mate)
    assert over.details == {"result": "1-0", "termination": "checkmate"}
    assert "checkmate on the board, 1-0" in over.action
    assert feed(engine, 2, mate) == []
    state = engine.confirm_result(2, T0 + 1000)
    assert (state.result, state.source, state.confirmed, state.confirmed_at) == (
        "1-0",
        ResultSource.GAME_OVER,
        True,
        T0 + 1000,
    )


def test_a_withdrawn_end_takes_its_proposal_back() -> None:
    engine = make_engine()
    feed(engine, 1, GameEnded(result="0-1", termination="checkmate", at=T0 + 10))
    assert engine.result_of(1) is not None
    feed(engine, 1, MovesWithdrawn(from_ply=30, reason="correction", at=T0 + 11))
    assert engine.result_of(1) is None
    assert [d.payload["result"] for d in engine.decisions_made() if d.kind == "result"] == [
        "0-1",
        "*",
    ]


def test_arbiter_results_win_and_confirmed_results_stay() -> None:
    engine = make_engine()
    engine.set_result(1, "1/2-1/2", T0 + 10)
    feed(engine, 1, FlagFell(color="white", result="0-1", provisional=True, at=T0 + 20))
    state = engine.result_of(1)
    assert state is not None
    assert (state.result, state.source) == ("1/2-1/2", ResultSource.ARBITER)
    engine.confirm_result(1, T0 + 30)
    assert engine.confirm_result(1, T0 + 31).confirmed_at == T0 + 30  # idempotent
    engine.set_result(1, "*", T0 + 40)  # cleared: the board's own results count again
    assert engine.result_of(1) is None
    feed(engine, 1, ResultSignalled(result="1-0", at=T0 + 50))
    state = engine.result_of(1)
    assert state is not None
    assert (state.result, state.source) == ("1-0", ResultSource.RESULT_SIGNALLED)


def test_manual_board_result_flow_and_refused_commands() -> None:
    engine = make_engine()
    with pytest.raises(CommandRefused, match="board 3 has no result to confirm"):
        engine.confirm_result(3, T0)
    state = engine.set_result(3, "0-1", T0 + 3000)
    assert state is not None
    assert (state.confirmed, state.source) == (False, ResultSource.ARBITER)
    assert engine.confirm_result(3, T0 + 3010).confirmed
    with pytest.raises(CommandRefused, match="no board 7"):
        engine.set_result(7, "1-0", T0)
    with pytest.raises(CommandRefused, match="result must be one of"):
        engine.set_result(3, "2-0", T0)


# -- acknowledgement -------------------------------------------------------------------------


def test_acknowledge_marks_an_alert_seen_once_and_it_stays_open_while_it_holds() -> None:
    engine = make_engine()
    engine.receive_link(1, online=False, at=T0)
    engine.receive_link(2, online=False, at=T0)
    first, second = engine.alerts_raised()
    engine.decisions_made()
    acked = engine.acknowledge(first.id, T0 + 5)
    assert (acked.acknowledged, acked.id, acked.is_open) == (True, first.id, True)
    assert acked.history[-1] == AlertStep(step="acknowledged", at=T0 + 5, by="arbiter")
    assert engine.open_alerts == [acked, second]
    assert engine.acknowledge(first.id, T0 + 6) == acked
    decisions = engine.decisions_made()
    assert [(d.kind, d.board, d.at, d.payload) for d in decisions] == [
        ("alert", 1, T0 + 5, {"alert": to_json_dict(acked)})
    ]
    assert engine.alerts_raised() == [acked]
    assert [a.acknowledged for a in engine.alerts] == [True, False]
    with pytest.raises(CommandRefused, match="no alert 99"):
        engine.acknowledge(99, T0)


# -- settings from the configuration ---------------------------------------------------------


def test_settings_from_the_sections_example() -> None:
    config = load_config(ROOT / "config" / "sections.toml", env={})
    settings_ = AlertSettings.from_config(config)
    assert sorted(settings_.boards) == [1, 2, 3, 11, 12]
    senior, junior = settings_.boards[1], settings_.boards[11]
    assert junior.round_start is not None
    assert senior.round_start is not None
    assert junior.round_start - senior.round_start == 900
    assert (senior.default_time, senior.warning) == (1800, 300)
    assert str(junior.time_control) == "2400+30"
    assert (settings_.boards[2].has_eboard, settings_.boards[3].has_eboard) == (True, False)


# -- journal and recovery --------------------------------------------------------------------

Step = Callable[[AlertEngine], object]


def round_steps() -> list[tuple[bool, Step]]:
    """A round on three boards with every kind of input: (is an arbiter command, step)."""
    flag = FlagFell(color="black", result="1-0", provisional=True, at=T0 + 4000)
    lost = OutOfSync(expected_fen=AFTER_E4, placement="8/8/8/8/8/8/8/8", at=T0 + 30)
    return [
        (False, lambda e: e.receive_link(1, online=True, at=T0 - 50)),
        (False, lambda e: e.receive_link(2, online=True, at=T0 - 50)),
        (False, lambda e: e.receive_game_event(1, GameStarted(rotated=False, at=T0 - 40))),
        (False, lambda e: e.receive_game_event(1, clock(3000, 3000, "white", T0 - 30))),
        (False, lambda e: e.receive_game_event(1, clock(2965, 3000, "white", T0 + 5))),
        (False, lambda e: e.receive_game_event(1, clock(2995, 3000, "black", T0 + 5))),
        (False, lambda e: e.receive_game_event(1, e4(T0 + 5))),
        (False, lambda e: e.receive_tick(T0 + 40)),
        (False, lambda e: e.receive_game_event(1, lost)),
        (False, lambda e: e.receive_game_event(1, InSync(at=T0 + 35))),
        (True, lambda e: e.acknowledge(2, T0 + 36)),
        (False, lambda e: e.receive_tick(T0 + 60)),
        (False, lambda e: e.receive_link(2, online=False, at=T0 + 70)),
        (False, lambda e: e.receive_clock_link(1, connected=False, at=T0 + 80)),
        (False, lambda e: e.receive_link(2, online=True, at=T0 + 90)),
        (False, lambda e: e.receive_game_event(1, flag)),
        (True, lambda e: e.set_result(3, "1/2-1/2", T0 + 5000)),
        (True, lambda e: e.confirm_result(3, T0 + 5001)),
        (True, lambda e: e.confirm_result(1, T0 + 5002)),
        (True, lambda e: e.acknowledge(1, T0 + 5003)),
    ]


def run(
    engine: AlertEngine, steps: list[Step], journal: Journal | list[Decision] | None = None
) -> list[Alert]:
    """Feed the steps; journal each step's decisions before its alerts are taken."""
    raised = []
    for step in steps:
        step(engine)
        decisions = engine.decisions_made()
        if isinstance(journal, Journal):
            journal.append_many(decisions)
        elif journal is not None:
            journal.extend(decisions)
        raised.extend(engine.alerts_raised())
    return raised


def test_every_version_of_every_alert_is_journalled(tmp_path: Path) -> None:
    live = make_engine()
    with Journal(tmp_path / "journal.db") as journal:
        raised = run(live, [step for _, step in round_steps()], journal)
        journal.append(1, "placement", {"fen": START_FEN}, T0)  # not a decision
        records = list(journal.records(kinds=DECISION_KINDS))
    assert sorted(set(kinds(raised))) == [
        "board_offline",
        "clock_mismatch",
        "clock_offline",
        "flag_fall",
        "late_arrival",
        "out_of_sync",
    ]
    versions = [r.payload["alert"] for r in records if r.kind == "alert"]
    assert versions == [to_json_dict(alert) for alert in raised]
    latest = {version["id"]: version for version in versions}
    assert [latest[i] for i in sorted(latest)] == [to_json_dict(a) for a in live.alerts]
    # board 1's game is decided: its alerts resolved; board 2's absent White still waits
    assert [(a.board, a.kind) for a in live.open_alerts] == [
        (2, "late_arrival"),
        (1, "clock_offline"),
    ]
    confirmed = live.result_of(1)
    assert confirmed is not None
    assert (confirmed.result, confirmed.source, confirmed.confirmed) == (
        "1-0",
        ResultSource.FLAG_FALL,
        True,
    )


def test_replaying_every_input_rebuilds_the_same_state() -> None:
    """A restart: a fresh engine fed the journalled inputs, commands included."""
    steps = [step for _, step in round_steps()]
    first: list[Decision] = []
    second: list[Decision] = []
    live, replayed = make_engine(), make_engine()
    assert run(live, steps, first) == run(replayed, steps, second)
    assert first == second
    assert replayed.alerts == live.alerts
    assert [replayed.result_of(b) for b in (1, 2, 3)] == [live.result_of(b) for b in (1, 2, 3)]


# -- real recordings through the real parser and game tracker --------------------------------

RECORDED_CONTROLS = {"1": "180+2", "2": "180+2", "johan": "300+5"}


def alerts_of_recording(path: Path, time_control: str) -> tuple[AlertEngine, list[Alert]]:
    """Feed a DGT recording (message ``i`` at ``i / 4`` s) to a tracker and the engine."""
    engine = AlertEngine(
        AlertSettings(
            boards={
                1: BoardRules(
                    round_start=0.0,
                    default_time=3600.0,
                    warning=300.0,
                    time_control=TimeControl.from_pgn(time_control),
                )
            }
        )
    )
    protocol, sensor, tracker = DgtProtocol(), SensorBoard(), GameTracker()
    engine.receive_link(1, online=True, at=0.0)
    lines = path.read_text().split()
    for index, line in enumerate(lines):
        at = index / 4
        tracker.receive_tick(at)
        protocol.receive_data(base64.b64decode(line))
        for event in protocol.events_received():
            placement = sensor.receive_event(event, at)
            if placement is not None:
                tracker.receive_placement(placement)
            if isinstance(event, ClockTimes):
                reading = clock_observation(event, at)
                engine.receive_clock_link(1, connected=reading.connected, at=at)
                tracker.receive_clock(reading)
        for game_event in tracker.events_received():
            engine.receive_game_event(1, game_event)
    tracker.receive_tick(len(lines) / 4 + 60)  # a minute later: the last timers fire
    for game_event in tracker.events_received():
        engine.receive_game_event(1, game_event)
    return engine, engine.alerts_raised()


@pytest.mark.parametrize("name", ["1", "2", "johan"])
def test_real_games_on_correct_clocks_raise_no_clock_alert(recordings_dir: Path, name: str) -> None:
    _, alerts = alerts_of_recording(recordings_dir / f"{name}.inbytes", RECORDED_CONTROLS[name])
    assert [a for a in alerts if a.kind not in ("flag_fall", "result_signalled")] == []


def test_johan_flag_fall_and_kings_signal_each_raised_once(recordings_dir: Path) -> None:
    engine, alerts = alerts_of_recording(recordings_dir / "johan.inbytes", "300+5")
    assert [(a.kind, a.details) for a in alerts] == [
        ("flag_fall", {"color": "black", "result": "1-0", "provisional": True}),
        ("result_signalled", {"result": "1-0"}),
    ]
    state = engine.result_of(1)
    assert state is not None
    assert (state.result, state.source, state.confirmed) == (
        "1-0",
        ResultSource.RESULT_SIGNALLED,
        False,
    )


def test_real_clock_on_the_wrong_time_control(recordings_dir: Path) -> None:
    """Recording 1 was played at 3 min + 2 s; the event says 5 min + 5 s."""
    _, alerts = alerts_of_recording(recordings_dir / "1.inbytes", "300+5")
    assert [a.details for a in alerts] == [
        {
            "check": "start",
            "white": 179,  # just before White's first press
            "black": 182,
            "expected": [300, 305],
            "time_control": "300+5",
        },
        {"check": "increment", "color": "white", "move": 1, "added": 2},
        {"check": "increment", "color": "black", "move": 1, "added": 2},
    ]


# -- a result set contrary to the board (issue 33, item 3) -----------------------------------


def test_a_result_contrary_to_a_mate_on_the_board_waits_for_a_confirmation() -> None:
    engine = make_engine()
    mate = GameEnded(result="0-1", termination="checkmate", at=T0 + 900)
    feed(engine, 1, GameStarted(rotated=False, at=T0), e4(T0 + 5), mate)
    engine.set_result(1, "1-0", T0 + 950)
    (warning,) = engine.alerts_raised()
    assert (warning.kind, warning.board, warning.is_open) == ("result_contradicts_board", 1, True)
    assert warning.details == {
        "result": "1-0",
        "board_result": "0-1",
        "board_says": "checkmate on the board",
    }
    assert warning.action.startswith(
        "Board 1: 1-0 was set, but the board says 0-1 (checkmate on the board)."
    )
    assert "confirm 1-0 if it is meant" in warning.action
    engine.set_result(1, "1/2-1/2", T0 + 960)  # still not the board's: the alert is updated
    (updated,) = engine.alerts_raised()
    assert (updated.id, updated.details["result"]) == (warning.id, "1/2-1/2")
    engine.set_result(1, "0-1", T0 + 970)  # the board's result: nothing left to confirm
    (resolved,) = engine.alerts_raised()
    assert (resolved.id, resolved.is_open) == (warning.id, False)
    assert resolved.history[-1].note == "an arbiter set the result 0-1"
    engine.set_result(1, "1-0", T0 + 980)
    (again,) = engine.alerts_raised()
    assert again.id != warning.id
    assert again.is_open
    engine.confirm_result(1, T0 + 990)  # meant: confirmed, the alert resolves
    closed = [a for a in engine.alerts_raised() if a.id == again.id]
    assert closed
    assert not closed[-1].is_open
    state = engine.result_of(1)
    assert state is not None
    assert (state.result, state.confirmed) == ("1-0", True)


def test_a_flag_or_the_kings_are_the_board_s_result_too_and_forfeits_compare_by_winner() -> None:
    engine = make_engine()
    flag = FlagFell(color="white", result="0-1", provisional=True, at=T0 + 10)
    feed(engine, 1, GameStarted(rotated=False, at=T0), flag)
    engine.set_result(1, "-+", T0 + 20)  # Black wins either way: no contradiction
    assert kinds(engine.alerts_raised()) == []
    engine.set_result(1, "1/2-1/2", T0 + 30)
    (warning,) = engine.alerts_raised()
    assert warning.details["board_says"] == "White's flag fell"
    engine.set_result(1, "*", T0 + 40)  # cleared: the board's own results count again
    assert [a.is_open for a in engine.alerts_raised()] == [False]
    feed(engine, 2, GameStarted(rotated=False, at=T0), ResultSignalled(result="1-0", at=T0 + 50))
    engine.set_result(2, "0-1", T0 + 60)
    (kings,) = engine.alerts_raised()
    assert kings.details["board_says"] == "the players signalled it with the kings"
    engine.set_result(3, "0-1", T0 + 70)  # no e-board: nothing to contradict
    assert engine.alerts_raised() == []


def test_taken_back_moves_no_longer_contradict_a_result() -> None:
    engine = make_engine()
    mate = GameEnded(result="0-1", termination="checkmate", at=T0 + 900)
    feed(engine, 1, GameStarted(rotated=False, at=T0), e4(T0 + 5), mate)
    feed(engine, 1, MovesWithdrawn(from_ply=1, reason="takeback", at=T0 + 910))
    engine.set_result(1, "1-0", T0 + 950)
    assert "result_contradicts_board" not in kinds(engine.alerts_raised())
