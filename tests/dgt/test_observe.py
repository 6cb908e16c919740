"""DGT events → vendor-neutral observations (drivers/dgt/observe.py)."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import chess
import chess.pgn
import pytest

from drivers.dgt.events import BoardDump, ClockTimes, FieldUpdated, Version
from drivers.dgt.observe import PIECES, SensorBoard, clock_observation, square_of_field
from drivers.dgt.protocol import decode_message
from drivers.observations import ClockSide, PlacementObserved
from tests.dgt.golden import START


def start_dump() -> BoardDump:
    return BoardDump(squares=tuple(START))


def replay(recordings_dir: Path, name: str) -> tuple[SensorBoard, list[PlacementObserved]]:
    board = SensorBoard()
    observed = []
    lines = (recordings_dir / f"{name}.inbytes").read_text().split()
    for index, line in enumerate(lines):
        placement = board.receive_event(decode_message(base64.b64decode(line)), float(index))
        if placement is not None:
            observed.append(placement)
    return board, observed


def final_position(path: Path) -> chess.BaseBoard:
    board = chess.Board()
    for token in path.read_text().split():
        if not token.endswith(".") and token != "*":
            board.push_uci(token)
    return chess.BaseBoard(board.board_fen())


# --- squares and pieces (§5) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "name"),
    [(0, "a8"), (7, "h8"), (8, "a7"), (36, "e4"), (52, "e2"), (56, "a1"), (63, "h1")],
)
def test_square_of_field(field: int, name: str) -> None:
    assert chess.square_name(square_of_field(field)) == name


def test_piece_codes() -> None:
    # §5.1: white 0x01–0x06 and black 0x07–0x0C in the order P R N B K Q.
    assert "".join(PIECES[code].symbol() for code in range(1, 13)) == "PRNBKQprnbkq"
    assert set(PIECES) == set(range(1, 13))


# --- SensorBoard -------------------------------------------------------------------------------


def test_dump_gives_the_placement() -> None:
    board = SensorBoard()
    assert board.placement is None
    observed = board.receive_event(start_dump(), at=1.5)
    assert observed == PlacementObserved(board=chess.BaseBoard(), at=1.5)
    assert board.placement == chess.BaseBoard()


def test_updates_before_a_dump_are_counted_and_dropped() -> None:
    board = SensorBoard()
    assert board.receive_event(FieldUpdated(field=52, piece=0), at=0.0) is None
    assert board.updates_before_dump == 1
    assert board.placement is None


def test_update_changes_the_placement_once() -> None:
    board = SensorBoard()
    board.receive_event(start_dump(), at=0.0)
    observed = board.receive_event(FieldUpdated(field=52, piece=0), at=2.0)
    assert observed is not None
    assert observed.at == 2.0
    assert observed.board.piece_at(chess.E2) is None
    assert board.receive_event(FieldUpdated(field=52, piece=0), at=3.0) is None
    placed = board.receive_event(FieldUpdated(field=36, piece=1), at=4.0)
    assert placed is not None
    assert placed.board.piece_at(chess.E4) == chess.Piece(chess.PAWN, chess.WHITE)


def test_observations_do_not_share_the_board() -> None:
    board = SensorBoard()
    first = board.receive_event(start_dump(), at=0.0)
    board.receive_event(FieldUpdated(field=52, piece=0), at=1.0)
    assert first is not None
    assert first.board == chess.BaseBoard()
    copy = board.placement
    assert copy is not None
    copy.clear_board()
    assert board.placement != copy


@pytest.mark.parametrize("code", [0x0D, 0x0E, 0x0F, 0x10, 0x7F])
def test_magic_and_unknown_pieces_read_as_empty(code: int) -> None:
    board = SensorBoard()
    squares = list(START)
    squares[27] = code  # d5
    observed = board.receive_event(BoardDump(squares=tuple(squares)), at=0.0)
    assert observed is not None
    assert observed.board == chess.BaseBoard()
    assert board.ignored_codes == 1
    # Taking a real piece away and putting the magic piece there is one change, not two.
    assert board.receive_event(FieldUpdated(field=52, piece=code), at=1.0) is not None
    assert board.receive_event(FieldUpdated(field=27, piece=0), at=2.0) is None
    assert board.ignored_codes == 2


def test_other_events_are_ignored() -> None:
    board = SensorBoard()
    board.receive_event(start_dump(), at=0.0)
    assert board.receive_event(Version(major=1, minor=2), at=1.0) is None


def test_replay_of_recording_1_ends_in_the_game_position(recordings_dir: Path) -> None:
    board, observed = replay(recordings_dir, "1")
    assert board.placement == final_position(recordings_dir / "1.uci")
    assert board.updates_before_dump == board.ignored_codes == 0
    assert len(observed) > 60


def test_replay_of_recording_2_is_rotated(recordings_dir: Path) -> None:
    # Recording 2 was played on a board set up rotated: every field reads as n ^ 63 (§5.2).
    board, _ = replay(recordings_dir, "2")
    placement = board.placement
    assert placement is not None
    rotated = placement.transform(chess.flip_vertical).transform(chess.flip_horizontal)
    assert rotated == final_position(recordings_dir / "2.uci")


def test_replay_of_johan_shows_the_game_then_the_result_kings(recordings_dir: Path) -> None:
    board, observed = replay(recordings_dir, "johan")
    game = chess.pgn.read_game(io.StringIO((recordings_dir / "johan.pgn").read_text()))
    assert game is not None
    assert chess.BaseBoard(game.end().board().board_fen()) in [
        placement.board for placement in observed
    ]
    # §9.1: kings on d5 (black) and e4 (white), both light squares: 1-0.
    final = board.placement
    assert final is not None
    assert final.piece_at(chess.D5) == chess.Piece(chess.KING, chess.BLACK)
    assert final.piece_at(chess.E4) == chess.Piece(chess.KING, chess.WHITE)


# --- clock_observation (§7.2) ------------------------------------------------------------------


def reading(hex_frame: str) -> ClockTimes:
    event = decode_message(bytes.fromhex(hex_frame))
    assert isinstance(event, ClockTimes)
    return event


def test_running_left_side() -> None:
    observed = clock_observation(reading("8d000a20030220030109"), at=7.0)
    assert (observed.left_seconds, observed.right_seconds) == (181, 182)
    assert (observed.running, observed.lever) == (ClockSide.LEFT, ClockSide.LEFT)
    assert (observed.left_flag, observed.right_flag, observed.connected) == (False, False, True)
    assert observed.at == 7.0


def test_flag_fallen_on_the_right() -> None:
    observed = clock_observation(reading("8d000a30000020001612"), at=0.0)
    assert (observed.left_seconds, observed.right_seconds) == (16, 0)
    assert (observed.running, observed.lever) == (None, ClockSide.RIGHT)
    assert (observed.left_flag, observed.right_flag) == (False, True)


def test_running_right_side() -> None:
    observed = clock_observation(reading("8d000a20030220030113"), at=0.0)
    assert (observed.running, observed.lever) == (ClockSide.RIGHT, ClockSide.RIGHT)


def test_no_clock_bit_means_disconnected() -> None:
    assert not clock_observation(reading("8d000a20030220030128"), at=0.0).connected


def test_flag_shown_is_not_a_fallen_flag() -> None:
    # Bit 0x40: the flag shows but the clock may still run (next period) — §7.2.
    observed = clock_observation(reading("8d000a60030220030109"), at=0.0)
    assert not observed.right_flag
