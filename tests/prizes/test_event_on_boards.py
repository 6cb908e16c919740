"""A two-section, three-round event played on emulated e-boards, ending with its prizes.

Four emulated boards (two per section, found by serial), three rounds moved on by the
arbiter channel's ``next_round``; the games are mates played on the boards, and one
draw an arbiter enters. When the last results are confirmed, ``dgtcast prizes`` prints
the prize list worked out by hand below, and the daemon's ``/prizes.json`` shows the
same money.
"""

from __future__ import annotations

import asyncio
import io
from contextlib import AbstractAsyncContextManager, redirect_stderr, redirect_stdout
from pathlib import Path

import httpx

from broadcast.feed.commands import ConfirmResult, NextRound, SetResult
from daemon.cli import main
from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.config_file import BoardSpec, SectionSpec, write_config
from tests.daemon.playing import pgn_game, plugged
from tests.daemon.support import running_daemon, wait_for
from tests.pairing.support import player_line, trf_text, write_pairings

FOOLS_MATE = "1. f3 e5 2. g4 Qh4# 0-1"
SCHOLARS_MATE = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0"
SERIALS = {1: "62001", 2: "62002", 11: "62011", 12: "62012"}
#: Round → (white, black) by starting rank, board order: everyone meets everyone once.
PAIRS = {1: [(1, 2), (3, 4)], 2: [(4, 1), (2, 3)], 3: [(1, 3), (4, 2)]}
#: Round → the game each board plays (None: the arbiter enters a draw).
GAMES: dict[int, dict[int, str | None]] = {
    1: {1: FOOLS_MATE, 2: None, 11: FOOLS_MATE, 12: FOOLS_MATE},
    2: {n: SCHOLARS_MATE for n in SERIALS},
    3: {n: FOOLS_MATE for n in SERIALS},
}

OPEN = [
    player_line(1, "Adams, Ann", "0.0", rating=1900, sex="w", birth="1990/01/01"),
    player_line(2, "Brown, Ben", "0.0", rating=1800, birth="1991/01/01"),
    player_line(3, "Clark, Cleo", "0.0", rating=1550, sex="w", birth="1992/01/01"),
    player_line(4, "Davis, Dan", "0.0", rating=1500, birth="1993/01/01"),
]
U12 = [
    player_line(1, "Evans, Eve", "0.0", rating=1210, sex="w", birth="2014/05/01"),
    player_line(2, "Fox, Finn", "0.0", rating=1190, birth="2014/02/01"),
    player_line(3, "Gray, Gia", "0.0", rating=1150, sex="w", birth="2015/03/01"),
    player_line(4, "Hill, Hana", "0.0", rating=1100, sex="w", birth="2016/07/01"),
]

PRIZES = {
    "Open": """
[[sections.prizes.groups]]
name = "Open"
places = [{ amount = 100, trophy = "trophy" }, { amount = 60, trophy = "trophy" }, 40]
[[sections.prizes.groups]]
name = "U1600"
rating = "U1600"
places = [70]
""",
    "U12": """
[[sections.prizes.groups]]
name = "Under 12"
born_from = 2014-01-01
places = [{ amount = 50, trophy = "trophy" }, "medal"]
[[sections.prizes.groups]]
name = "Girls"
girls = true
places = ["trophy"]
""",
}

# Open: R1 2 beats 1, 3-4 drawn (by the arbiter); R2 4 beats 1, 2 beats 3; R3 3 beats 1,
# 2 beats 4. Scores: Brown 3; Clark and Davis 1.5 (progressive ½, ½, 1½: PS 2.5 and
# ½, 1½, 1½: PS 3.5); Adams 0.
# Conditional lists: Open 1 Brown $100; 2-3 Davis, Clark (60 + 40) / 2 = $50 each;
# U1600 (Clark 1550, Davis 1500) 1-2 shared: $35 each.
# Davis is met first in the Open's tie (PS 3.5): $50 > $35, keeps the Open, leaves U1600.
# U1600 is Clark's alone: $70 > $50: Clark keeps U1600, leaves the Open, where Davis is
# now 2nd alone ($60) and Adams (0) moves up to 3rd ($40). Davis left U1600 and Clark,
# on his score, now gets $70 there, more than Davis's $60: pooled, (60 + 70) / 2 = $65.
# Trophies: Open 1st Brown (clear); 2nd Davis over Clark by PS 3.5.
# U12: R1 2 beats 1, 4 beats 3; R2 4 beats 1, 2 beats 3; R3 3 beats 1, 2 beats 4.
# Scores: Fox 3, Hill 2, Gray 1, Evans 0. Under 12: Fox $50 + trophy, Hill the medal;
# Girls (Evans, Gray, Hill): Hill.
EXPECTED = """\
Prize Congress 2026 — Open: prizes after round 3

Open (4 eligible)
      1  Brown, Ben                         3     $100.00  Open
      2  Davis, Dan                       1.5      $65.00  Open, pooled with Clark, Cleo
      3  Adams, Ann                         0      $40.00  Open
      1  Brown, Ben                         3  trophy
      2  Davis, Dan                       1.5  trophy (countback PS 3.5)

U1600 (2 eligible)
      1  Clark, Cleo                      1.5      $65.00  U1600, pooled with Davis, Dan

Total paid: $270.00 to 4 players
  Davis, Dan: kept Open ($50.00), left U1600
  Clark, Cleo: kept U1600 ($70.00), left Open

Prize Congress 2026 — U12: prizes after round 3

Under 12 (4 eligible)
      1  Fox, Finn                          3      $50.00  Under 12
      1  Fox, Finn                          3  trophy
      2  Hill, Hana                         2  medal

Girls (3 eligible)
      1  Hill, Hana                         2  trophy

Total paid: $50.00 to 1 player
"""


