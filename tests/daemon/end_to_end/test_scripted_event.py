"""The scripted event of issue 21: three rounds, two sections, every round checked whole.

A real daemon and four emulated e-boards with DGT clocks in mode 23 on ptys, named by
serial number and plugged back on shuffled ports every round; OPEN has a board without
an e-board, U12 an odd number of players (a pairing-allocated bye). The pairings are the
pairing program's output, one file per round. The clocks are set by ``run --set-clocks``
in round 1, by **Set clocks** over the arbiter channel in round 2 and by ``dgtcast
clocks set`` through the running daemon in round 3, and started a different way each
round (the play button; Black's lever, then play; White's lever, play, Black's lever).
Games end in mates (``game_over``) and in draws signalled with the kings
(``result_signalled``); the arbiter enters the hand-played board's result and confirms
every result. At the end of each round: every game is exact (moves and each ``[%clk]``,
in the journal and the PGN folder), every column of both TRFs is what
docs/pairing.md, "The TRF file", says, no ``clock_mismatch`` was ever raised and no alert is open.
"""

from __future__ import annotations

import asyncio
import io
from contextlib import AbstractAsyncContextManager, redirect_stderr, redirect_stdout
from decimal import Decimal
from pathlib import Path

import chess.pgn

from daemon.cli import main
from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.player import HumanPlayer
from tests.daemon.config_file import BoardSpec, SectionSpec, TomlTable, write_config
from tests.daemon.playing import next_round_after_cables_out, open_alerts, pgn_game, plugged
from tests.daemon.support import journal_moves, play_after_each_increment, running_daemon, wait_for
from tests.pairing.support import starting_line, trf_text, write_pairings
from tests.relay.support import TOKEN, Arbiter

SCHOLARS = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0"
FOOLS = "1. f3 e5 2. g4 Qh4# 0-1"
DRAW = "1. e4 e5 2. Nf3 Nc6 1/2-1/2"  # agreed, signalled with the kings
#: Each e-board's game, round by round; board 3 has no e-board: its result by hand.
GAMES = {
    1: {1: SCHOLARS, 2: FOOLS, 11: DRAW, 12: SCHOLARS},
    2: {1: FOOLS, 2: DRAW, 11: SCHOLARS, 12: FOOLS},
    3: {1: DRAW, 2: SCHOLARS, 11: FOOLS, 12: DRAW},
}
BY_HAND = {1: "1/2-1/2", 2: "1-0", 3: "0-1"}
SERIALS = {1: "72001", 2: "72002", 11: "72011", 12: "72012"}
#: The pairing program's output by section and round: (white, black) by starting rank.
PAIRS = {
    "open": {
        1: [(1, 4), (5, 2), (3, 6)],
        2: [(6, 1), (2, 3), (4, 5)],
        3: [(1, 2), (3, 4), (5, 6)],
    },
    "u12": {
        1: [(1, 2), (3, 4), (5, 0)],
        2: [(4, 1), (2, 5), (3, 0)],
        3: [(1, 3), (5, 4), (2, 0)],
    },
}
PLAYERS = {"open": 6, "u12": 5}
FIRST_BOARD = {"open": 1, "u12": 11}
#: Where each e-board is plugged in, round by round.
PLACES = {
    1: {1: "dgt-a", 2: "dgt-b", 11: "dgt-c", 12: "dgt-d"},
    2: {1: "dgt-c", 2: "dgt-d", 11: "dgt-b", 12: "dgt-a"},
    3: {1: "dgt-d", 2: "dgt-a", 11: "dgt-b", 12: "dgt-c"},
}
#: A clock in mode 23 showing its own 5 minutes; dgtcast sets it to 3 min + 2 s.
MODE_23 = ClockSettings(base_seconds=300, increment_seconds=0, mode=23)
INCREMENT = 2
CODES = {"1-0": ("1", "0"), "0-1": ("0", "1"), "1/2-1/2": ("=", "=")}
POINTS = {"1": Decimal(1), "=": Decimal("0.5"), "0": Decimal(0), "U": Decimal(1)}


def _player_line(section: str, rank: int) -> str:
    return starting_line(rank, f"{section.title()} Player {rank}", 3500000)


