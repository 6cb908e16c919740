"""The clock checks under periods and time odds; flag falls under draw odds."""

from __future__ import annotations

from base.colors import Color
from broadcast.feed.alerts import Alert
from daemon.arbiter.decisions import AlertSettings
from daemon.arbiter.engine import AlertEngine
from daemon.arbiter.watch import BoardRules
from daemon.game.durations import ClockRules, TimeControl
from daemon.game.events import ClockUpdated, FlagFell, GameEvent, GameStarted, MoveMade

T0 = 1_750_000_000.0
CLASSICAL = TimeControl.from_text("40 moves in 90m + 30s, then 30m + 30s")
ARMAGEDDON = ClockRules(
    white=TimeControl.from_text("5m, +2s from move 61"),
    black=TimeControl.from_text("4m, +2s from move 61"),
    draw_odds="black",
)


def _engine(rules: ClockRules) -> AlertEngine:
    board = BoardRules(
        round_start=T0, default_time=0, warning=0, time_control=rules.white, clock_rules=rules
    )
    return AlertEngine(AlertSettings(boards={1: board}))


def _feed(engine: AlertEngine, *events: GameEvent) -> list[Alert]:
    for event in events:
        engine.receive_game_event(1, event)
    return engine.alerts_raised()


def _game(white_bonus: int, black_bonus: int, moves: int = 41) -> list[GameEvent]:
    """Both sides press ``moves`` times, 10 s a move; move 40 adds the given bonus."""
    events: list[GameEvent] = [GameStarted(rotated=False, at=T0)]
    times = {"white": 5430.0, "black": 5430.0}
    at = T0
    events.append(ClockUpdated(white=5430, black=5430, running="white", at=at))
    for move in range(1, moves + 1):
        turns: tuple[tuple[Color, Color], ...] = (("white", "black"), ("black", "white"))
        for color, other in turns:
            at += 10
            times[color] -= 10
            events.append(ClockUpdated(**times, running=color, at=at))
            bonus = white_bonus if color == "white" else black_bonus
            times[color] += 30 + (bonus if move == 40 else 0)
            events.append(ClockUpdated(**times, running=other, at=at + 0.3))
            if move == 1 and color == "white":  # the move the press completed
                events.append(_move_1(times["white"], at + 0.3))
    return events


def _move_1(clock: float, at: float) -> MoveMade:
    """White's first move: before it, a press only starts the clock."""
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    return MoveMade(
        ply=1, uci="e2e4", san="e4", clock=clock, clock_before=clock - 30, emt=10, fen=fen, at=at
    )


def test_no_false_alert_at_the_move_40_period_change() -> None:
    engine = _engine(ClockRules.uniform(CLASSICAL))
    assert _feed(engine, *_game(1800, 1800)) == []


def test_a_clock_missing_the_bonus_raises_one_alert() -> None:
    engine = _engine(ClockRules.uniform(CLASSICAL))
    alert, fixed = _feed(engine, *_game(1800, 0))  # move 41 adds 30 s again: resolved
    assert alert.kind == "clock_mismatch"
    assert alert.details == {"check": "increment", "color": "black", "move": 40, "added": 30}
    assert "after Black's move 40 the clock added 30 s instead of 1830 s" in alert.action
    assert (fixed.id, fixed.state, fixed.history[-1].note) == (
        alert.id,
        "resolved",
        "the clock added the right increment after Black's move 41",
    )


def test_a_wrong_bonus_raises_one_too() -> None:
    engine = _engine(ClockRules.uniform(CLASSICAL))
    alert, fixed = _feed(engine, *_game(900, 1800))
    assert (fixed.id, fixed.state) == (alert.id, "resolved")
    assert alert.details["color"] == "white"
    assert alert.details["added"] == 930


def test_armageddon_clocks_set_right_raise_nothing() -> None:
    engine = _engine(ARMAGEDDON)
    readings: list[GameEvent] = [
        GameStarted(rotated=False, at=T0),
        ClockUpdated(white=300, black=240, running="white", at=T0),
        ClockUpdated(white=296, black=240, running="white", at=T0 + 4),
        ClockUpdated(white=296, black=240, running="black", at=T0 + 4.2),
    ]
    assert _feed(engine, *readings) == []


def test_armageddon_clock_set_equal_is_a_mismatch() -> None:
    engine = _engine(ARMAGEDDON)
    readings: list[GameEvent] = [
        GameStarted(rotated=False, at=T0),
        ClockUpdated(white=300, black=300, running="white", at=T0),
        ClockUpdated(white=296, black=300, running="white", at=T0 + 4),
        ClockUpdated(white=296, black=300, running="black", at=T0 + 4.2),
        _move_1(296, T0 + 4.2),
    ]
    (alert,) = _feed(engine, *readings)
    assert alert.details["black_expected"] == [240]
    assert "not the time control White 5m, +2s from move 61, Black 4m" in alert.action


def test_flag_fall_under_draw_odds_states_the_rule() -> None:
    engine = _engine(ARMAGEDDON)
    drawn = FlagFell(color="black", result="1/2-1/2", provisional=True, at=T0 + 240)
    (alert,) = _feed(engine, GameStarted(rotated=False, at=T0), drawn)
    assert alert.details == {
        "color": "black",
        "result": "1/2-1/2",
        "provisional": True,
        "draw_odds": "black",
        "winner": "black",
    }
    assert "With draw odds for Black, this draw counts as Black's win." in alert.action
    engine = _engine(ARMAGEDDON)
    lost = FlagFell(color="black", result="1-0", provisional=True, at=T0 + 240)
    (alert,) = _feed(engine, GameStarted(rotated=False, at=T0), lost)
    assert alert.details["winner"] == "white"
    assert "Black loses: 1-0 (FIDE 6.9). Draw odds for Black do not change" in alert.action
