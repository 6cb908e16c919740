"""The result hand-off: confirmed results in the round's TRF columns, points, byes, payloads."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import chess
import pytest

from daemon.arbiter.decisions import AlertSettings
from daemon.arbiter.engine import AlertEngine
from daemon.arbiter.results import ResultSource, ResultState
from daemon.arbiter.watch import BoardRules
from daemon.game.durations import TimeControl
from daemon.game.events import FlagFell, GameEnded, GameStarted, MoveMade, ResultSignalled
from daemon.game.rules import flag_result
from daemon.pairing.handoff import ResultHandoff, RoundResults, result_codes, result_from_codes
from daemon.pairing.pairings import parse_pairings, read_pairings
from daemon.pairing.trf import Tournament
from tests.pairing.support import block, column, copy_example, player_line, trf_text

T0 = 1_777_078_800.0  # round start
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def engine_for(boards: dict[int, bool]) -> AlertEngine:
    """The arbiter engine for boards (number -> has an e-board), default time 30 min."""
    rules = {
        number: BoardRules(
            round_start=T0,
            default_time=1800,
            warning=300,
            time_control=TimeControl.from_pgn("5400+30"),
            has_eboard=eboard,
        )
        for number, eboard in boards.items()
    }
    return AlertEngine(AlertSettings(boards=rules))


def by_hand(engine: AlertEngine, board: int, result: str, at: float) -> ResultState:
    """An arbiter enters a result for a board and confirms it."""
    engine.set_result(board, result, at)
    return engine.confirm_result(board, at + 5)


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\r\n")


# -- the round trip -------------------------------------------------------------------------


def test_round_trip_two_e_boards_and_three_boards_by_hand(tmp_path: Path) -> None:
    trf, pairings_file = copy_example(tmp_path)
    before = lines_of(trf)
    tournament = Tournament.from_trf(trf)
    pairings = read_pairings(pairings_file, tournament=tournament)
    handoff = ResultHandoff(tournament, 4, pairings, trf)
    engine = engine_for({1: True, 2: True, 3: False, 4: False, 5: False})

    # Board 1, e-board: mate on the board, proposed by the game_over alert, confirmed.
    engine.receive_game_event(1, GameStarted(rotated=False, at=T0))
    engine.receive_game_event(1, GameEnded(result="1-0", termination="checkmate", at=T0 + 7000))
    # Board 2, e-board: the kings on the centre squares for a draw, confirmed.
    engine.receive_game_event(2, GameStarted(rotated=False, at=T0))
    engine.receive_game_event(2, ResultSignalled(result="1/2-1/2", at=T0 + 8000))
    states = [engine.confirm_result(1, T0 + 7100), engine.confirm_result(2, T0 + 8100)]
    # Boards 3-5: no e-board, entered by an arbiter.
    states += [
        by_hand(engine, 3, "0-1", T0 + 9000),
        by_hand(engine, 4, "+-", T0 + 1900),
        by_hand(engine, 5, "1/2-1/2", T0 + 9500),
    ]
    for state in states:
        assert state.confirmed
        assert state.confirmed_at is not None
        outcome = handoff.receive_result(
            state.board, state.result, source=state.source, at=state.confirmed_at
        )
        assert outcome.changed
    assert [s.source for s in states[:2]] == [ResultSource.GAME_OVER, ResultSource.RESULT_SIGNALLED]
    assert handoff.is_round_complete()

    after = lines_of(trf)
    expected = {  # rank: (round 4's columns 122-129, points 81-84)
        2: ("   1 w 1", " 4.0"),
        1: ("   2 b 0", " 2.5"),
        13: ("   4 w =", " 2.5"),
        4: ("  13 b =", " 2.5"),
        6: ("   3 w 0", " 2.0"),
        3: ("   6 b 1", " 2.5"),
        7: ("  12 w +", " 2.5"),
        12: ("   7 b -", " 1.5"),
        10: ("   8 w =", " 1.5"),
        8: ("  10 b =", " 1.5"),
        11: ("0000 - U", " 2.0"),  # the pairing-allocated bye
        9: ("0000 - H", " 1.0"),  # 240 H 004 0009
    }
    for rank, (columns, points) in expected.items():
        line = after[17 + rank - 1].decode()
        assert (column(line, 122, 129), column(line, 81, 84)) == (columns, points), rank
        assert line[:121] == before[17 + rank - 1].decode()[:80] + points + line[84:121]
    changed = {n + 1 for n, (a, b) in enumerate(zip(before, after, strict=True)) if a != b}
    assert changed == {17 + rank for rank in expected}  # player 5 (absent) is untouched
    assert len(after) == len(before)

    again = Tournament.from_trf(trf)
    for pairing in pairings:
        if pairing.black is None:
            continue
        white = again.player(pairing.white).entry(4)
        black = again.player(pairing.black).entry(4)
        assert white is not None
        assert black is not None
        assert result_from_codes(white.code, black.code) == states[pairing.board - 1].result
    restarted = ResultHandoff(again, 4, read_pairings(pairings_file, tournament=again), trf)
    assert restarted.is_round_complete()
    assert [restarted.results.result_of(b) for b in range(1, 6)] == [s.result for s in states]
    assert restarted.save() is False


# -- golden results -------------------------------------------------------------------------

FOUR = (
    "012 Golden",
    "XXR 3",
    player_line(1, "Alpha, Ann", "0.0", rating=2100, title="IM", fide_id=1234567),
    player_line(2, "Beta, Bob", "0.0", rating=2000),
    player_line(3, "Gamma, Cy", "0.0"),
    player_line(4, "Delta, Di", "0.0"),
)


def four_players(*extra: str, pairings: str = "2\n1 2\n3 4\n") -> RoundResults:
    tournament = Tournament.from_text(trf_text(*FOUR, *extra), source="golden.trf")
    return RoundResults(tournament, 1, parse_pairings(pairings, source="r1.txt"))


@pytest.mark.parametrize(
    ("result", "moves", "white", "black", "points"),
    [
        ("1-0", None, "   2 w 1", "   1 b 0", (" 1.0", " 0.0")),
        ("0-1", None, "   2 w 0", "   1 b 1", (" 0.0", " 1.0")),
        ("1/2-1/2", None, "   2 w =", "   1 b =", (" 0.5", " 0.5")),
        ("+-", None, "   2 w +", "   1 b -", (" 1.0", " 0.0")),
        ("-+", None, "   2 w -", "   1 b +", (" 0.0", " 1.0")),
        ("--", None, "   2 w -", "   1 b -", (" 0.0", " 0.0")),
        ("1-0", 40, "   2 w 1", "   1 b 0", (" 1.0", " 0.0")),
        ("1-0", 1, "   2 w W", "   1 b L", (" 1.0", " 0.0")),
        ("0-1", 0, "   2 w L", "   1 b W", (" 0.0", " 1.0")),
        ("1/2-1/2", 1, "   2 w D", "   1 b D", (" 0.5", " 0.5")),
        ("1/2-1/2", 2, "   2 w =", "   1 b =", (" 0.5", " 0.5")),
        ("+-", 0, "   2 w +", "   1 b -", (" 1.0", " 0.0")),
        ("--", 0, "   2 w -", "   1 b -", (" 0.0", " 0.0")),
    ],
)
def test_every_result_code_in_its_columns(
    result: str, moves: int | None, white: str, black: str, points: tuple[str, str]
) -> None:
    core = four_players()
    outcome = core.receive_result(1, result, source="arbiter", at=T0, moves_played=moves)
    lines = core.tournament.to_trf().split("\r\n")
    assert (block(lines[2], 1), block(lines[3], 1)) == (white, black)
    assert (column(lines[2], 81, 84), column(lines[3], 81, 84)) == points
    assert (outcome.white.code, outcome.black.code) == (white[-1], black[-1])
    assert lines[4:6] == list(FOUR[4:6])


def test_a_whole_line_after_a_win() -> None:
    core = four_players()
    core.receive_result(1, "1-0", source="arbiter", at=T0)
    lines = core.tournament.to_trf().split("\r\n")
    assert lines[2] == (
        "001    1 m IM Alpha, Ann                        2100 AUS     1234567"
        "             1.0          2 w 1"
    )
    assert lines[3] == (
        "001    2 m    Beta, Bob                         2000 AUS"
        "                         0.0          1 b 0"
    )


def test_a_forfeit_from_a_late_arrival_white_absent() -> None:
    engine = engine_for({1: True, 2: True})
    engine.receive_game_event(1, GameStarted(rotated=False, at=T0 - 60))
    engine.receive_tick(T0 + 1800)  # the default time: nobody has moved on board 1
    proposed = engine.result_of(1)
    assert proposed is not None
    assert (proposed.result, proposed.source) == ("-+", ResultSource.LATE_ARRIVAL)
    state = engine.confirm_result(1, T0 + 1830)
    core = four_players()
    outcome = core.receive_result(1, state.result, source=state.source, at=T0 + 1830)
    lines = core.tournament.to_trf().split("\r\n")
    assert (block(lines[2], 1), block(lines[3], 1)) == ("   2 w -", "   1 b +")
    assert outcome.payload()["source"] == "late_arrival"


def test_a_forfeit_from_a_late_arrival_black_absent() -> None:
    engine = engine_for({1: True, 2: True})
    engine.receive_game_event(1, GameStarted(rotated=False, at=T0 - 60))
    engine.receive_game_event(
        1,
        MoveMade(
            ply=1,
            uci="e2e4",
            san="e4",
            clock=None,
            clock_before=None,
            emt=None,
            fen=AFTER_E4,
            at=T0 + 30,
        ),
    )
    engine.receive_tick(T0 + 1800)
    state = engine.confirm_result(1, T0 + 1830)
    assert (state.result, state.source) == ("+-", ResultSource.LATE_ARRIVAL)
    core = four_players()
    core.receive_result(1, state.result, source=state.source, at=T0 + 1830, moves_played=1)
    lines = core.tournament.to_trf().split("\r\n")
    assert (block(lines[2], 1), block(lines[3], 1)) == ("   2 w +", "   1 b -")


def test_a_draw_from_a_flag_fall_when_the_opponent_cannot_mate() -> None:
    board = chess.Board("8/8/4k3/8/8/8/2R5/4K3 w - - 0 60")  # Black has the king alone
    result = flag_result(board, chess.WHITE)  # White's flag fell
    assert result == "1/2-1/2"
    engine = engine_for({1: True, 2: True})
    engine.receive_game_event(1, GameStarted(rotated=False, at=T0))
    engine.receive_game_event(
        1, FlagFell(color="white", result=result, provisional=True, at=T0 + 9000)
    )
    state = engine.confirm_result(1, T0 + 9060)
    assert (state.result, state.source) == ("1/2-1/2", ResultSource.FLAG_FALL)
    core = four_players()
    outcome = core.receive_result(1, state.result, source=state.source, at=T0 + 9060)
    lines = core.tournament.to_trf().split("\r\n")
    assert (block(lines[2], 1), block(lines[3], 1)) == ("   2 w =", "   1 b =")
    assert outcome.payload()["source"] == "flag_fall"


def test_byes_u_h_f_z_are_written_with_the_first_save_and_need_no_result() -> None:
    extra = (
        player_line(5, "Eps, Eve", "0.0"),
        player_line(6, "Zeta, Zed", "0.0"),
        player_line(7, "Eta, Em", "0.0"),
        player_line(8, "Theta, Tom", "0.0"),
        "240 H 001 0006",
        "240 F 001 0007  ",
        "240 Z 001 0008",
    )
    core = four_players(*extra, pairings="3\n1 2\n3 4\n5 0\n")
    lines = core.tournament.to_trf().split("\r\n")
    assert [(block(lines[n], 1), column(lines[n], 81, 84)) for n in range(6, 10)] == [
        ("0000 - U", " 1.0"),
        ("0000 - H", " 0.5"),
        ("0000 - F", " 1.0"),
        ("0000 - Z", " 0.0"),
    ]
    assert lines[2:6] == list(FOUR[2:6])
    assert core.boards_without_result() == [1, 2]
    core.receive_result(1, "1-0", source="arbiter", at=T0)
    assert not core.is_round_complete()
    assert core.receive_result(2, "--", source="arbiter", at=T0).round_complete
    assert core.is_round_complete()


def test_a_cleared_result_leaves_the_lines_as_they_were() -> None:
    core = four_players()
    start = core.tournament.to_trf()
    core.receive_result(2, "0-1", source="arbiter", at=T0)
    assert core.result_of(2) == "0-1"
    outcome = core.receive_result(2, "*", source="arbiter", at=T0 + 60)
    assert (outcome.changed, outcome.white.code, outcome.black.code) == (True, None, None)
    assert core.tournament.to_trf() == start
    assert core.result_of(2) is None
    assert core.boards_without_result() == [1, 2]


def test_the_same_result_again_changes_nothing_and_unknown_plies_keep_w_d_l() -> None:
    core = four_players()
    first = core.receive_result(1, "1-0", source="arbiter", at=T0, moves_played=1)
    again = core.receive_result(1, "1-0", source="arbiter", at=T0 + 9)
    assert (first.changed, again.changed) == (True, False)
    assert (again.white.code, again.black.code) == ("W", "L")
    played = core.receive_result(1, "1-0", source="arbiter", at=T0 + 9, moves_played=30)
    assert (played.changed, played.white.code) == (True, "1")


def test_scoring_from_xxs() -> None:
    core = four_players("XXS W=3 D=1")
    core.receive_result(1, "1/2-1/2", source="arbiter", at=T0)
    core.receive_result(2, "1-0", source="arbiter", at=T0)
    points = {rank: p.points for rank, p in core.tournament.players.items()}
    assert points == {1: 1, 2: 1, 3: 3, 4: 0}
    assert column(core.tournament.to_trf().split("\r\n")[4], 81, 84) == " 3.0"


def test_a_game_paired_in_the_trf_without_a_result_is_filled_in() -> None:
    lines = (
        "012 Pending",
        player_line(1, "Alpha, Ann", "0.0", ("   2 w  ",)),
        player_line(2, "Beta, Bob", "0.0", ("   1 b  ",)),
    )
    tournament = Tournament.from_text(trf_text(*lines), source="p.trf")
    core = RoundResults(tournament, 1, parse_pairings("1\n1 2\n", source="r.txt"))
    assert core.boards_without_result() == [1]
    core.receive_result(1, "0-1", source="arbiter", at=T0)
    assert block(core.tournament.to_trf().split("\r\n")[1], 1) == "   2 w 0"


def test_the_payload_for_mqtt() -> None:
    core = four_players()
    outcome = core.receive_result(1, "1/2-1/2", source=ResultSource.ARBITER, at=T0 + 0.5)
    assert json.dumps(outcome.payload()) == (
        '{"board": 1, "round": 1, "result": "1/2-1/2",'
        ' "white": {"rank": 1, "name": "Alpha, Ann", "code": "=", "points": 0.5},'
        ' "black": {"rank": 2, "name": "Beta, Bob", "code": "=", "points": 0.5},'
        f' "source": "arbiter", "at": {T0 + 0.5}, "round_complete": false}}'
    )
    assert outcome.white.points == Decimal("0.5")


def test_misuse_is_refused() -> None:
    core = four_players(player_line(5, "Eps, Eve", "0.0"), pairings="3\n1 2\n3 4\n5 0\n")
    with pytest.raises(ValueError, match="board 3 is not a game of round 1's pairings"):
        core.receive_result(3, "1-0", source="arbiter", at=T0)  # the bye
    with pytest.raises(ValueError, match="board 9 is not a game"):
        core.receive_result(9, "1-0", source="arbiter", at=T0)
    with pytest.raises(ValueError, match="result must be one of"):
        core.receive_result(1, "2-0", source="arbiter", at=T0)
    with pytest.raises(ValueError, match="round must be 1 or more"):
        RoundResults(core.tournament, 0, [])
    assert result_codes("1-0", moves_played=1) == ("W", "L")
    assert result_from_codes("=", "0") is None


def test_the_handoff_writes_only_when_the_text_changes(tmp_path: Path) -> None:
    trf = tmp_path / "golden.trf"
    trf.write_text(trf_text(*FOUR), newline="")
    tournament = Tournament.from_trf(trf)
    handoff = ResultHandoff(tournament, 1, parse_pairings("2\n1 2\n3 4\n", source="r"), trf)
    assert handoff.save() is False  # no byes: nothing to write yet
    handoff.receive_result(2, "1-0", source="arbiter", at=T0)
    assert block(trf.read_bytes().decode().split("\r\n")[4], 1) == "   4 w 1"
    assert handoff.save() is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden.trf"]  # no temporary left