def _write_event(folder: Path) -> Path:
    sections = []
    for section, players in PLAYERS.items():
        lines = [_player_line(section, rank) for rank in range(1, players + 1)]
        header = (f"012 Scripted Weekend {section}", "XXR 3", "XXC white1")
        (folder / f"{section}.trf").write_text(trf_text(*header, *lines, ending="\n"))
        write_pairings(folder, section, PAIRS[section])
        first = FIRST_BOARD[section]
        boards = [
            BoardSpec(n, str(folder / "dgt-*"), serial=SERIALS[n]) for n in (first, first + 1)
        ]
        pairing: TomlTable = {
            "trf": f"{section}.trf",
            "pairings": f"{section}-r{{round}}.txt",
            "first_board": first,
        }
        sections.append(SectionSpec(section.upper(), boards, pairing=pairing))
    return write_config(
        folder,
        [],
        name="Scripted Weekend",
        site=None,
        round_number=1,
        dgt_mode=23,
        token=TOKEN,
        journal="weekend.db",
        tables={"pgn_folder": {"path": "pgn"}},
        sections=sections,
        file="weekend.toml",
    )


def _plugged(
    folder: Path, round_number: int
) -> AbstractAsyncContextManager[dict[int, EmulatedBoard]]:
    """The four e-boards at the round's places, their clocks not set; unplugged on exit."""
    at = {number: folder / place for number, place in PLACES[round_number].items()}
    return plugged(at, SERIALS, MODE_23, seed=100 * round_number)


async def _cli(daemon: Daemon, *argv: str) -> tuple[int, str]:
    """A ``dgtcast`` command against the running daemon, as typed in another terminal."""
    out = io.StringIO()
    full = [*argv, "--http-port", str(daemon.server.port)]

    def call() -> int:
        with redirect_stdout(out), redirect_stderr(out):
            return main(full)

    return await asyncio.to_thread(call), out.getvalue()


async def _set_clocks(daemon: Daemon, config: Path, round_number: int) -> None:
    """Round 1: ``--set-clocks`` did it; 2: **Set clocks**; 3: ``dgtcast clocks set``."""
    if round_number == 2:
        async with Arbiter.connected(daemon.server.port) as arbiter:
            reply = await arbiter.command({"type": "set_clocks"}, time_limit=60)
        assert reply["type"] == "ok", reply
    elif round_number == 3:
        code, text = await _cli(daemon, "clocks", "set", "--config", str(config))
        assert code == 0, text
        assert sorted(text.splitlines()) == sorted(f"board {n}: set" for n in SERIALS), text


def _start_clock(board: EmulatedBoard, round_number: int) -> None:
    """The play button; Black's lever, then play; White's lever, play, Black's lever."""
    if round_number == 2:
        board.press_lever("right")
    elif round_number == 3:
        board.press_lever("left")  # the wrong way first: Black's time runs ...
        board.start_clock()
        board.press_lever("right")  # ... until Black's lever starts White's
        return
    board.start_clock()


async def _play_round(
    daemon: Daemon, config: Path, boards: dict[int, EmulatedBoard], round_number: int
) -> dict[int, int]:
    """Set the clocks, start them, play; how many presses each clock had before the game."""
    for number in boards:
        await wait_for(daemon.sessions[number].online.is_set, 30, f"board {number} online")
    await _set_clocks(daemon, config, round_number)
    for number, board in boards.items():
        await wait_for(lambda: board.clock.display_text is not None, 30, f"clock {number} set")  # noqa: B023
        reading = board.clock.reading(board.now())
        assert (reading.left.seconds, reading.right.seconds) == (182, 182), number
        _start_clock(board, round_number)
        await wait_for(lambda: board.clock.running == "left", 15, f"White's time, {number}")  # noqa: B023

    async def play(number: int, board: EmulatedBoard) -> None:
        game = pgn_game(GAMES[round_number][number])
        result = game.headers["Result"]
        signal = None if game.end().board().is_checkmate() else result
        player = HumanPlayer(seed=number, speed=80, think=(8.0, 12.0))
        await play_after_each_increment(
            board, player.play(game, start_clock=False, result=signal), daemon=daemon
        )

    started = {n: len(b.firmware.presses) for n, b in boards.items()}  # a start by a lever
    await asyncio.gather(*(play(n, b) for n, b in boards.items()))
    wanted = {n: pgn_game(GAMES[round_number][n]).headers["Result"] for n in boards}

    def decided() -> bool:
        states = {n: daemon.core.engine.result_of(n) for n in boards}
        return all(s is not None and s.result == wanted[n] for n, s in states.items())

    await wait_for(decided, 30, f"round {round_number}: every e-board's result")
    return started


async def _confirm_every_result(daemon: Daemon, round_number: int) -> None:
    async with Arbiter.connected(daemon.server.port) as arbiter:
        reply = await arbiter.command(
            {"type": "set_result", "board": 3, "result": BY_HAND[round_number]}
        )
        assert reply["type"] == "ok", reply
        for number in (*SERIALS, 3):
            reply = await arbiter.command({"type": "confirm_result", "board": number})
            assert reply["type"] == "ok", (number, reply)
    await wait_for(lambda: not open_alerts(daemon), 15, f"round {round_number}: no open alert")
    async with Arbiter.connected(daemon.server.port) as fresh:  # as a page opened now sees it
        assert fresh.snapshot["alerts"] == [], round_number


