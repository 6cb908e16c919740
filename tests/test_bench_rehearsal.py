"""bench/rehearsal.py's pieces: the clock record, the truth it gives, the comparison with
a PGN, the runs' plan; and ``dgtcast emulate --record`` as a real process."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import io
import json
from pathlib import Path
from types import ModuleType
from typing import Literal

import chess
import chess.pgn
import pytest

from daemon.game.durations import TimeControl
from drivers.dgt import commands as cmd
from drivers.emulator.clock import ChessClock, ClockSettings, Side
from drivers.emulator.player import PressLever, StartClock
from drivers.emulator.record import ClockRecord
from tests.serving import dgtcast

ROOT = Path(__file__).resolve().parent.parent
CONTROL = TimeControl.from_text("3600+10")


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, ModuleType]:
    """bench/rehearsal.py and bench/rehearsal_truth.py, imported as bench/run does."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    return importlib.import_module("rehearsal"), importlib.import_module("rehearsal_truth")


class _Table:
    """A mode 23 clock and its record, driven by hand; the record's lines in ``lines``."""

    def __init__(self, mode: int = 23) -> None:
        settings = ClockSettings(base_seconds=3600, increment_seconds=10, mode=mode)
        self.clock = ChessClock(settings)
        self.lines: list[str] = []
        self.record = ClockRecord(self.lines.append, white_side="left")
        self.now = 0.0

    def act(self, action: PressLever | StartClock, after: float) -> None:
        self.now += after
        before = self.record.before_action(action, self.clock, self.now)
        if isinstance(action, PressLever):
            self.clock.press_lever(action.side, self.now)
        else:
            self.clock.start(self.now)
        self.record.acted(action, before, self.clock, self.now)

    def press(self, side: Side, after: float) -> None:
        self.act(PressLever(side=side), after)

    def setnrun(
        self, left: int, right: int, run: Literal["left", "right", "paused"], after: float = 0.05
    ) -> None:
        """dgtcast's SetNRun reaches the clock."""
        self.now += after
        command = cmd.ClockSetAndRun(
            left_seconds=left, right_seconds=right, run=run, toggle_on_lever=True
        )
        self.clock.set_and_run(
            left_seconds=left, right_seconds=right, run=run, toggle_on_lever=True, now=self.now
        )
        self.record.received([command], self.clock, self.now)


def _shown(table: _Table, side: Side) -> int:
    reading = table.clock.reading(table.now)
    return (reading.left if side == "left" else reading.right).seconds


def test_the_record_has_a_line_per_press_and_setnrun_and_the_start() -> None:
    table = _Table()
    table.setnrun(3610, 3610, "paused")
    table.act(StartClock(), 1.0)
    table.press("left", 3.2)
    table.setnrun(_shown(table, "left") + 10, _shown(table, "right"), "right")
    table.press("left", 0.5)  # the same player again: no ply
    events = [json.loads(line) for line in table.lines]
    assert [e["event"] for e in events] == ["set", "start", "press", "set"]
    press = events[2]
    assert (press["ply"], press["side"], press["color"]) == (1, "left", "white")
    assert (press["before"], press["shown"], press["switched"]) == (3607, 3607, True)
    assert (events[3]["left"], events[3]["right"], events[3]["run"]) == (3617, 3610, "right")


def test_a_daemon_down_for_some_presses_owes_their_increments(
    bench: tuple[ModuleType, ModuleType],
) -> None:
    _, truth = bench
    table = _Table()
    table.setnrun(3610, 3610, "paused")
    table.act(StartClock(), 1.0)
    table.press("left", 2.0)  # ply 1, paid by the next SetNRun
    table.setnrun(_shown(table, "left") + 10, _shown(table, "right"), "right")
    table.press("right", 3.0)  # ply 2, paid
    table.setnrun(_shown(table, "left"), _shown(table, "right") + 10, "left")
    table.press("left", 4.0)  # plies 3-5: the daemon is down, no SetNRun
    table.press("right", 5.0)
    table.press("left", 6.0)
    # back: one SetNRun with the three increments the clock lacks
    table.setnrun(_shown(table, "left") + 20, _shown(table, "right") + 10, "right")
    table.press("right", 7.0)  # ply 6
    record = truth.read_record(table.lines)
    expected = truth.expected_clocks(record, CONTROL)
    # ply 5: White's own 10 s and ply 3's, unpaid when it was pressed
    assert expected[5] == record.presses[4].before + 20
    # ply 6: ply 4's increment came with the SetNRun before it
    assert expected[6] == record.presses[5].before + 10
    assert expected[3] == record.presses[2].before + 10
    assert record.start == pytest.approx(1.05)  # the first SetNRun reached the clock at 0.05


