"""A two-section event through one daemon: two rounds, ``dgtcast round next``, boards by serial.

Four emulated boards on ptys, each with its own serial number, two per section; each
section has its own TRF and the pairing program's output per round. Round 1 is played,
``dgtcast round next`` is refused while results are unconfirmed, the arbiter confirms
them, the cables are plugged back in another order, and ``round next`` (the command
line, over the arbiter channel; no edit, no restart) moves both sections on: every board
finds its serial, plays round 2, and both TRFs, the PGN folder and the journal hold both
rounds. A restart with the unchanged configuration resumes in round 2.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
from contextlib import AbstractAsyncContextManager, redirect_stderr, redirect_stdout
from pathlib import Path

import chess.pgn
import pytest

from broadcast.feed.commands import ConfirmResult, NextRound
from daemon.cli import main
from daemon.pairing import Tournament
from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.config_file import BoardSpec, SectionSpec, write_config
from tests.daemon.playing import play_round, plugged
from tests.daemon.support import running_daemon, wait_for
from tests.pairing.support import starting_line, trf_text, write_pairings

FOOLS_MATE = "1. f3 e5 2. g4 Qh4# 0-1"
SCHOLARS_MATE = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0"
SERIALS = {1: "61001", 2: "61002", 11: "61011", 12: "61012"}
PLAYERS = {
    "open": ["Adams, Ann", "Brown, Ben", "Clark, Cleo", "Davis, Dan"],
    "u12": ["Evans, Eve", "Fox, Finn", "Gray, Gus", "Hill, Hana"],
}
#: The pairing program's output: round -> pairs (white, black) by starting rank.
PAIRS = {1: [(1, 2), (3, 4)], 2: [(4, 1), (2, 3)]}


def _write_event(folder: Path, glob: str) -> Path:
    sections = []
    for (section, names), first in zip(PLAYERS.items(), (1, 11), strict=True):
        players = [starting_line(r, name, 3300000) for r, name in enumerate(names, 1)]
        trf = trf_text("012 Test Congress 2026", "XXR 2", *players, ending="\n")
        (folder / f"{section}.trf").write_text(trf)
        write_pairings(folder, section, PAIRS)
        boards = [BoardSpec(n, glob, serial=SERIALS[n]) for n in (first, first + 1)]
        pairing = {"trf": f"{section}.trf", "pairings": f"{section}-r{{round}}.txt"}
        sections.append(SectionSpec(section.upper(), boards, pairing=pairing))
    return write_config(
        folder,
        [],
        name="Test Congress 2026",
        site=None,
        round_number=1,
        journal="congress.db",
        tables={"pgn_folder": {"path": "pgn"}},
        sections=sections,
        file="congress.toml",
    )


def _boards(
    folder: Path, places: dict[int, str]
) -> AbstractAsyncContextManager[dict[int, EmulatedBoard]]:
    """Emulated boards with their serial numbers, plugged in at ``folder/<place>``."""
    at = {number: folder / place for number, place in places.items()}
    return plugged(at, SERIALS, ClockSettings.from_text("3+2"))


async def _round_next(daemon: Daemon, config: Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = [
        "round",
        "next",
        "--config",
        str(config),
        "--http-port",
        str(daemon.server.port),
        *extra,
    ]

    def call() -> int:
        with redirect_stdout(out), redirect_stderr(err):
            return main(argv)

    code = await asyncio.to_thread(call)
    return code, out.getvalue(), err.getvalue()


async def test_two_rounds_of_two_sections_through_round_next(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="daemon.links.pairing")
    config = _write_event(tmp_path, str(tmp_path / "dgt-*"))
    first = {1: "dgt-a", 2: "dgt-b", 11: "dgt-c", 12: "dgt-d"}
    shuffled = {1: "dgt-d", 2: "dgt-c", 11: "dgt-a", 12: "dgt-b"}
    async with running_daemon(config) as daemon:
        state = daemon.core.board_state(11, 0.0)
        assert (state.section, state.round, state.white) == ("U12", "1.11", "Evans, Eve")
        async with _boards(tmp_path, first) as boards:
            await play_round(daemon, boards, FOOLS_MATE)
            code, _, err = await _round_next(daemon, config)
            assert code == 1
            assert "results not confirmed: board 1: 0-1 not confirmed" in err
            assert "board 12: 0-1 not confirmed" in err
            assert daemon.core.board_state(1, 0.0).round == "1.1", "refused: nothing moved"
            for number in boards:
                assert (await daemon.service.execute(ConfirmResult(board=number))).ok
            done = [r for r in caplog.records if "is complete" in r.getMessage()]
            assert {r.levelname for r in done} == {"INFO"}, "news, not a warning"
            complete = [r.getMessage() for r in done]
            assert complete == [
                "= OPEN: the round is complete (round 1): every board has a confirmed result",
                "= U12: the round is complete (round 1): every board has a confirmed result",
            ]
        # the cables come back in another order; round 2 is set while they are out
        code, out, err = await _round_next(daemon, config)
        assert code == 0, err
        assert out.splitlines() == ["OPEN: round 2 (2 boards)", "U12: round 2 (2 boards)"]
        for number in SERIALS:
            state = daemon.core.board_state(number, 0.0)
            assert state.round == f"2.{number}"
            assert (state.result, state.moves, state.status.value) == ("*", (), "offline")
        assert daemon.core.board_state(1, 0.0).white == "Davis, Dan"
        async with _boards(tmp_path, shuffled) as boards:
            for number in boards:
                await wait_for(daemon.sessions[number].online.is_set, 20, f"board {number} back")
                state = daemon.core.board_state(number, 0.0)  # at the start position
                assert (state.result, state.moves, state.status.value) == ("*", (), "online")
            await play_round(daemon, boards, SCHOLARS_MATE)
            for number, place in shuffled.items():
                device = daemon.sessions[number].supervisor.device
                assert device is not None
                assert device.path == os.path.realpath(tmp_path / place)  # noqa: ASYNC240
            for number in boards:
                assert (await daemon.service.execute(ConfirmResult(board=number))).ok
            await wait_for(lambda: _folder_holds(tmp_path / "pgn"), 20, "both rounds written")
            again = await daemon.service.execute(NextRound(section="OPEN"))
            assert not again.ok
            assert again.reason == (
                "the event is over: every section has played its last round"
                " (OPEN: 2 rounds; U12: 2 rounds)"
            )
    _check_trf(tmp_path / "open.trf", PLAYERS["open"])
    _check_trf(tmp_path / "u12.trf", PLAYERS["u12"])
    exported = tmp_path / "u12-from-journal.trf"  # round 2 of U12, from the journal alone
    argv = ["results", "export", "--config", str(config), "--section", "U12"]
    with redirect_stdout(io.StringIO()) as report:
        assert main([*argv, "--out", str(exported)]) == 0
    assert "round 2, 2 of 2 boards have a confirmed result" in report.getvalue()
    assert exported.read_bytes() == (tmp_path / "u12.trf").read_bytes()
    _check_pgn_folder(tmp_path / "pgn")
    caplog.clear()
    caplog.set_level(logging.INFO, logger="daemon.links.pairing")
    trf = (tmp_path / "open.trf").stat().st_mtime_ns
    async with running_daemon(config) as restarted:  # the same configuration, unchanged
        state = restarted.core.board_state(12, 0.0)
        assert (state.round, state.white, state.result) == ("2.12", "Fox, Finn", "1-0")
        assert restarted.pairings["U12"].handoff.results.round == 2
    said = [r.getMessage() for r in caplog.records]
    assert not [m for m in said if "written to" in m or "is complete" in m]  # nothing new
    assert (tmp_path / "open.trf").stat().st_mtime_ns == trf


def _check_trf(path: Path, names: list[str]) -> None:
    """Round 1: Black mated White on both boards; round 2: White mated Black."""
    tournament = Tournament.from_trf(path)
    codes = {}
    for rank in range(1, 5):
        player = tournament.player(rank)
        assert player.name == names[rank - 1]
        codes[rank] = [(e.opponent, e.colour, e.code) for e in player.rounds if e is not None]
    assert codes == {
        1: [(2, "w", "0"), (4, "b", "0")],
        2: [(1, "b", "1"), (3, "w", "1")],
        3: [(4, "w", "0"), (2, "b", "0")],
        4: [(3, "b", "1"), (1, "w", "1")],
    }
    assert [float(tournament.player(r).points) for r in range(1, 5)] == [0.0, 2.0, 0.0, 2.0]


def _folder_holds(folder: Path) -> bool:
    try:
        _check_pgn_folder(folder)
    except (AssertionError, OSError):
        return False
    return True


def _check_pgn_folder(folder: Path) -> None:
    for section, first in (("OPEN", 1), ("U12", 11)):
        for round_number, result in ((1, "0-1"), (2, "1-0")):
            path = folder / section / f"round-{round_number}" / f"game-{first}.pgn"
            game = chess.pgn.read_game(io.StringIO(path.read_text()))
            assert game is not None
            assert game.headers["Round"] == f"{round_number}.{first}"
            assert game.headers["Result"] == result, path