async def _check_games(
    folder: Path, boards: dict[int, EmulatedBoard], round_number: int, started: dict[int, int]
) -> None:
    """Moves and every ``[%clk]`` (the clock after its press, dgtcast's 2 s included), in
    the journal and in the PGN folder."""
    for number, board in boards.items():
        game = pgn_game(GAMES[round_number][number])
        moves = [m.uci() for m in game.mainline_moves()]
        clocks = [seconds + INCREMENT for _, seconds in board.firmware.presses[started[number] :]]
        line = journal_moves(folder / "weekend.db", number)
        assert [m["uci"] for m in line] == moves, (round_number, number)
        assert [m["clock"] for m in line] == clocks, (round_number, number)
        section = "OPEN" if number < FIRST_BOARD["u12"] else "U12"
        pgn = folder / "pgn" / section / f"round-{round_number}" / f"game-{number}.pgn"
        result = game.headers["Result"]
        # the folder is written in a worker thread: the confirmed result shortly after
        await wait_for(lambda: f'[Result "{result}"]' in pgn.read_text(), 15, str(pgn))  # noqa: B023
        written = chess.pgn.read_game(io.StringIO(pgn.read_text()))
        assert written is not None
        nodes = list(written.mainline())
        assert [n.move.uci() for n in nodes] == moves, pgn
        assert [n.clock() for n in nodes] == clocks, pgn
        assert written.headers["Round"] == f"{round_number}.{number}", pgn


def _results(section: str, round_number: int) -> dict[int, tuple[int, str, str]]:
    """Each player's round: (opponent, colour, code), as the TRF must hold it."""
    first = FIRST_BOARD[section]
    played: dict[int, tuple[int, str, str]] = {}
    for board, (white, black) in enumerate(PAIRS[section][round_number], start=first):
        if black == 0:
            played[white] = (0, "-", "U")
            continue
        if board in SERIALS:
            codes = CODES[pgn_game(GAMES[round_number][board]).headers["Result"]]
        else:
            codes = CODES[BY_HAND[round_number]]
        played[white] = (black, "w", codes[0])
        played[black] = (white, "b", codes[1])
    return played


def _check_trf(folder: Path, section: str, rounds: int) -> None:
    """Every column of every ``001`` line, docs/pairing.md, "The TRF file",."""
    lines = [
        line for line in (folder / f"{section}.trf").read_text().splitlines()
        if line.startswith("001")
    ]  # fmt: skip
    assert len(lines) == PLAYERS[section]
    for rank, line in enumerate(lines, start=1):
        original = _player_line(section, rank)
        entries = [_results(section, r)[rank] for r in range(1, rounds + 1)]
        points = sum((POINTS[code] for _, _, code in entries), Decimal(0))
        assert line[:80] == original[:80], line  # rank, sex, name, rating, federation, id, birth
        assert line[80:84] == f"{points:>4.1f}", (line, points)  # cols 81-84
        assert line[84:89] == original[84:89], line  # the rank, 86-89: the pairing program's
        assert len(line) == 89 + 10 * rounds, line
        for number, (opponent, colour, code) in enumerate(entries, start=1):
            at = 91 + 10 * (number - 1)  # round r: 92+10(r-1), 0-based
            assert line[at - 2 : at] == "  ", (line, number)
            paired = "0000" if opponent == 0 else f"{opponent:>4}"  # 0000: the bye
            assert line[at : at + 8] == f"{paired} {colour} {code}", (line, number)


async def test_the_scripted_event_ends_every_round_exact_and_with_no_open_alert(
    tmp_path: Path,
) -> None:
    config = _write_event(tmp_path)
    async with running_daemon(config, set_clocks=True) as daemon:
        for round_number in GAMES:
            async with _plugged(tmp_path, round_number) as boards:
                started = await _play_round(daemon, config, boards, round_number)
                await _confirm_every_result(daemon, round_number)
                await _check_games(tmp_path, boards, round_number, started)
                for section in PLAYERS:
                    _check_trf(tmp_path, section, round_number)
            if round_number < 3:
                await next_round_after_cables_out(daemon, round_number, SERIALS, within=30)
        alerts = daemon.core.engine.alerts
    mismatches = [a.action for a in alerts if a.kind == "clock_mismatch"]
    assert not mismatches, mismatches
    expected = {"board_offline", "game_over", "result_signalled"}
    assert {a.kind.value for a in alerts} <= expected, [(a.kind, a.action) for a in alerts]
