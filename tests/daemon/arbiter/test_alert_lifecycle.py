"""Alerts with a life cycle (docs/alerts.md, "Life cycle"): open while they hold, resolved.

First the alert engine alone, kind by kind; then a scripted three-round, two-section
event through the round core (the journal's inputs, as the daemon feeds them): every
result confirmed ends each round with no open alert, boards unplugged between rounds
come back as the resolution of their ``board_offline``, and a replay of the inputs (and
a snapshot) rebuilds every alert with its history.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from base.fen import board_fen
from broadcast.feed.alerts import Alert
from broadcast.feed.commands import AckAlert, ArbiterCommand, ConfirmResult, SetResult
from daemon.arbiter.decisions import AlertSettings
from daemon.arbiter.engine import AlertEngine
from daemon.arbiter.watch import BoardRules
from daemon.config.model import BoardConfig, load_config
from daemon.game.durations import TimeControl
from daemon.game.events import (
    ClockUpdated,
    GameEnded,
    GameStarted,
    GapCandidates,
    MoveMade,
    MovesRecovered,
    MovesWithdrawn,
    ResultSignalled,
)
from daemon.journal.inputs import ARBITER, LINK, PLACEMENT, TICK
from daemon.journal.store import EVENT_BOARD, ROUND
from daemon.round.change import RoundChange
from daemon.round.codec import command_payload, input_of
from daemon.round.core import RoundCore
from daemon.round.snapshot import dump_state, load_state

T0 = 1_790_000_000.0
RAPID = TimeControl.from_pgn("5400+30")


def engine(*, default_time: float = 600.0) -> AlertEngine:
    rules = BoardRules(round_start=T0, default_time=default_time, warning=300, time_control=RAPID)
    return AlertEngine(AlertSettings(boards={1: rules, 2: rules}))


def versions(engine: AlertEngine) -> list[tuple[int, str, str]]:
    """The new versions since the last call: (id, kind, state)."""
    return [(a.id, a.kind.value, a.state.value) for a in engine.alerts_raised()]


def last_step(alert: Alert) -> tuple[str, str, str]:
    step = alert.history[-1]
    return step.step, step.by, step.note


def move(ply: int, at: float) -> MoveMade:
    return MoveMade(ply=ply, uci="e2e4", san="e4", clock=None, clock_before=None, emt=None,
                    fen="8/8/8/8/8/8/8/8 w - - 0 1", at=at)  # fmt: skip


# -- kind by kind ----------------------------------------------------------------------------


def test_a_decided_game_resolves_its_alerts_when_the_result_is_confirmed() -> None:
    desk = engine()
    desk.receive_game_event(1, GameStarted(rotated=False, at=T0))
    desk.receive_game_event(1, GameEnded(result="1-0", termination="checkmate", at=T0 + 900))
    desk.receive_game_event(1, ResultSignalled(result="1-0", at=T0 + 905))
    assert versions(desk) == [(1, "game_over", "open"), (2, "result_signalled", "open")]
    desk.acknowledge(1, T0 + 910)  # seen: still waiting for the decision
    assert [a.id for a in desk.open_alerts] == [1, 2]
    desk.confirm_result(1, T0 + 920)
    assert desk.open_alerts == []
    game_over, signalled = desk.alerts
    assert [s.step for s in game_over.history] == ["raised", "acknowledged", "resolved"]
    assert last_step(signalled) == ("resolved", "arbiter", "an arbiter confirmed the result 1-0")
    # the pieces are tidied up, the kings put on the centre again: the game is decided
    desk.receive_game_event(1, ResultSignalled(result="1/2-1/2", at=T0 + 930))
    assert versions(desk) == [(1, "game_over", "open"), (1, "game_over", "resolved"),
                              (2, "result_signalled", "resolved")]  # fmt: skip


def test_a_second_signal_updates_the_one_open_alert_and_its_proposal() -> None:
    desk = engine()
    desk.receive_game_event(1, ResultSignalled(result="1-0", at=T0 + 900))
    desk.receive_game_event(1, ResultSignalled(result="1/2-1/2", at=T0 + 960))
    (alert,) = desk.open_alerts
    assert alert.details == {"result": "1/2-1/2"}
    assert last_step(alert) == ("updated", "dgtcast", "the players signalled 1/2-1/2")
    state = desk.result_of(1)
    assert state is not None
    assert state.result == "1/2-1/2"


def test_moves_taken_back_resolve_the_end_of_the_game() -> None:
    desk = engine()
    desk.receive_game_event(1, GameEnded(result="0-1", termination="checkmate", at=T0 + 10))
    desk.receive_game_event(1, MovesWithdrawn(from_ply=4, reason="correction", at=T0 + 12))
    (alert,) = desk.alerts
    assert last_step(alert) == (
        "resolved",
        "dgtcast",
        "the moves that ended the game were taken back",
    )
    assert desk.result_of(1) is None


def test_a_late_arrival_warning_resolves_when_the_player_moves() -> None:
    desk = engine()
    desk.receive_tick(T0 + 300)  # the warning, 5 minutes before the default time
    assert versions(desk) == [(1, "late_arrival", "open"), (2, "late_arrival", "open")]
    desk.receive_game_event(1, move(1, T0 + 320))
    assert versions(desk) == [(1, "late_arrival", "resolved")]
    assert last_step(desk.alerts[0]) == ("resolved", "dgtcast", "White made a move")
    desk.receive_game_event(1, move(2, T0 + 330))  # and Black replied: both present
    desk.receive_tick(T0 + 600)  # board 2: the same alert, now the default stage
    assert versions(desk) == [(2, "late_arrival", "open")]
    (late,) = desk.open_alerts
    assert (late.details["stage"], late.details["result"]) == ("default", "-+")
    assert last_step(late) == ("updated", "dgtcast", "the default time has passed")
    desk.receive_game_event(2, move(1, T0 + 700))  # after the default time: the arbiter decides
    assert desk.open_alerts == [late]
    desk.set_result(2, "*", T0 + 710)  # the arbiter lets the game go on (FIDE 6.7)
    assert desk.open_alerts == []
    assert last_step(desk.alerts[1]) == ("resolved", "arbiter", "an arbiter cleared the result")


def test_a_warning_checked_late_for_a_player_who_came_meanwhile_is_resolved_at_once() -> None:
    desk = engine()
    desk.receive_game_event(1, move(1, T0 + 310))  # after the warning's time (T0 + 300)
    desk.receive_game_event(1, move(2, T0 + 315))
    desk.receive_game_event(2, move(1, T0 + 10))
    desk.receive_game_event(2, move(2, T0 + 20))
    desk.receive_tick(T0 + 320)  # the daemon was busy: the check comes late
    (warning,) = desk.alerts  # the verdict at T0 + 300 stands; the move ends it
    assert (warning.board, warning.details["stage"], warning.state) == (1, "warning", "resolved")
    assert warning.history[-1].at == T0 + 310
    assert desk.open_alerts == []


def test_a_clock_being_set_before_the_first_press_raises_nothing() -> None:
    desk = engine()
    desk.receive_game_event(1, GameStarted(rotated=False, at=T0 - 60))
    desk.receive_game_event(1, ClockUpdated(white=3600, black=3600, running=None, at=T0 - 50))
    desk.receive_game_event(1, ClockUpdated(white=5430, black=5430, running=None, at=T0 - 20))
    # the start check waits for White's first press: a clock being set is no mismatch
    assert versions(desk) == []
    assert desk.open_alerts == []


def test_recovered_moves_resolve_when_checked_and_a_gap_when_a_line_is_chosen() -> None:
    desk = engine()
    lines = (("Nf3", "Nc6"), ("Nc6", "Nf3"))
    desk.receive_game_event(1, GapCandidates(from_ply=3, lines=lines, complete=True, at=T0 + 50))
    desk.choose_line(1, 2, T0 + 60)
    desk.receive_game_event(1, MovesRecovered(from_ply=3, plies=2, source="search", at=T0 + 60))
    gap, recovered = desk.alerts
    assert last_step(gap) == ("resolved", "arbiter", "an arbiter chose line 2")
    assert recovered.is_open
    checked = desk.acknowledge(recovered.id, T0 + 90)
    assert last_step(checked) == ("resolved", "arbiter", "an arbiter checked them")
    assert checked.acknowledged
    assert desk.open_alerts == []


def test_a_gap_resolves_when_a_move_matches_the_board() -> None:
    """Candidates offered, then the board showed a move of the game (the pieces had been
    in the players' hands): the game goes on from it, nothing is left to choose."""
    desk = engine()
    lines = (("Nf3", "Nc6"), ("Nc6", "Nf3"))
    desk.receive_game_event(1, GapCandidates(from_ply=3, lines=lines, complete=True, at=T0 + 50))
    assert [alert.kind.value for alert in desk.open_alerts] == ["gap_ambiguous"]
    desk.receive_game_event(1, move(3, T0 + 55))
    (gap,) = desk.alerts
    assert last_step(gap) == (
        "resolved",
        "dgtcast",
        "a move matched the board: the game goes on from it",
    )
    assert desk.open_alerts == []


def test_a_new_round_resolves_the_old_games_alerts_but_not_an_unplugged_board() -> None:
    desk = engine()
    desk.receive_link(1, online=False, at=T0 + 100)
    desk.receive_game_event(2, GameEnded(result="1-0", termination="checkmate", at=T0 + 200))
    rules = BoardRules(round_start=T0 + 9000, default_time=600, warning=300, time_control=RAPID)
    for board in (1, 2):
        desk.new_round(board, rules, T0 + 8000)
    offline, over = desk.alerts
    assert offline.is_open
    assert last_step(over) == ("resolved", "dgtcast", "the board moved on to the next round")
    desk.receive_link(1, online=True, at=T0 + 8100)
    assert desk.open_alerts == []


# -- a scripted event through the round core -----------------------------------------------

EVENT = """\
[event]
name = "Lifecycle Congress"
time_control = "5400+30"
round = 1
round_start = "2026-09-21T10:00:00+00:00"
default_time = "10m"
default_time_warning = "5m"

[[sections]]
name = "Open"
[[sections.boards]]
number = 1
port = "/dev/ttyACM0"
white = "A"
black = "B"
[[sections.boards]]
number = 2
port = "/dev/ttyACM1"
white = "C"
black = "D"

[[sections]]
name = "U12"
[[sections.boards]]
number = 11
port = "/dev/ttyACM2"
white = "E"
black = "F"
[[sections.boards]]
number = 12
port = "/dev/ttyACM3"
white = "G"
black = "H"
"""

FOOLS_MATE = "1. f3 e5 2. g4 Qh4#"
SCHOLARS_MATE = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7#"
Input = tuple[int, str, dict[str, Any], float]


class Event:
    """The round core, fed inputs as the daemon journals them; every input is kept."""

    def __init__(self, core: RoundCore, start: float) -> None:
        self.core = core
        self.now = start
        self.inputs: list[Input] = []

    def apply(self, board: int, kind: str, payload: Mapping[str, Any]) -> None:
        self.inputs.append((board, kind, dict(payload), self.now))
        self.core.apply(input_of(board, kind, payload, self.now))

    def wait(self, seconds: float) -> None:
        """Time passes: the ticks the core asks for come, as the service feeds them."""
        until = self.now + seconds
        while (deadline := self.core.next_deadline()) is not None and deadline <= until:
            self.now = max(self.now, deadline)
            self.apply(EVENT_BOARD, TICK, {})
        self.now = until

    def place(self, board: int, position: chess.Board) -> None:
        self.apply(board, PLACEMENT, {"fen": board_fen(position)})
        self.wait(3)

    def play(self, board: int, text: str) -> None:
        game = chess.pgn.read_game(io.StringIO(text))
        assert game is not None
        position = chess.Board()
        for played in game.mainline_moves():
            position.push(played)
            self.place(board, position)

    def command(self, command: ArbiterCommand) -> None:
        board = getattr(command, "board", EVENT_BOARD)
        self.apply(board, ARBITER, command_payload(command))

    def link(self, board: int, online: bool) -> None:
        state = "online" if online else "offline"
        self.apply(board, LINK, {"state": state, "reason": "" if online else "unplugged"})

    def open_alerts(self) -> list[tuple[int, str]]:
        return [(a.board, a.kind.value) for a in self.core.engine.open_alerts]


def _round_change(section: str, round_number: int, start: float, boards: list[int]) -> RoundChange:
    players = [BoardConfig(number=n, white=f"W{round_number}.{n}", black=f"B{round_number}.{n}")
               for n in boards]  # fmt: skip
    return RoundChange(
        section=section,
        round=round_number,
        round_start=start,
        boards=tuple(players),
        pairs=tuple((n, 2 * i + 1, 2 * i + 2) for i, n in enumerate(boards)),
        source="pairings.txt",
    )


def _play_a_round(event: Event, round_start: float) -> None:
    """Mates on boards 1 and 12, a knocked piece on board 2 (then a draw without Black's
    move), an absent player on board 11; the arbiter decides everything."""
    for board in (1, 2, 11, 12):
        event.place(board, chess.Board())
    event.play(1, FOOLS_MATE)
    event.play(12, SCHOLARS_MATE)
    knocked = chess.Board()
    knocked.push_san("e4")
    event.place(2, knocked)
    event.wait(30)
    knocked.remove_piece_at(chess.D2)  # a pawn knocked over
    event.place(2, knocked)
    event.wait(30)
    assert (2, "out_of_sync") in event.open_alerts()
    knocked.set_piece_at(chess.D2, chess.Piece(chess.PAWN, chess.WHITE))  # put back
    event.place(2, knocked)
    # board 11's White never comes: the warning, then the default time (10m)
    event.wait(round_start + 610 - event.now)
    late = [a for a in event.core.engine.open_alerts if a.board == 11]
    assert [(a.kind.value, a.details["stage"]) for a in late] == [("late_arrival", "default")]
    over = [a for a in event.core.engine.open_alerts if a.board == 12]
    event.command(AckAlert(id=over[0].id))  # seen: it stays open until the decision
    assert {(b, k) for b, k in event.open_alerts()} == {
        (1, "game_over"),
        (2, "late_arrival"),  # Black never replied to 1. e4: the players agreed a draw
        (11, "late_arrival"),
        (12, "game_over"),
    }
    event.command(SetResult(board=2, result="1/2-1/2"))
    event.command(SetResult(board=11, result="-+"))
    for board in (1, 2, 11, 12):
        event.command(ConfirmResult(board=board))


def test_a_three_round_event_ends_every_round_with_no_open_alert(tmp_path: Path) -> None:
    path = tmp_path / "event.toml"
    path.write_text(EVENT)
    config = load_config(path, env={})
    configured = config.sections[0].event.round_start
    assert configured is not None, "the event names its round start"
    start = configured.timestamp()
    event = Event(RoundCore(config), start - 600)
    for board in (1, 2, 11, 12):
        event.link(board, online=True)
    raised_per_round = []
    round_start = start
    for round_number in (1, 2, 3):
        before = len(event.core.engine.alerts)
        _play_a_round(event, round_start)
        assert event.open_alerts() == [], f"round {round_number}"
        raised_per_round.append(len(event.core.engine.alerts) - before)
        if round_number == 3:
            break
        for board in (1, 2, 11, 12):  # the cables are pulled between rounds
            event.link(board, online=False)
        assert sorted(event.open_alerts()) == [(b, "board_offline") for b in (1, 2, 11, 12)]
        round_start = event.now + 3600
        for section, boards in (("Open", [1, 2]), ("U12", [11, 12])):
            change = _round_change(section, round_number + 1, round_start, boards)
            event.apply(EVENT_BOARD, ROUND, change.payload())
        event.wait(60)
        for board in (1, 2, 11, 12):  # plugged in again: back online resolves offline
            event.link(board, online=True)
        assert event.open_alerts() == []
        event.now = round_start - 60
    alerts = event.core.engine.alerts
    # two mates, a knocked piece, two absent players: one alert each, every round
    assert raised_per_round == [5, 5, 5]
    assert not [a for a in alerts if a.kind.value in ("board_online", "clock_online")]
    offline = [a for a in alerts if a.kind.value == "board_offline"]
    assert len(offline) == 8
    assert all(a.history[-1].note.startswith("the e-board answers again after") for a in offline)
    confirmed = [a for a in alerts if a.kind.value == "game_over"]
    assert {a.history[-1].note for a in confirmed} == {
        "an arbiter confirmed the result 0-1",
        "an arbiter confirmed the result 1-0",
    }
    _check_replay_and_snapshot(config_path=path, event=event)


def _check_replay_and_snapshot(*, config_path: Path, event: Event) -> None:
    """A restart: the inputs replayed through a fresh core (whole, or after a snapshot)
    give every alert again, each with its whole history."""
    replayed = RoundCore(load_config(config_path, env={}))
    half = len(event.inputs) // 2
    for board, kind, payload, at in event.inputs[:half]:
        replayed.apply(input_of(board, kind, payload, at))
    resumed = RoundCore(load_config(config_path, env={}))
    load_state(resumed, dump_state(replayed))
    for core in (replayed, resumed):
        for board, kind, payload, at in event.inputs[half:]:
            core.apply(input_of(board, kind, payload, at))
        assert core.engine.alerts == event.core.engine.alerts
        assert core.engine.open_alerts == []
