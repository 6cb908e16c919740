"""The round change: its journal payload, what the core does with it, where rounds come from."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from broadcast.feed.commands import ConfirmResult, SetResult
from broadcast.feed.hub import Hub
from daemon.config.model import BoardConfig, ConfigError, load_config
from daemon.journal.inputs import ARBITER, BATTERY
from daemon.journal.store import EVENT_BOARD, ROUND, Journal
from daemon.pairing import PairingFileError
from daemon.round.change import RoundChange
from daemon.round.codec import command_payload, input_of
from daemon.round.core import RoundCore
from daemon.round.snapshot import dump_state, load_state
from daemon.round.source import plan_round
from daemon.shell.rounds import RoundKeeper, pending_results
from daemon.shell.service import RoundService
from tests.shared_data import ROOT

SECTIONS = """\
[event]
name = "Spring Congress"
time_control = "5400+30"
round = 1

[[sections]]
name = "Open"
[[sections.boards]]
number = 1
port = "/dev/ttyACM0"
white = "A, A"
black = "B, B"
[[sections.boards]]
number = 2
white = "C, C"
black = "D, D"

[[sections]]
name = "U12"
round = 3
[[sections.boards]]
number = 11
white = "E, E"
black = "F, F"
"""


def _core(tmp_path: Path) -> RoundCore:
    path = tmp_path / "event.toml"
    path.write_text(SECTIONS)
    return RoundCore(load_config(path, env={}))


def _change(section: str, round_number: int, *boards: tuple[int, str, str]) -> RoundChange:
    return RoundChange(
        section=section,
        round=round_number,
        round_start=1_790_000_000.0,
        boards=tuple(BoardConfig(number=n, white=w, black=b) for n, w, b in boards),
        pairs=tuple((n, i, i + 1) for i, (n, _, _) in enumerate(boards, 1)),
        source="pairs.txt",
    )


def _command(core: RoundCore, command: SetResult | ConfirmResult, at: float) -> None:
    core.apply(input_of(command.board, ARBITER, command_payload(command), at))


def test_payload_round_trips() -> None:
    change = _change("Open", 2, (1, "Okafor, Daniel", "Lindqvist, Maja"), (3, "X, Y", "Z, W"))
    payload = change.payload()
    assert payload["date"] == "2026-09-21"
    assert RoundChange.from_payload(payload) == change
    with pytest.raises(ValueError, match="listed twice"):
        _change("Open", 2, (1, "a", "b"), (1, "c", "d"))


def test_core_moves_one_section_on(tmp_path: Path) -> None:
    core = _core(tmp_path)
    _command(core, SetResult(board=2, result="1-0"), 100.0)
    _command(core, SetResult(board=11, result="0-1"), 100.0)
    assert pending_results(core, "Open") == [
        {"section": "Open", "board": 1, "result": None},
        {"section": "Open", "board": 2, "result": "1-0"},
    ]
    change = _change("Open", 2, (2, "D, D", "A, A"), (3, "B, B", "C, C"))
    outcome = core.apply(input_of(EVENT_BOARD, ROUND, change.payload(), 200.0))
    assert outcome.boards == {1, 2, 3}
    two = core.board_state(2, 200.0)
    assert (two.round, two.white, two.black, two.result) == ("2.2", "D, D", "A, A", "*")
    assert '[Round "2.2"]' in two.pgn
    one = core.board_state(1, 200.0)  # in [[boards]], not paired this round: no players
    assert (one.white, one.black, one.round) == ("", "", "2.1")
    assert core.board_state(3, 200.0).white == "B, B"  # a board the round adds
    assert core.games[1].tracker is not None, "the e-board stays"
    u12 = core.board_state(11, 200.0)
    assert (u12.round, u12.result) == ("3.11", "0-1"), "the other section is untouched"
    assert [p["board"] for p in pending_results(core, "Open")] == [2, 3]


def test_an_eboards_battery_level_stays_with_it_into_the_next_round(tmp_path: Path) -> None:
    core = _core(tmp_path)
    assert core.board_state(1, 50.0).battery is None  # never reported (a USB board)
    outcome = core.apply(input_of(1, BATTERY, {"percent": 37, "charging": False}, 60.0))
    assert outcome.boards == {1}
    assert core.board_state(1, 60.0).battery == 37
    change = _change("Open", 2, (1, "D, D", "A, A"))
    core.apply(input_of(EVENT_BOARD, ROUND, change.payload(), 200.0))
    state = core.board_state(1, 200.0)
    assert (state.battery, state.battery_charging, state.round) == (37, False, "2.1")


def test_core_refuses_another_sections_board_and_unknown_sections(tmp_path: Path) -> None:
    core = _core(tmp_path)
    from daemon.arbiter.results import CommandRefused

    with pytest.raises(CommandRefused, match="belongs to section 'U12'"):
        core.apply(input_of(EVENT_BOARD, ROUND, _change("Open", 2, (11, "a", "b")).payload(), 1.0))
    with pytest.raises(CommandRefused, match='no section "Blitz"'):
        core.apply(input_of(EVENT_BOARD, ROUND, _change("Blitz", 2, (5, "a", "b")).payload(), 1.0))
    assert core.board_state(11, 1.0).round == "3.11"


def _pairing_event(tmp_path: Path, pairings: str) -> Path:
    for name in ("tournament-example.trf", "round4-pairings.txt"):
        shutil.copy(ROOT / "config" / name, tmp_path / name)
    path = tmp_path / "event.toml"
    path.write_text(
        '[event]\nname = "Riverside"\nround = 4\ntime_control = "5400+30"\n\n'
        f'[pairing]\ntrf = "tournament-example.trf"\n{pairings}\n'
        '[[boards]]\nnumber = 1\nport = "/dev/ttyACM0"\n'
    )
    return path


def test_stale_pairings_are_refused(tmp_path: Path) -> None:
    config = load_config(_pairing_event(tmp_path, 'pairings = "round{round}-pairings.txt"'), env={})
    (tmp_path / "round5-pairings.txt").write_text("1\n3 9\n")  # 3 and 9 met in round 1
    with pytest.raises(PairingFileError) as caught:
        plan_round(config.sections[0], 5)
    assert caught.value.problems == (
        f"{tmp_path / 'round5-pairings.txt'}:2:1: players 3 and 9 already met in round 1:"
        " is this still round 1's pairings file?",
    )


def test_round_from_the_trf_in_board_order(tmp_path: Path) -> None:
    pairings = 'pairings = "round{round}-pairings.txt"'
    config = load_config(_pairing_event(tmp_path, pairings), env={})
    plan = plan_round(config.sections[0], 3)  # no round 3 file: the TRF holds round 3
    assert plan.source == str(tmp_path / "tournament-example.trf")
    # boards by the higher score, then the sum of scores, then the better rank
    assert plan.pairs[0] == (1, 13, 2)
    assert {(w, b) for _, w, b in plan.pairs if b is not None} == {
        (13, 2),
        (4, 12),
        (1, 3),
        (5, 6),
        (11, 7),
        (8, 9),
    }
    assert [b.number for b in plan.boards] == [1, 2, 3, 4, 5, 6]
    with pytest.raises(PairingFileError, match="round 8 is past the last round"):
        plan_round(config.sections[0], 8)


def test_one_trf_per_section(tmp_path: Path) -> None:
    path = tmp_path / "event.toml"
    for name in ("open.trf", "u12.trf", "open.txt", "u12-3.txt"):
        (tmp_path / name).write_text("")
    path.write_text(SECTIONS + '\n[pairing]\ntrf = "open.trf"\npairings = "open.txt"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    assert caught.value.problems == (
        f"{path}: pairing: one TRF is one tournament: with several [[sections]] give each"
        " its own [sections.pairing]",
    )
    own = SECTIONS.replace(
        "round = 3\n",
        'round = 3\n[sections.pairing]\ntrf = "u12.trf"\npairings = "u12-{round}.txt"\n'
        "first_board = 11\n",
    )
    path.write_text(own)
    config = load_config(path, env={})
    assert config.sections[0].pairing is None
    u12 = config.sections[1].pairing
    assert u12 is not None
    assert (u12.trf, u12.first_board) == (tmp_path / "u12.trf", 11)


def test_a_snapshot_holds_the_round_change(tmp_path: Path) -> None:
    core = _core(tmp_path)
    change = _change("Open", 2, (2, "D, D", "A, A"), (3, "B, B", "C, C"))
    core.apply(input_of(EVENT_BOARD, ROUND, change.payload(), 200.0))
    restored = _core(tmp_path)
    load_state(restored, dump_state(core))
    for number in (1, 2, 3, 11):
        assert restored.board_state(number, 300.0) == core.board_state(number, 300.0)
    assert restored.config.sections[0].event.round == 2


def _open_with_pairing(tmp_path: Path, extra: str = "") -> Path:
    """The two sections, the Open in round 4 with its pairing files (round 5's: two games)."""
    for name in ("tournament-example.trf", "round4-pairings.txt"):
        shutil.copy(ROOT / "config" / name, tmp_path / name)
    (tmp_path / "round5-pairings.txt").write_text("2\n1 10\n2 6\n")
    path = tmp_path / "event.toml"
    path.write_text(
        SECTIONS.replace(
            'name = "Open"\n',
            'name = "Open"\nround = 4\n[sections.pairing]\ntrf = "tournament-example.trf"\n'
            f'pairings = "round{{round}}-pairings.txt"\n{extra}',
        )
    )
    return path


def test_a_round_whose_boards_belong_to_another_section_is_refused(tmp_path: Path) -> None:
    core = RoundCore(load_config(_open_with_pairing(tmp_path, "first_board = 10\n"), env={}))
    with Journal(tmp_path / "j.db") as journal:
        keeper = RoundKeeper(core, RoundService(core, journal, Hub()), {})
        reply = keeper.next_round("Open", force=True)
        assert not reply.ok
        assert reply.reason == (
            "Open: board 11 of round 5 is a board of section 'U12': set first_board in its"
            " [sections.pairing]"
        )
        assert journal.last_seq == 0, "nothing journalled"
    assert core.board_state(11, 0.0).round == "3.11"


def test_unconfirmed_results_refuse_the_change_unless_forced(tmp_path: Path) -> None:
    core = RoundCore(load_config(_open_with_pairing(tmp_path), env={}))
    _command(core, SetResult(board=1, result="1-0"), 10.0)
    with Journal(tmp_path / "j.db") as journal:
        keeper = RoundKeeper(core, RoundService(core, journal, Hub()), {})
        refused = keeper.next_round("Open")
        assert not refused.ok
        assert refused.reason.startswith(
            "results not confirmed: board 1: 1-0 not confirmed; board 2: no result."
        )
        assert journal.last_seq == 0
        forced = keeper.next_round("Open", force=True)
        assert forced.ok, forced.reason
        assert forced.details["sections"] == [{"section": "Open", "round": 5, "boards": 2}]
        assert [p["board"] for p in forced.details["pending"]] == [1, 2]
    one = core.board_state(1, 20.0)
    assert (one.round, one.white, one.black, one.result) == (
        "5.1",
        "Okafor, Daniel",
        "Ferreira, Beatriz",
        "*",
    )
    assert keeper.links["Open"].handoff.results.round == 5
