"""When the board's memory cannot cover a gap: the search, the arbiter's choice, replays.

The round core is driven with journal inputs as the board session sends them: a game
followed live, the board coming back with a placement some plies ahead and a memory
that does not reach back (a USB board that lost its power: its log starts at the
power-up), then the arbiter's ``choose_line`` when several move orders fit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chess
import pytest

from base.fen import board_fen
from broadcast.feed.alerts import AlertKind
from broadcast.feed.commands import ChooseLine
from daemon.arbiter.results import CommandRefused
from daemon.config.model import load_config
from daemon.journal.inputs import ARBITER, CLOCK, LINK, PLACEMENT, RECOVERY
from daemon.round.codec import command_payload, input_of, payload_of
from daemon.round.core import Outcome, RoundCore
from daemon.round.inputs import RoundInput
from daemon.round.snapshot import dump_state, load_state
from drivers.memory import BoardMemory, LoggedPowerUp, memory_payload
from tests.daemon.support import FAST_TRACKER, BoardSpec, clock_input, write_config


def _core(tmp_path: Path) -> RoundCore:
    config = write_config(tmp_path, [BoardSpec(1, "/dev/null", clock_white_side="left")])
    return RoundCore(load_config(config, env={}), FAST_TRACKER)


def _clock(running: str | None, left: int = 180, right: int = 180) -> dict[str, Any]:
    return clock_input(left, right, running)


def _play_live(core: RoundCore, moves: list[str]) -> tuple[chess.Board, float]:
    """Follow ``moves`` live: placement, then the mover's press; White sits left."""
    at = 1000.0
    core.apply(input_of(1, LINK, {"state": "online", "reason": ""}, at))
    board = chess.Board()
    core.apply(input_of(1, PLACEMENT, {"fen": board.board_fen()}, at))
    core.apply(input_of(1, CLOCK, _clock("left"), at))
    for uci in moves:
        at += 5
        board.push_uci(uci)
        core.apply(input_of(1, PLACEMENT, {"fen": board.board_fen()}, at))
        core.apply(input_of(1, CLOCK, _clock("right" if board.turn == chess.BLACK else "left"), at))
    return board, at


def _back_with(core: RoundCore, placement: chess.Board, running: str, at: float) -> None:
    """The board returns after losing power: its memory holds only the power-up."""
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


def _line(core: RoundCore) -> list[str]:
    return [move.uci for move in core.games[1].record.moves]


def test_one_legal_sequence_is_published_and_the_arbiter_told(tmp_path: Path) -> None:
    core = _core(tmp_path)
    board, at = _play_live(core, ["e2e4", "e7e5", "g1f3"])
    ahead = board.copy()
    for uci in ("b8c6", "f1b5", "c6d4"):  # 3 plies while unplugged, one order only
        ahead.push_uci(uci)
    _back_with(core, ahead, "left", at)
    assert _line(core) == ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "c6d4"]
    alert = next(a for a in core.engine.alerts if a.kind is AlertKind.MOVES_RECOVERED)
    assert alert.details == {"from_ply": 4, "plies": 3, "source": "search"}
    assert core.games[1].recovered_plies == 3


def test_several_move_orders_wait_for_the_arbiter(tmp_path: Path) -> None:
    core = _core(tmp_path)
    board, at = _play_live(core, ["e2e4"])
    ahead = board.copy()
    for uci in ("e7e5", "g1f3", "b8c6", "f1c4"):  # e5/Nc6 and Nf3/Bc4 in either order
        ahead.push_uci(uci)
    _back_with(core, ahead, "right", at)
    assert _line(core) == ["e2e4"]
    alert = next(a for a in core.engine.alerts if a.kind is AlertKind.GAP_AMBIGUOUS)
    lines = alert.details["lines"]
    assert len(lines) == 4
    assert ["e5", "Nf3", "Nc6", "Bc4"] in lines
    with pytest.raises(CommandRefused):
        core.apply(input_of(1, ARBITER, command_payload(ChooseLine(board=1, line=5)), at + 3))
    chosen = lines.index(["e5", "Nf3", "Nc6", "Bc4"]) + 1
    core.apply(input_of(1, ARBITER, command_payload(ChooseLine(board=1, line=chosen)), at + 4))
    assert _line(core) == ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]
    assert core.games[1].recovered_plies == 4
    with pytest.raises(CommandRefused):  # chosen once
        core.apply(input_of(1, ARBITER, command_payload(ChooseLine(board=1, line=chosen)), at + 5))


def test_no_legal_sequence_leaves_the_game_as_it_was(tmp_path: Path) -> None:
    core = _core(tmp_path)
    board, at = _play_live(core, ["e2e4", "e7e5"])
    odd = board.copy()
    odd.remove_piece_at(chess.D1)  # a queen gone without a capture
    _back_with(core, odd, "left", at)
    assert _line(core) == ["e2e4", "e7e5"]
    kinds = {a.kind for a in core.engine.alerts}
    assert AlertKind.MOVES_RECOVERED not in kinds
    assert AlertKind.GAP_AMBIGUOUS not in kinds


class _Recording(RoundCore):
    """A core that keeps every input it applied, to replay them into another."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.inputs: list[tuple[int, str, dict[str, Any], float]] = []

    def apply(self, item: RoundInput) -> Outcome:
        self.inputs.append((item.board, item.KIND, payload_of(item), item.at))
        return super().apply(item)


def _view(core: RoundCore) -> tuple[object, ...]:
    game = core.games[1]
    alerts = [(a.id, a.kind, a.details) for a in core.engine.alerts]
    return (_line(core), game.recovered_plies, game.candidates, game.catching_up, alerts)


def test_recovery_inputs_replay_and_snapshots_cover_them(tmp_path: Path) -> None:
    config = write_config(tmp_path, [BoardSpec(1, "/dev/null", clock_white_side="left")])
    loaded = load_config(config, env={})
    live = _Recording(loaded, FAST_TRACKER)
    board, at = _play_live(live, ["e2e4"])
    ahead = board.copy()
    for uci in ("e7e5", "g1f3", "b8c6", "f1c4"):
        ahead.push_uci(uci)
    _back_with(live, ahead, "right", at)
    live.apply(input_of(1, ARBITER, command_payload(ChooseLine(board=1, line=1)), at + 4))
    inputs = live.inputs
    for cut in range(len(inputs) + 1):
        replayed = RoundCore(loaded, FAST_TRACKER)
        for item in inputs[:cut]:
            replayed.apply(input_of(*item))
        restored = RoundCore(loaded, FAST_TRACKER)
        load_state(restored, dump_state(replayed))
        for item in inputs[cut:]:
            restored.apply(input_of(*item))
        assert _view(restored) == _view(live), f"cut at input {cut}"
