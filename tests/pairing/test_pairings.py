"""The pairing engine's output, each board's players, and the example configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.config.model import BoardConfig, load_config
from daemon.pairing.pairings import (
    BoardPlayers,
    Pairing,
    boards_from_pairings,
    parse_pairings,
    read_pairings,
)
from daemon.pairing.trf import PairingFileError, Tournament
from tests.pairing.support import EXAMPLE_PAIRINGS, EXAMPLE_TRF
from tests.shared_data import ROOT


def test_the_example_pairings_in_board_order_with_the_bye_last() -> None:
    pairings = read_pairings(EXAMPLE_PAIRINGS, tournament=Tournament.from_trf(EXAMPLE_TRF))
    assert pairings == [
        Pairing(board=1, white=2, black=1),
        Pairing(board=2, white=13, black=4),
        Pairing(board=3, white=6, black=3),
        Pairing(board=4, white=7, black=12),
        Pairing(board=5, white=10, black=8),
        Pairing(board=6, white=11, black=None),
    ]
    assert [p.is_bye for p in pairings] == [False] * 5 + [True]
    assert pairings[5].where == f"{EXAMPLE_PAIRINGS}:7:1"


def test_games_are_numbered_from_the_first_board_and_byes_come_after_them() -> None:
    pairings = parse_pairings("3 \r\n 9 0\r\n  4   5\r\n\r\n7 8\r\n", source="r", first_board=11)
    assert pairings == [
        Pairing(board=11, white=4, black=5),
        Pairing(board=12, white=7, black=8),
        Pairing(board=13, white=9, black=None),
    ]
    assert [p.line for p in pairings] == [3, 5, 2]


def test_a_round_with_no_games() -> None:
    assert parse_pairings("0\n", source="r") == []


def test_each_boards_players_come_from_the_trf() -> None:
    tournament = Tournament.from_trf(EXAMPLE_TRF)
    boards = boards_from_pairings(tournament, read_pairings(EXAMPLE_PAIRINGS))
    assert [b.board for b in boards] == [1, 2, 3, 4, 5]
    assert boards[0] == BoardPlayers(
        board=1,
        white_rank=2,
        black_rank=1,
        white="Lindqvist, Maja",
        black="Okafor, Daniel",
        white_elo=2270,
        black_elo=2315,
        white_fide_id=1789012,
        black_fide_id=3212345,
        white_title="WIM",
        black_title="FM",
    )
    assert (boards[1].white, boards[1].white_elo, boards[1].white_title) == (
        "Brennan, Oscar",
        None,  # unrated
        None,
    )


def test_players_merge_into_the_boards_of_the_example_configuration() -> None:
    config = load_config(ROOT / "config" / "pairing.toml", env={})
    assert config.pairing is not None
    assert config.pairing.trf == EXAMPLE_TRF
    assert config.pairing.pairings == EXAMPLE_PAIRINGS
    assert config.sections[0].event.round == 4
    tournament = Tournament.from_trf(config.pairing.trf)
    players = {
        b.board: b for b in boards_from_pairings(tournament, read_pairings(config.pairing.pairings))
    }
    merged = [
        BoardConfig.model_validate({**board.model_dump(), **players[board.number].board_fields()})
        for board in config.boards
    ]
    assert [(b.number, b.port, b.white, b.black) for b in merged] == [
        (1, "/dev/ttyACM0", "Lindqvist, Maja", "Okafor, Daniel"),
        (2, "/dev/ttyACM1", "Brennan, Oscar", "Moreau, Claire"),
    ]
    assert (merged[0].white_title, merged[0].black_fide_id) == ("WIM", 3212345)


def test_boards_from_pairings_refuses_unknown_players(tmp_path: Path) -> None:
    pairings = tmp_path / "r.txt"
    pairings.write_text("1\n1 44\n")
    with pytest.raises(PairingFileError) as caught:
        boards_from_pairings(Tournament.from_trf(EXAMPLE_TRF), read_pairings(pairings))
    assert str(caught.value) == (
        f"{pairings}:2:1: player 44 is not in {EXAMPLE_TRF} (starting ranks 1-13)"
    )
