"""The engine's shell against the real Stockfish (Debian's /usr/games/stockfish)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import AsyncIterator

import chess
import pytest

from base.backoff import BackoffPolicy
from broadcast.analysis.engine import DEBIAN_STOCKFISH, Analyst, AnalystSettings, engine_path
from broadcast.feed.delay import PublicDelay
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState, BoardStatus, Evaluation
from tests.waiting import wait_until

#: A small bound: the tests check what is said, not how well the engine plays.
QUICK = AnalystSettings(
    time=None, depth=8, backoff=BackoffPolicy(initial=0.05, maximum=0.5), answer_timeout=60
)
MATE_IN_ONE = "6k1/5ppp/8/8/8/8/8/K2R4 w - - 0 1"
BLACK_MATES = "k2r4/8/8/8/8/8/5PPP/6K1 b - - 0 1"


def stockfish_or_fail() -> None:
    if engine_path(None) != DEBIAN_STOCKFISH and not os.access(engine_path(None), os.X_OK):
        pytest.fail("stockfish is not installed (make system)")


def at(board: int, fen: str = chess.STARTING_FEN) -> BoardState:
    return BoardState(board=board, fen=fen)


class Recorder:
    """An analyst on a hub, and every evaluation it handed out."""

    def __init__(self, hub: Hub, settings: AnalystSettings = QUICK) -> None:
        self.told: list[Evaluation] = []
        self.analyst = Analyst(hub, settings, [self.told.append])

    def latest(self, board: int) -> Evaluation | None:
        return next((e for e in reversed(self.told) if e.board == board), None)


@pytest.fixture
async def running() -> AsyncIterator[tuple[Hub, Recorder]]:
    stockfish_or_fail()
    hub = Hub()
    recorder = Recorder(hub)
    task = asyncio.create_task(recorder.analyst.run())
    try:
        yield hub, recorder
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def test_the_default_engine_is_found_on_path_or_where_debian_puts_it() -> None:
    stockfish_or_fail()
    assert os.access(engine_path(None), os.X_OK)
    assert engine_path("/opt/engines/sf") == "/opt/engines/sf"
    assert engine_path("no-such-engine-here") == "no-such-engine-here"


async def test_positions_are_evaluated_from_whites_point_of_view(
    running: tuple[Hub, Recorder],
) -> None:
    hub, recorder = running
    hub.publish_board(at(1))
    hub.publish_board(at(2, MATE_IN_ONE))
    hub.publish_board(at(3, BLACK_MATES))
    await wait_until(lambda: all(recorder.latest(b) for b in (1, 2, 3)), 60, "three evaluations")
    start, mate, black = (recorder.latest(b) for b in (1, 2, 3))
    assert start is not None
    assert mate is not None
    assert black is not None
    assert start.cp is not None
    assert abs(start.cp) < 150
    assert start.mate is None
    assert start.depth >= 8
    position = chess.Board()
    for san in start.line:  # the line is legal SAN from the position
        position.push_san(san)
    assert len(start.line) >= 2
    assert (mate.mate, mate.cp, mate.line[:1]) == (1, None, ("Rd8#",))
    assert (black.mate, black.line[:1]) == (-1, ("Rd1#",))


async def test_each_position_is_analysed_once_for_every_board(
    running: tuple[Hub, Recorder],
) -> None:
    hub, recorder = running
    for board in (1, 2, 3):
        hub.publish_board(at(board))
    await wait_until(lambda: all(recorder.latest(b) for b in (1, 2, 3)), 60, "three boards")
    assert recorder.analyst.plan.analysed == 1
    assert len({recorder.latest(b).cp for b in (1, 2, 3)}) == 1  # type: ignore[union-attr]


async def test_a_board_without_an_e_board_or_a_move_gets_no_evaluation(
    running: tuple[Hub, Recorder],
) -> None:
    hub, recorder = running
    hub.publish_board(BoardState(board=1, fen=chess.STARTING_FEN, status=BoardStatus.MANUAL))
    hub.publish_board(at(2))  # an e-board before the first move: evaluated
    await wait_until(lambda: recorder.latest(2) is not None, 60, "board 2's evaluation")
    assert recorder.latest(1) is None  # not even from the start position's analysis
    assert recorder.analyst.plan.waiting == 0


async def test_a_finished_game_needs_no_engine(running: tuple[Hub, Recorder]) -> None:
    hub, recorder = running
    hub.publish_board(at(1, "7k/5QQ1/8/8/8/8/8/K7 b - - 0 1"))  # Black is mated
    await wait_until(lambda: recorder.latest(1) is not None, 60, "an evaluation")
    assert recorder.latest(1) == Evaluation(board=1, fen="7k/5QQ1/8/8/8/8/8/K7 b - - 0 1", mate=0)


async def test_a_killed_engine_turns_the_bar_off_then_comes_back(
    running: tuple[Hub, Recorder], caplog: pytest.LogCaptureFixture
) -> None:
    hub, recorder = running
    analyst = recorder.analyst
    hub.publish_board(at(1))
    await wait_until(lambda: (e := recorder.latest(1)) is not None and e.has_score, 60, "eval")
    killed = analyst.engine.pid
    assert killed is not None
    os.kill(killed, signal.SIGKILL)
    await wait_until(lambda: recorder.latest(1) == Evaluation(board=1), 30, "no evaluation")
    await wait_until(lambda: analyst.running.is_set() and analyst.engine.pid != killed, 30, "back")
    await wait_until(lambda: (e := recorder.latest(1)) is not None and e.has_score, 60, "again")
    hub.publish_board(at(1, MATE_IN_ONE))  # and it analyses new positions again
    await wait_until(lambda: (e := recorder.latest(1)) is not None and e.mate == 1, 60, "mate")
    said = [r.getMessage() for r in caplog.records if r.name == "broadcast.analysis.engine"]
    assert sum("ended unexpectedly" in line for line in said) == 1
    assert any("runs again" in line for line in said)


async def test_a_missing_engine_is_said_once_and_nothing_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    hub = Hub()
    hub.publish_board(at(1))
    settings = AnalystSettings(
        engine="/nonexistent/stockfish", backoff=BackoffPolicy(initial=0.01, maximum=0.02)
    )
    recorder = Recorder(hub, settings)
    task = asyncio.create_task(recorder.analyst.run())
    try:
        await wait_until(lambda: recorder.told.count(Evaluation(board=1)) >= 3, 30, "retries")
        assert not task.done()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    said = [r for r in caplog.records if r.name == "broadcast.analysis.engine"]
    assert len(said) == 1
    assert said[0].levelno == logging.WARNING
    assert "/nonexistent/stockfish is not installed" in said[0].getMessage()
    assert not any(e.has_score for e in recorder.told)


async def test_the_engine_sees_a_position_only_once_it_is_public() -> None:
    stockfish_or_fail()
    live = Hub()
    now = [1000.0]
    start = BoardState(board=1, fen=chess.STARTING_FEN)
    live.publish_board(start)
    async with PublicDelay(live, 30.0, clock=lambda: now[0]) as delayed:
        now[0] += 30
        delayed.release_due()
        recorder = Recorder(delayed.public)
        task = asyncio.create_task(recorder.analyst.run())
        try:
            await wait_until(lambda: recorder.latest(1) is not None, 60, "the start position")
            after_e4 = chess.Board()
            after_e4.push_san("e4")
            live.publish_board(BoardState(board=1, fen=after_e4.fen()))  # live, not public
            hub_second = BoardState(board=2, fen=MATE_IN_ONE)
            live.publish_board(hub_second)
            now[0] += 29
            delayed.release_due()
            assert delayed.public.state(1) == start
            # Board 2's own position, live as long, is not public either: nothing to do.
            assert recorder.analyst.plan.waiting == 0
            assert all(e.fen == chess.STARTING_FEN for e in recorder.told)
            now[0] += 1
            delayed.release_due()
            await wait_until(lambda: recorder.latest(2) is not None, 60, "board 2")
            await wait_until(
                lambda: (e := recorder.latest(1)) is not None and e.fen == after_e4.fen(), 60, "e4"
            )
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def test_a_position_no_game_reaches_gets_no_score_and_no_crash(
    running: tuple[Hub, Recorder],
) -> None:
    hub, recorder = running
    hub.publish_board(at(1, "4k3/8/8/8/8/8/8/4K2R b - - 0 1"))  # fine: a position
    hub.publish_board(at(2, "8/8/8/8/8/8/8/4K3 w - - 0 1"))  # no black king
    hub.publish_board(at(3, "not a fen"))
    await wait_until(lambda: all(recorder.latest(b) for b in (1, 2, 3)), 60, "three answers")
    assert recorder.latest(1).has_score  # type: ignore[union-attr]
    assert not recorder.latest(2).has_score  # type: ignore[union-attr]
    assert not recorder.latest(3).has_score  # type: ignore[union-attr]
    assert recorder.analyst.running.is_set()
