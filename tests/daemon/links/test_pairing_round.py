"""A round from the pairing program's files to the TRF, through the real daemon.

A tournament TRF and a pairings file in; two e-boards (emulated, over ptys) and the other
boards entered by hand on the arbiter channel; every confirmed result lands in the round's
TRF columns with the right points and parses back to the same results.
"""

from __future__ import annotations

from pathlib import Path

from broadcast.feed.commands import ConfirmResult, SetResult
from daemon.pairing import Tournament, read_pairings
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.config_file import BoardSpec, example_round
from tests.daemon.support import read_game, running_daemon, wait_for

CODES = {("1", "0"): "1-0", ("0", "1"): "0-1", ("=", "="): "1/2-1/2", ("+", "-"): "+-"}
CODES |= {("-", "+"): "-+", ("-", "-"): "--"}


def _config(folder: Path, one: Path, two: Path) -> Path:
    return example_round(folder, [BoardSpec(1, str(one)), BoardSpec(2, str(two))])


async def test_results_reach_the_trf(tmp_path: Path, games_dir: Path) -> None:
    mate = read_game(games_dir / "molinari-bordais-1979.pgn")  # 0-1 by mate
    clock = ClockSettings.from_text("3+2")
    async with (
        EmulatedBoard(clock=clock, seed=11) as one,
        EmulatedBoard(clock=clock, seed=12) as two,
    ):
        config = _config(tmp_path, one.path, two.path)
        async with running_daemon(config) as daemon:
            assert daemon.config.board(1).white, "players come from the TRF"
            for number in (1, 2):
                await wait_for(daemon.sessions[number].online.is_set, 10, "e-boards up")
            await one.play(mate, speed=25)
            await two.play(mate, speed=25)
            engine = daemon.core.engine

            def mated(board: int) -> bool:
                state = engine.result_of(board)
                return state is not None and state.result == "0-1"

            await wait_for(lambda: mated(1) and mated(2), 10, "both games end in mate")
            manual = {3: "1/2-1/2", 4: "+-", 5: "1-0"}
            for board, result in manual.items():
                assert (await daemon.service.execute(SetResult(board=board, result=result))).ok
            for board in range(1, 6):
                reply = await daemon.service.execute(ConfirmResult(board=board))
                assert reply.ok, reply.reason
            assert daemon.pairing is not None
            assert daemon.pairing.handoff.is_round_complete()
    expected = {1: "0-1", 2: "0-1", **manual}
    after = Tournament.from_trf(tmp_path / "tournament-example.trf")
    pairings = read_pairings(tmp_path / "round4-pairings.txt", tournament=after)
    for pairing in pairings:
        if pairing.black is None:
            continue
        white = after.player(pairing.white).entry(4)
        black = after.player(pairing.black).entry(4)
        assert white is not None
        assert black is not None
        assert (white.opponent, black.opponent) == (pairing.black, pairing.white)
        assert (white.colour, black.colour) == ("w", "b")
        assert CODES[(white.result, black.result)] == expected[pairing.board]
    for player in after.players.values():
        entries = [player.entry(r) for r in range(1, 5)]
        assert player.points == after.scoring.total(entries), player.name
    assert after.player(11).entry(4) is not None