def test_a_clock_that_adds_the_increment_itself_shows_the_truth(
    bench: tuple[ModuleType, ModuleType],
) -> None:
    _, truth = bench
    table = _Table(mode=12)  # never set by dgtcast: the clock runs Fischer itself
    table.act(StartClock(), 0.5)
    table.press("left", 2.0)
    table.press("right", 2.0)
    table.press("left", 2.0)
    record = truth.read_record(table.lines)
    assert truth.expected_clocks(record, CONTROL) == {p.ply: p.shown for p in record.presses}
    assert all(p.shown == p.before + 10 for p in record.presses)


def _pgn(moves: list[str], clocks: list[float], result: str) -> str:
    game = chess.pgn.Game()
    game.headers["Result"] = result
    node: chess.pgn.GameNode = game
    for san, clock in zip(moves, clocks, strict=True):
        node = node.add_variation(node.board().parse_san(san))
        node.set_clock(clock)
    return str(game)


def test_the_comparison_finds_a_wrong_clock_a_missing_move_and_the_result(
    bench: tuple[ModuleType, ModuleType],
) -> None:
    _, truth = bench
    moves = ["e4", "e5", "Nf3", "Nc6"]
    game = chess.pgn.read_game(io.StringIO(_pgn(moves, [1, 2, 3, 4], "1/2-1/2")))
    assert game is not None
    expected = {1: 3610, 2: 3605, 3: 3615, 4: 3611}
    same = truth.compare(game, _pgn(moves, [3610, 3605, 3616, 3611], "1/2-1/2"), expected)
    assert same.exact()
    assert (same.moves_exact, same.worst_error, same.worst_ply) == (True, 1.0, 3)
    late = truth.compare(game, _pgn(moves, [3610, 3615, 3615, 3611], "1/2-1/2"), expected)
    assert not late.exact()
    assert late.errors == ((2, 3615.0, 3605),)
    short = truth.compare(game, _pgn(moves[:3], [3610, 3605, 3615], "1/2-1/2"), expected)
    assert (short.moves_exact, short.first_wrong_ply, short.missing_clocks) == (False, 4, (4,))
    other = truth.compare(game, _pgn(moves, [3610, 3605, 3615, 3611], "*"), expected)
    assert other.moves_exact
    assert not other.exact()


def test_the_runs_take_the_games_in_turn_and_draw_times_in_the_ranges(
    bench: tuple[ModuleType, ModuleType],
) -> None:
    rehearsal, _ = bench
    args = argparse.Namespace(
        seed=3, games="1,2,kasparov-deep-blue-1997.pgn:6", kill=(15.0, 45.0), down=(3.0, 15.0),
        runs=7, speed=2.0, wait=5.0,
    )  # fmt: skip
    plans = rehearsal.plans(args)
    assert [p.game for p in plans] == ["1", "2", "kasparov-deep-blue-1997.pgn:6"] * 2 + ["1"]
    assert all(15 <= p.kill_after <= 45 and 3 <= p.downtime <= 15 for p in plans)
    assert len({p.seed for p in plans}) == 7
    assert rehearsal.plans(args) == plans  # the seed decides
    arguments, game = rehearsal.game_args("kasparov-deep-blue-1997.pgn:6")
    assert arguments[-2:] == ["--game", "6"]
    assert len(list(game.mainline_moves())) == 37


async def test_emulate_records_every_press_of_its_game(tmp_path: Path) -> None:
    record = tmp_path / "clock.jsonl"
    process = await asyncio.create_subprocess_exec(
        *dgtcast("emulate", "--game", "4", "--speed", "500", "--wait", "0", "--baud", "0"),
        *("--exit", "--link", str(tmp_path / "board"), "--record", str(record)),
        cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL,
    )
    async with asyncio.timeout(30):
        assert await process.wait() == 0
    events = [json.loads(line) for line in record.read_text().splitlines()]
    assert events[0]["event"] == "start"
    presses = [e for e in events if e["event"] == "press"]
    assert [p["ply"] for p in presses] == list(range(1, 22))  # Réti-Tartakower, 21 plies
    assert [p["color"] for p in presses[:2]] == ["white", "black"]
    assert all(p["shown"] == p["before"] + 30 for p in presses)  # mode 12: 5400+30 itself
