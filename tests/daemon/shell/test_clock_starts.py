"""A round starts however a person starts the clocks (issue 21, item 3).

Real daemon, an emulated board and its DGT clock in mode 23 on a pty: the clock is set
(``run --set-clocks``, or the arbiter's "Set clocks"), then started the ways people do:
the play button; Black's lever and then play; White's lever pressed first, so play starts
Black's time, and Black's lever then starts White's (the press that once ended the
daemon with "move numbers start at 1"); each of these also before the clock is set (as soon
as the board is online, with ``--set-clocks`` or before "Set clocks"), or as "Set
clocks" reaches the clock (before or after the daemon reads its acknowledgement).
Each time the daemon goes on, the game is recorded with every increment dgtcast added,
and no ``clock_mismatch`` (nor ``internal_error``) alert is raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from broadcast.feed.commands import SetClocks
from drivers.dgt.commands import ClockSetAndRun
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import HumanPlayer
from tests.daemon.conftest import Serve
from tests.daemon.support import (
    BoardSpec,
    journal_moves,
    play_after_each_increment,
    read_game,
    wait_for,
)

#: A DGT clock in mode 23 showing its own 5 min; dgtcast sets it to 10 min + 5 s.
MODE_23 = ClockSettings(base_seconds=300, increment_seconds=0, mode=23)


def _start_with_play(board: EmulatedBoard) -> None:
    board.start_clock()


def _black_lever_then_play(board: EmulatedBoard) -> None:
    board.press_lever("right")  # paused: the lever only moves (White's side stays up)
    board.start_clock()


def _white_lever_then_play_then_black_lever(board: EmulatedBoard) -> None:
    board.press_lever("left")  # Black's side up now
    board.start_clock()  # Black's time runs ...
    board.press_lever("right")  # ... until Black's lever starts White's


@dataclass(frozen=True, slots=True)
class Way:
    """How the round starts."""

    start: Callable[[EmulatedBoard], None]
    set_at_start: bool  # run --set-clocks, else "Set clocks" on the arbiter page
    white_side: str | None = None  # clock_white_side in the configuration
    while_setting: bool = False  # started as soon as the board is online, before the set
    on_arrival: bool = False  # started once SETNRUN is at the clock, its ack on the way


WAYS = {
    "play": Way(_start_with_play, set_at_start=True),
    "black lever, play": Way(_black_lever_then_play, set_at_start=False),
    "white lever, play, black lever": Way(
        _white_lever_then_play_then_black_lever, set_at_start=True
    ),
    "the same, White's side configured": Way(
        _white_lever_then_play_then_black_lever, set_at_start=True, white_side="left"
    ),
    "the same after Set clocks": Way(
        _white_lever_then_play_then_black_lever, set_at_start=False, white_side="left"
    ),
    "play while the clock is set": Way(_start_with_play, set_at_start=True, while_setting=True),
    "black lever, play while the clock is set": Way(
        _black_lever_then_play, set_at_start=True, while_setting=True
    ),
    "play before Set clocks is answered": Way(
        _start_with_play, set_at_start=False, while_setting=True
    ),
    "white lever, play, black lever as Set clocks reaches the clock": Way(
        _white_lever_then_play_then_black_lever, set_at_start=False, on_arrival=True
    ),
}


def _set_received(board: EmulatedBoard) -> bool:
    return any(isinstance(c, ClockSetAndRun) for c in board.firmware.commands)


def _shown(board: EmulatedBoard) -> tuple[int, int]:
    reading = board.clock.reading(board.now())
    return reading.left.seconds, reading.right.seconds


@pytest.mark.parametrize("name", list(WAYS))
async def test_a_round_starts_however_the_clock_is_started(
    name: str, tmp_path: Path, games_dir: Path, serve: Serve
) -> None:
    way = WAYS[name]
    game = read_game(games_dir / "molinari-bordais-1979.pgn")  # 10 plies, mate
    async with EmulatedBoard(clock=MODE_23, seed=len(name)) as board:
        spec = BoardSpec(1, str(board.path), clock_white_side=way.white_side)
        async with serve(
            spec, time_control="600+5", dgt_mode=23, set_clocks=way.set_at_start
        ) as daemon:
            if way.while_setting:
                way.start(board)
            if not way.set_at_start:
                setting = asyncio.ensure_future(daemon.service.execute(SetClocks()))
                if way.on_arrival:  # before or after the daemon reads the ack: either way
                    await wait_for(lambda: _set_received(board), 15, "SETNRUN at the clock")
                    way.start(board)
                reply = await setting
                assert reply.ok, reply
            await wait_for(lambda: board.clock.display_text is not None, 15, "clock set")
            if board.clock.running is None:  # set (paused) after it was started: again
                way.start(board)
            await wait_for(lambda: board.clock.running == "left", 5, "White's time runs")
            player = HumanPlayer(seed=7, speed=100, think=(8.0, 12.0))
            await play_after_each_increment(
                board, player.play(game, start_clock=False), daemon=daemon
            )
            await wait_for(lambda: daemon.core.engine.result_of(1) is not None, 15, "mate")
            alerts = [a for a in daemon.core.engine.alerts if a.kind == "clock_mismatch"]
            alerts += [a for a in daemon.hub.open_alerts() if a.kind == "internal_error"]
    assert not alerts, [a.action for a in alerts]
    line = journal_moves(tmp_path / "journal.db", 1)
    assert [m["uci"] for m in line] == [m.uci() for m in game.mainline_moves()]
    # Every press gained the increment dgtcast added (the reading before it may be a
    # second old), and nothing more: never twice.
    assert all(4 <= m["clock"] - m["clock_before"] <= 7 for m in line), line
