"""The PGN record: tags, [%clk] and [%emt] on every move, corrections in the main line."""

from __future__ import annotations

import io
from pathlib import Path

import chess
import chess.pgn
import pytest

from daemon.game.events import (
    FlagFell,
    GameEnded,
    GameStarted,
    MoveMade,
    MovesWithdrawn,
    PositionAccepted,
    ResultSignalled,
)
from daemon.game.record import GameHeaders, GameRecord, pgn_text
from tests.game.table import Table
from tests.game.test_recordings import expected_moves, replay

HEADERS = GameHeaders(
    event="Example Open 2025",
    site="Adelaide AUS",
    date="2025.01.04",
    round="3.1",
    white="Carlsen, Magnus",
    black="Nepomniachtchi, Ian",
    white_elo=2830,
    black_elo=2760,
    time_control="5400+30",
    white_fide_id="1503014",
    black_fide_id="4168119",
    white_title="GM",
    black_title="GM",
)


def read_back(text: str) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    assert game.errors == []
    return game


def move(ply: int, uci: str, san: str, clock: float | None = 60.0) -> MoveMade:
    return MoveMade(
        ply=ply, uci=uci, san=san, clock=clock, clock_before=clock, emt=3.0, fen="-", at=0.0
    )


@pytest.mark.parametrize("name", ["1", "2", "johan"])
def test_recordings_give_their_game_with_a_clock_on_every_move(
    recordings_dir: Path, name: str
) -> None:
    result = replay(recordings_dir / f"{name}.inbytes")
    record = GameRecord(HEADERS)
    for event in result.events:
        record.receive_event(event)
    game = read_back(record.pgn_text())
    nodes = list(game.mainline())
    assert [node.move.uci() for node in nodes] == expected_moves(recordings_dir, name)
    made = [e for e in result.events if isinstance(e, MoveMade)]
    assert [node.clock() for node in nodes] == [m.clock for m in made]
    assert [node.emt() for node in nodes] == [m.emt for m in made]
    assert None not in [node.clock() for node in nodes]  # the last move's too


def test_johan_ends_one_nil_on_time(recordings_dir: Path) -> None:
    record = GameRecord(HEADERS)
    for event in replay(recordings_dir / "johan.inbytes").events:
        record.receive_event(event)
    game = read_back(record.pgn_text())
    assert game.headers["Result"] == "1-0"
    assert game.headers["Termination"] == "time forfeit"
    last = game.end().move
    assert last is not None
    assert last.uci() == "c5c6"


def test_tags_in_order_and_the_clock_comment_format() -> None:
    record = GameRecord(HEADERS)
    record.receive_event(GameStarted(rotated=False, at=0.0))
    record.receive_event(move(1, "e2e4", "e4", clock=5432.0))
    text = record.pgn_text()
    assert text.splitlines()[:16] == [
        '[Event "Example Open 2025"]',
        '[Site "Adelaide AUS"]',
        '[Date "2025.01.04"]',
        '[Round "3.1"]',
        '[White "Carlsen, Magnus"]',
        '[Black "Nepomniachtchi, Ian"]',
        '[Result "*"]',
        '[WhiteElo "2830"]',
        '[BlackElo "2760"]',
        '[WhiteTitle "GM"]',
        '[BlackTitle "GM"]',
        '[WhiteFideId "1503014"]',
        '[BlackFideId "4168119"]',
        '[TimeControl "5400+30"]',
        "",
        "1. e4 { [%clk 1:30:32] [%emt 0:00:03] } *",
    ]


def test_optional_tags_only_when_known() -> None:
    tags = GameHeaders(white="A", black="B").tags()
    assert list(tags) == ["Event", "Site", "Date", "Round", "White", "Black", "TimeControl"]
    with pytest.raises(ValueError, match="FIDE id"):
        GameHeaders(white_fide_id="GM123")


