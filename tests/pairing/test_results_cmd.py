"""``dgtcast results export``: the round's TRF from the journal's result decisions."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from daemon.arbiter.decisions import AlertSettings
from daemon.arbiter.engine import AlertEngine
from daemon.commands import results as results_cmd
from daemon.config.model import load_config
from daemon.journal.store import Journal
from daemon.pairing.handoff import ResultHandoff
from daemon.pairing.pairings import read_pairings
from daemon.pairing.trf import Tournament
from tests.pairing.support import EXAMPLE_TRF, block, copy_example
from tests.serving import dgtcast

T0 = 1_777_078_800.0
CONFIG = """
[event]
name = "Riverside Autumn Open 2026"
round = 4
round_start = "2026-04-25T11:00:00+10:00"
time_control = "5400+30"
default_time = "30m"

[storage]
path = "journal.db"
{pairing}
[[boards]]
number = 1
port = "/dev/ttyACM0"

[[boards]]
number = 2
port = "/dev/ttyACM1"

[[boards]]
number = 3

[[boards]]
number = 4

[[boards]]
number = 5
"""
PAIRING = '\n[pairing]\ntrf = "tournament.trf"\npairings = "round4.txt"\n'


@pytest.fixture
def config(tmp_path: Path) -> Path:
    copy_example(tmp_path)
    path = tmp_path / "round4.toml"
    path.write_text(CONFIG.format(pairing=PAIRING))
    return path


def journal_results(config: Path, commands: list[tuple[int, str | None]]) -> None:
    """Arbiter commands through the real alert engine, its decisions journalled.

    ``(board, result)`` sets a result; ``(board, None)`` confirms the board's result.
    """
    settings = AlertSettings.from_config(load_config(config, env={}))
    engine = AlertEngine(settings)
    with Journal(config.parent / "journal.db") as journal:
        for n, (board, result) in enumerate(commands):
            if result is None:
                engine.confirm_result(board, T0 + n)
            else:
                engine.set_result(board, result, T0 + n)
            journal.append_many(engine.decisions_made())


def export(config: Path, *extra: str) -> int:
    parser = argparse.ArgumentParser()
    results_cmd.add_arguments(parser)
    return results_cmd.run(parser.parse_args(["export", "--config", str(config), *extra]))


def round_4(path: Path, rank: int) -> str:
    return block(Tournament.from_trf(path).to_trf().split("\r\n")[16 + rank], 4)


def test_confirmed_results_are_written_and_the_round_is_not_complete_yet(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trf = config.parent / "tournament.trf"
    journal_results(
        config,
        [
            (1, "1-0"),
            (1, None),
            (2, "0-1"),
            (2, None),
            (2, "1/2-1/2"),  # an arbiter changed it: provisional again
            (3, "+-"),
            (3, None),
            (5, "--"),
            (5, None),
            (5, "*"),  # and cleared this one
            (4, "0-1"),  # proposed, never confirmed
        ],
    )
    assert export(config) == 0
    out = capsys.readouterr()
    assert out.out.splitlines() == [
        f"{trf}: round 4, 2 of 5 boards have a confirmed result",
        "round 4 is not complete: waiting for boards 2, 4, 5",
        "note: XXZ 5 names players absent from the next round to pair; check it before"
        " pairing the next round",
    ]
    assert out.err == ""
    assert [round_4(trf, rank) for rank in (2, 1, 6, 3, 11, 9)] == [
        "   1 w 1",
        "   2 b 0",
        "   3 w +",
        "   6 b -",
        "0000 - U",
        "0000 - H",
    ]
    assert [round_4(trf, rank) for rank in (13, 4, 7, 12, 10, 8)] == [" " * 8] * 6


def test_a_complete_round_and_what_the_daemon_wrote_before(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trf = config.parent / "tournament.trf"
    tournament = Tournament.from_trf(trf)
    pairings = read_pairings(config.parent / "round4.txt", tournament=tournament)
    daemon = ResultHandoff(tournament, 4, pairings, trf)  # the daemon, live
    daemon.receive_result(1, "1-0", source="result_signalled", at=T0, moves_played=1)
    daemon.receive_result(2, "0-1", source="arbiter", at=T0)
    commands: list[tuple[int, str | None]] = []
    for board, result in [(1, "1-0"), (2, "1/2-1/2"), (3, "0-1"), (4, "-+"), (5, "1-0")]:
        commands += [(board, result), (board, None)]
    journal_results(config, commands)
    assert export(config) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        f"{trf}: round 4, 5 of 5 boards have a confirmed result",
        "round 4 is complete",
    ]
    assert [round_4(trf, rank) for rank in (2, 1, 13, 4, 12)] == [
        "   1 w W",  # the daemon saw less than one move: kept
        "   2 b L",
        "   4 w =",  # corrected after the daemon wrote 0-1
        "  13 b =",
        "   7 b +",
    ]
    assert ResultHandoff(Tournament.from_trf(trf), 4, pairings, trf).is_round_complete()


def test_export_to_standard_output_in_a_process(config: Path) -> None:
    journal_results(config, [(3, "1/2-1/2"), (3, None)])
    before = (config.parent / "tournament.trf").read_bytes()
    done = subprocess.run(
        dgtcast("results", "export", "--config", str(config), "--out", "-"),
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0
    exported = Tournament.from_bytes(done.stdout, source="stdout")
    assert block(exported.to_trf().split("\r\n")[22], 4) == "   3 w ="
    assert done.stderr.decode().splitlines()[:2] == [
        "standard output: round 4, 1 of 5 boards have a confirmed result",
        "round 4 is not complete: waiting for boards 1, 2, 4, 5",
    ]
    assert (config.parent / "tournament.trf").read_bytes() == before


def test_export_to_another_file(config: Path) -> None:
    journal_results(config, [(1, "0-1"), (1, None)])
    out = config.parent / "after-round-4.trf"
    assert export(config, "--out", str(out)) == 0
    assert round_4(out, 2) == "   1 w 0"
    assert (config.parent / "tournament.trf").read_bytes() == EXAMPLE_TRF.read_bytes()


def test_failures_and_their_exit_codes(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert export(config) == 1  # the daemon has not run: no journal
    assert capsys.readouterr().err == (
        f"{config.parent / 'journal.db'}: no journal (has the daemon run this round?)\n"
    )
    config.write_text(CONFIG.format(pairing=""))
    assert export(config) == 2
    assert capsys.readouterr().err == (
        f"{config}: [pairing] needs trf and pairings to export results\n"
    )
    config.write_text(CONFIG.format(pairing=PAIRING))
    (config.parent / "round4.txt").write_text("1\n2 99\n")
    assert export(config) == 2
    assert capsys.readouterr().err == (
        f"{config.parent / 'round4.txt'}:2:3: player 99 is not in"
        f" {config.parent / 'tournament.trf'} (starting ranks 1-13)\n"
    )
    config.write_text("[event]\n")
    assert export(config) == 2
    assert "round: required" in capsys.readouterr().err
