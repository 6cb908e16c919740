"""Accepting a board's position never throws moves away silently (issue 32, item 2).

The round core is driven with the inputs a board session journals: a game followed
live, the board back with a placement some plies ahead that its memory cannot explain,
then the arbiter's ``accept_position``. The moves up to the last agreement stay, the jump
is marked in the PGN, and the alert says how many plies the record lacks (or that they
cannot be counted).
"""

from __future__ import annotations

import io
from pathlib import Path

import chess
import chess.pgn

from base.fen import board_fen
from broadcast.feed.alerts import AlertKind
from broadcast.feed.commands import AcceptPosition
from daemon.config.model import load_config
from daemon.journal.inputs import ARBITER, CLOCK, LINK, PLACEMENT, RECOVERY, TICK
from daemon.round.codec import command_payload, input_of
from daemon.round.core import RoundCore
from drivers.memory import BoardMemory, LoggedPowerUp, memory_payload
from tests.daemon.support import FAST_TRACKER, BoardSpec, clock_input, write_config

_SYNC_KINDS = (AlertKind.OUT_OF_SYNC, AlertKind.GAP_AMBIGUOUS)


def _core(tmp_path: Path, moves: list[str]) -> tuple[RoundCore, chess.Board, float]:
    """Board 1 followed live through ``moves`` (White sits left)."""
    config = write_config(tmp_path, [BoardSpec(1, "/dev/null", clock_white_side="left")])
    core = RoundCore(load_config(config, env={}), FAST_TRACKER)
    at = 1000.0
    core.apply(input_of(1, LINK, {"state": "online", "reason": ""}, at))
    board = chess.Board()
    core.apply(input_of(1, PLACEMENT, {"fen": board.board_fen()}, at))
    core.apply(input_of(1, CLOCK, clock_input(180, 180, "left"), at))
    for uci in moves:
        at += 5
        board.push_uci(uci)
        core.apply(input_of(1, PLACEMENT, {"fen": board.board_fen()}, at))
        running = "right" if board.turn == chess.BLACK else "left"
        core.apply(input_of(1, CLOCK, clock_input(180, 180, running), at))
    return core, board, at


def _back_with(core: RoundCore, placement: chess.BaseBoard, running: str, at: float) -> None:
    """The board returns after losing power: its memory holds only the power-up; the
    placement and the clock follow the memory, as the session sends them."""
    memory = BoardMemory(steps=(LoggedPowerUp(placement=chess.BaseBoard(placement.board_fen())),))
    core.apply(input_of(1, LINK, {"state": "offline", "reason": "unplugged"}, at))
    core.apply(input_of(1, LINK, {"state": "online", "reason": ""}, at + 1))
    core.apply(input_of(1, RECOVERY, {"state": "reading"}, at + 1))
    payload = {
        "state": "read",
        "memory": memory_payload(memory),
        "placement": board_fen(placement),
        "running": running,
    }
    core.apply(input_of(1, RECOVERY, payload, at + 2))
    core.apply(input_of(1, PLACEMENT, {"fen": placement.board_fen()}, at + 2))
    core.apply(input_of(1, CLOCK, clock_input(170, 170, running), at + 2))


def _sync_alerts(core: RoundCore) -> list[AlertKind]:
    return [a.kind for a in core.engine.open_alerts if a.kind in _SYNC_KINDS]


def _accept(core: RoundCore, at: float) -> tuple[chess.pgn.Game, list[str]]:
    """The arbiter accepts the board; the PGN read back, and the notes of the alerts
    about its sync that the acceptance resolved."""
    outcome = core.apply(input_of(1, ARBITER, command_payload(AcceptPosition(board=1)), at))
    notes = [
        alert.history[-1].note
        for alert in outcome.alerts
        if alert.kind in _SYNC_KINDS and not alert.is_open
    ]
    pgn = core.board_state(1, at).pgn
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    assert not game.errors
    return game, notes


def test_accepting_a_position_some_plies_ahead_counts_the_plies_not_recovered(
    tmp_path: Path,
) -> None:
    core, board, at = _core(tmp_path, ["e2e4", "e7e5"])
    ahead = board.copy()
    for uci in ("g1f3", "b8c6", "f1c4"):  # the memory lost them; Nf3 and Bc4 in any order
        ahead.push_uci(uci)
    _back_with(core, ahead, "right", at)
    core.apply(input_of(0, TICK, {}, at + 30))
    assert [move.uci for move in core.games[1].record.moves] == ["e2e4", "e7e5"]
    waiting = [AlertKind.GAP_AMBIGUOUS, AlertKind.OUT_OF_SYNC]
    assert _sync_alerts(core) == waiting, "the board waits for the arbiter"

    game, notes = _accept(core, at + 40)
    assert game.comment == (
        "Position accepted by the arbiter after 1. e4 e5, then 3 plies not recovered;"
        " play went on from the board as it stood."
    )
    assert game.headers["SetUp"] == "1"
    assert game.board().board_fen() == ahead.board_fen()  # the FEN of the jump
    assert game.board().fullmove_number == 3, "3. ... Black to move: after the lost plies"
    assert notes == 2 * [
        "an arbiter accepted the board's position: the moves up to the last agreement stay,"
        " 3 plies not recovered"
    ]
    assert _sync_alerts(core) == []


def test_plies_no_legal_line_explains_cannot_be_counted(tmp_path: Path) -> None:
    core, board, at = _core(tmp_path, ["e2e4", "e7e5", "g1f3"])
    odd = board.copy()
    odd.remove_piece_at(chess.D8)  # a queen gone without a capture: no legal line
    odd.remove_piece_at(chess.G8)
    _back_with(core, odd, "right", at)
    core.apply(input_of(0, TICK, {}, at + 30))  # the tracker says out of sync
    assert _sync_alerts(core) == [AlertKind.OUT_OF_SYNC]

    game, notes = _accept(core, at + 40)
    assert game.comment == (
        "Position accepted by the arbiter after 1. e4 e5 2. Nf3, then the plies since cannot"
        " be counted (no legal line of up to 8 plies found); play went on from the"
        " board as it stood."
    )
    assert notes == [
        "an arbiter accepted the board's position: the moves up to the last agreement stay,"
        " the plies since cannot be counted (no legal line of up to 8 plies found)"
    ]


def test_a_board_that_matches_the_game_is_accepted_without_a_jump(tmp_path: Path) -> None:
    core, _, at = _core(tmp_path, ["e2e4", "e7e5"])
    game, _ = _accept(core, at + 10)
    assert game.comment == ""
    assert "SetUp" not in game.headers
    assert [move.uci() for move in game.mainline_moves()] == ["e2e4", "e7e5"]