def _write_event(folder: Path) -> Path:
    sections = []
    for name, first, players in (("Open", 1, OPEN), ("U12", 11, U12)):
        low = name.lower()
        (folder / f"{low}.trf").write_text(trf_text(f"012 {name}", "XXR 3", *players))
        write_pairings(folder, low, PAIRS)
        boards = [BoardSpec(n, f"{folder}/dgt-*", serial=SERIALS[n]) for n in (first, first + 1)]
        pairing = {"trf": f"{low}.trf", "pairings": f"{low}-r{{round}}.txt"}
        sections.append(SectionSpec(name, boards, pairing=pairing, extra=PRIZES[name]))
    return write_config(
        folder,
        [],
        name="Prize Congress 2026",
        site=None,
        round_number=1,
        default_time=None,
        journal="congress.db",
        sections=sections,
        file="congress.toml",
    )


def _boards(folder: Path) -> AbstractAsyncContextManager[dict[int, EmulatedBoard]]:
    at = {number: folder / f"dgt-{number}" for number in SERIALS}
    return plugged(at, SERIALS, ClockSettings.from_text("3+2"))


async def _play_round(daemon: Daemon, boards: dict[int, EmulatedBoard], number: int) -> None:
    games = GAMES[number]
    for board in boards:
        await wait_for(daemon.sessions[board].online.is_set, 20, f"board {board} online")

        def in_round(b: int = board) -> bool:
            return daemon.core.board_state(b, 0.0).round == f"{number}.{b}"

        await wait_for(in_round, 20, f"board {board} in round {number}")
    played = {b: text for b, text in games.items() if text is not None}
    await asyncio.gather(*(boards[b].play(pgn_game(text), speed=20) for b, text in played.items()))
    for board, text in games.items():
        if text is None:
            assert (await daemon.service.execute(SetResult(board=board, result="1/2-1/2"))).ok
            continue
        result = pgn_game(text).headers["Result"]

        def decided(b: int = board, r: str = result) -> bool:
            state = daemon.core.engine.result_of(b)
            return state is not None and state.result == r

        await wait_for(decided, 20, f"board {board} ends {result}")
    for board in games:
        assert (await daemon.service.execute(ConfirmResult(board=board))).ok


async def _prize_list(config: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()

    def call() -> int:
        with redirect_stdout(out), redirect_stderr(err):
            return main(["prizes", "--config", str(config)])

    code = await asyncio.to_thread(call)
    return code, out.getvalue(), err.getvalue()


async def test_three_rounds_on_the_boards_end_with_the_prize_list(tmp_path: Path) -> None:
    config = _write_event(tmp_path)
    async with running_daemon(config) as daemon, _boards(tmp_path) as boards:
        for number in (1, 2, 3):
            if number > 1:
                moved = await daemon.service.execute(NextRound(section=""))
                assert moved.ok, moved.reason
                for board in boards.values():  # the arbiter sets each clock up anew
                    board.reset_clock()
            await _play_round(daemon, boards, number)
        code, out, err = await _prize_list(config)
        assert (code, err) == (0, "")
        assert out == EXPECTED
        async with httpx.AsyncClient(base_url=daemon.address) as client:
            shown = (await client.get("/prizes.json")).json()["sections"]
    cash = {
        (race["section"], award["name"]): award["amount"]
        for race in shown
        for award in race["cash"]
    }
    assert cash == {
        ("Open", "Brown, Ben"): 100.0,
        ("Open", "Davis, Dan"): 65.0,
        ("Open", "Clark, Cleo"): 65.0,
        ("Open", "Adams, Ann"): 40.0,
        ("U12", "Fox, Finn"): 50.0,
    }
