"""The LiveChess 2 PGN folder of a running daemon, file by file, through a round with a
result (a mate on the board) and an illegal move the arbiter let stand."""

from __future__ import annotations

import io
import json
from pathlib import Path

import chess
import chess.pgn

from broadcast.feed.commands import AcceptPosition, ConfirmResult
from broadcast.livechess.folder import LiveChessFolderLayout, livechess_pgn
from broadcast.livechess.resources import Pairing, Player, Tournament
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import Lift, Place, PressLever
from tests.daemon.support import BoardSpec, read_game, running_daemon, wait_for, write_config
from tests.livechess.client import board_state

SPEED = 25.0
OPENING = "1. e4 e5 2. Nf3 Nc6 *"


def _read(path: Path) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(path.read_text()))
    assert game is not None
    assert not game.errors, game.errors
    return game


def _has(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text()


async def _illegal_king_walk(board: EmulatedBoard) -> None:
    """White's king walks e1-e3 (two squares: illegal) and White presses the lever."""
    king = chess.Piece(chess.KING, chess.WHITE)
    board.act(Lift(square=chess.E1))
    board.act(Place(square=chess.E3, piece=king))
    board.act(PressLever(side=board.white_side))


async def test_the_folder_through_a_round_with_a_result_and_an_accepted_illegal_move(
    tmp_path: Path, games_dir: Path
) -> None:
    mate = read_game(games_dir / "molinari-bordais-1979.pgn")  # 0-1 by mate in 10 plies
    opening = chess.pgn.read_game(io.StringIO(OPENING))
    assert opening is not None
    clock = ClockSettings.from_text("3+2")
    async with (
        EmulatedBoard(clock=clock, seed=5) as one,
        EmulatedBoard(clock=clock, seed=6) as two,
    ):
        specs = [BoardSpec(1, str(one.path)), BoardSpec(2, str(two.path))]
        config = write_config(tmp_path, specs, tables={"livechess": {"folder": "lc"}})
        folder = tmp_path / "lc"
        round_dir = folder / "round-2"
        async with running_daemon(config) as daemon:
            assert daemon.livechess is None  # the API is off; the folder is not
            for number in (1, 2):
                await wait_for(daemon.sessions[number].online.is_set, 10, f"board {number} up")
            await one.play(mate, speed=SPEED, noise=0.2)
            await two.play(opening, speed=SPEED)
            game_one, game_two = round_dir / "game-1.pgn", round_dir / "game-2.pgn"
            tracker = daemon.core.games[1].tracker
            assert tracker is not None
            await wait_for(lambda: tracker.result == "0-1", 15, "board 1's mate")
            assert (await daemon.service.execute(ConfirmResult(board=1))).ok  # public now
            await wait_for(lambda: _has(game_one, "0-1\n"), 15, "board 1's result on disk")
            await wait_for(lambda: _has(game_two, "Nc6"), 15, "board 2's opening on disk")
            await _illegal_king_walk(two)
            engine = daemon.core.engine
            await wait_for(lambda: daemon.core.games[2].out_of_sync, 15, "board 2 out of sync")
            reply = await daemon.service.execute(AcceptPosition(board=2))
            assert reply.ok, reply.reason
            assert engine is daemon.core.engine
            await wait_for(lambda: _has(game_two, '[SetUp "1"]'), 15, "the accepted position")
            knight = chess.Piece(chess.KNIGHT, chess.BLACK)
            two.act(Lift(square=chess.G8))
            two.act(Place(square=chess.F6, piece=knight))
            two.act(PressLever(side="right" if two.white_side == "left" else "left"))
            await wait_for(lambda: _has(game_two, "Nf6"), 15, "the game goes on after it")
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert names == [
        "round-2/game-1.pgn",
        "round-2/game-2.pgn",
        "round-2/games.pgn",
        "round-2/index.json",
        "tournament.json",
    ]
    first = _read(round_dir / "game-1.pgn")
    text = (round_dir / "game-1.pgn").read_text()
    assert text.startswith('[ePGN "0.1;dgtcast"]\n[Event "Test Open"]\n')
    assert "WhiteClock" not in text
    assert first.headers["Round"] == "2.1"
    assert first.headers["Result"] == "0-1"
    assert [m.uci() for m in first.mainline_moves()] == [m.uci() for m in mate.mainline_moves()]
    for node in first.mainline():
        assert node.clock() is not None, node.move
    assert "{[%emt 00:00:" in text  # LiveChess's two-digit hours
    assert "{[%clk 00:0" in text

    second = _read(round_dir / "game-2.pgn")
    assert second.headers["SetUp"] == "1"
    after_walk = chess.Board(second.headers["FEN"])
    assert after_walk.piece_at(chess.E3) == chess.Piece(chess.KING, chess.WHITE)
    assert after_walk.turn == chess.BLACK
    assert [m.uci() for m in second.mainline_moves()] == ["g8f6"]
    assert "Position accepted" in second.comment
    assert second.headers["Result"] == "*"

    games = (round_dir / "games.pgn").read_text()
    assert (
        games
        == (round_dir / "game-1.pgn").read_text() + "\n" + (round_dir / "game-2.pgn").read_text()
    )
    index = json.loads((round_dir / "index.json").read_text())
    assert [(p["result"], p["live"]) for p in index["pairings"]] == [("0-1", False), ("*", True)]
    assert index["pairings"][0]["white"] == {
        "fname": "Board",
        "mname": "1",
        "lname": "White",
        "title": None,
        "federation": None,
    }
    tournament = json.loads((folder / "tournament.json").read_text())
    assert tournament["name"] == "Test Open"
    assert tournament["rounds"] == [{"count": 0, "live": 0}, {"count": 2, "live": 1}]


def test_several_sections_get_a_tournament_folder_each_numbered_from_one() -> None:
    sections = (
        Tournament(
            name="Open",
            section="A",
            round=1,
            pairings=(Pairing(board=1, white=Player(name="A1"), black=Player(name="B1")),),
        ),
        Tournament(
            name="Open",
            section="Under 12 / Girls",
            round=1,
            pairings=(Pairing(board=41, white=Player(name="C, D"), black=Player(name="E, F")),),
        ),
    )
    layout = LiveChessFolderLayout(sections, {sections[1].uuid: [{"count": 9, "live": 0}]})
    layout.receive_board(board_state(41, ["e4"], round="1.41"))
    files = layout.files()
    assert sorted(str(p) for p in files) == [
        "A/round-1/game-1.pgn",
        "A/round-1/games.pgn",
        "A/round-1/index.json",
        "A/tournament.json",
        "Under-12-Girls/round-1/game-1.pgn",
        "Under-12-Girls/round-1/games.pgn",
        "Under-12-Girls/round-1/index.json",
        "Under-12-Girls/tournament.json",
    ]
    assert (
        "1. e4 {[%clk 00:10:00]} {[%emt 00:00:01]} *"
        in files[next(p for p in files if str(p) == "Under-12-Girls/round-1/game-1.pgn")]
    )
    assert json.loads(files[next(p for p in files if str(p) == "A/tournament.json")])["rounds"] == [
        {"count": 1, "live": 0}
    ]
    layout.receive_written(next(iter(files)), files[next(iter(files))])
    assert len(layout.changed_files()) == len(files) - 1


def test_a_game_from_a_position_with_black_to_move_numbers_its_moves() -> None:
    start = "rnbqkbnr/pppp1ppp/8/4p3/4P3/4K3/PPPP1PPP/RNBQ1BNR b kq - 1 2"
    text = livechess_pgn(board_state(1, ["Nf6", "Kd3"], start=start))
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    assert not game.errors
    assert "2... Nf6 {[%clk 00:10:00]} {[%emt 00:00:01]} 3. Kd3" in text
    assert [m.uci() for m in game.mainline_moves()] == ["g8f6", "e3d3"]


def test_a_forfeit_without_a_game_is_a_standard_pgn_result() -> None:
    """An empty board with a forfeit: its winner's result (issue 33, item 2)."""
    for result, pgn_result in (("+-", "1-0"), ("-+", "0-1"), ("--", "*")):
        state = board_state(3, [], pgn="", result=result, result_final=True)
        text = livechess_pgn(state)
        game = chess.pgn.read_game(io.StringIO(text))
        assert game is not None
        assert not game.errors
        assert game.headers["Result"] == pgn_result
        assert text.rstrip().endswith(pgn_result)