def test_a_correction_replaces_the_move_in_the_main_line() -> None:
    record = GameRecord()
    for event in (
        move(1, "e2e4", "e4"),
        move(2, "d7d5", "d5"),
        MovesWithdrawn(from_ply=2, reason="correction", at=1.0),
        move(2, "e7e5", "e5"),
    ):
        record.receive_event(event)
    game = read_back(record.pgn_text())
    assert [node.move.uci() for node in game.mainline()] == ["e2e4", "e7e5"]
    assert all(len(node.variations) <= 1 for node in game.mainline())
    assert [m.san for m in record.moves] == ["e4", "e5"]


def test_a_takeback_cuts_the_main_line() -> None:
    record = GameRecord()
    for uci, san, ply in (("e2e4", "e4", 1), ("e7e5", "e5", 2), ("g1f3", "Nf3", 3)):
        record.receive_event(move(ply, uci, san))
    record.receive_event(MovesWithdrawn(from_ply=2, reason="takeback", at=1.0))
    assert [m.uci for m in record.moves] == ["e2e4"]


def test_an_accepted_position_is_a_set_up_with_the_earlier_moves_in_a_comment() -> None:
    table = Table()
    table.start_clock()
    table.play("e2e4")
    table.play("e7e5")
    table.wait(2)
    table.slide(chess.G1, chess.G3)
    table.wait(0.5)
    table.press(chess.WHITE)
    table.wait(5)
    assert table.accept()
    table.play("b8c6")
    record = GameRecord(HEADERS)
    for event in table.events:
        record.receive_event(event)
    game = read_back(record.pgn_text())
    assert game.headers["SetUp"] == "1"
    assert game.headers["FEN"] == "rnbqkbnr/pppp1ppp/8/4p3/4P3/6N1/PPPP1PPP/RNBQKB1R b KQkq - 0 2"
    assert game.comment == (
        "Position accepted by the arbiter after 1. e4 e5, then the plies since cannot be counted"
        " (no legal line of up to 8 plies found); play went on from the board as it stood."
    )  # Ng1-g3 is no legal move: the jump is marked, nothing counted that cannot be
    assert [node.san() for node in game.mainline()] == ["Nc6"]
    assert "2... Nc6" in record.pgn_text()


def test_results_and_terminations() -> None:
    mate = GameRecord()
    mate.receive_event(GameEnded(result="0-1", termination="checkmate", at=0.0))
    assert (mate.result, mate.termination) == ("0-1", "normal")

    flag_only = GameRecord()
    flag_only.receive_event(FlagFell(color="black", result="1-0", provisional=True, at=0.0))
    assert (flag_only.result, flag_only.termination) == ("*", None)
    flag_only.set_result("1-0", "time forfeit")
    assert read_back(flag_only.pgn_text()).headers["Termination"] == "time forfeit"

    agreed = GameRecord()
    agreed.receive_event(FlagFell(color="black", result="1-0", provisional=True, at=0.0))
    agreed.receive_event(ResultSignalled(result="1/2-1/2", at=1.0))
    assert (agreed.result, agreed.termination) == ("1/2-1/2", "normal")

    with pytest.raises(ValueError, match="result"):
        agreed.set_result("2-0")


def test_a_new_game_starts_a_fresh_record() -> None:
    record = GameRecord()
    record.receive_event(move(1, "e2e4", "e4"))
    record.receive_event(ResultSignalled(result="1-0", at=1.0))
    record.receive_event(GameStarted(rotated=True, at=2.0))
    assert (record.moves, record.result) == ((), "*")
    assert pgn_text(record.game()).endswith("*\n")


def test_position_accepted_before_any_move_has_no_comment() -> None:
    record = GameRecord()
    record.receive_event(GameStarted(rotated=False, at=0.0))
    record.receive_event(PositionAccepted(fen="4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", at=0.0))
    record.receive_event(move(1, "e2e4", "e4"))
    game = read_back(record.pgn_text())
    assert game.comment == ""
    assert game.headers["FEN"] == "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
