"""``dgtcast prizes``: a two-section, three-round event's prize list, worked out by hand.

Both sections' TRFs hold rounds 1 and 2; round 3 is paired and its results are in the
journal only (confirmed through the real alert engine), as at the end of the event
before anyone exported the TRF.
"""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path

import pytest

from daemon.arbiter.decisions import AlertSettings
from daemon.arbiter.engine import AlertEngine
from daemon.commands import prizes as prizes_cmd
from daemon.config.model import load_config
from daemon.journal.store import Journal
from tests.pairing.support import player_line, trf_text

T0 = 1_777_078_800.0

CONFIG = """\
[event]
name = "Riverside Weekender"
round = 3
time_control = "5400+30"

[storage]
path = "journal.db"

[[sections]]
name = "Open"
[[sections.boards]]
number = 1
[[sections.boards]]
number = 2
[[sections.boards]]
number = 3
[sections.pairing]
trf = "open.trf"
pairings = "open-r3.txt"
[[sections.prizes.groups]]
name = "Open"
places = [{ amount = 300, trophy = "trophy" }, { amount = 200, trophy = "trophy" }]
[[sections.prizes.groups]]
name = "U1600"
rating = "U1600"
places = [100]
[[sections.prizes.groups]]
name = "U16"
born_from = 2010-01-01
places = [80]
[[sections.prizes.groups]]
name = "Girls"
girls = true
places = ["trophy"]

[[sections]]
name = "Juniors"
[[sections.boards]]
number = 11
[[sections.boards]]
number = 12
[[sections.boards]]
number = 13
[sections.pairing]
trf = "juniors.trf"
pairings = "juniors-r3.txt"
[[sections.prizes.groups]]
name = "Open"
places = [
  { amount = 500, trophy = "trophy" },
  { amount = 350, trophy = "trophy" },
  { amount = 300, trophy = "trophy" },
]
[[sections.prizes.groups]]
name = "U1600"
rating = "U1600"
places = [300, 100]
"""

# Open: R1 1-4 1-0, 2-5 0-1, 3-6 ½; R2 5-1 ½, 3-2 1-0, 6-4 0-1; R3 (journal) 1-3 ½,
# 4-5 0-1, 2-6 1-0. Final scores 5: 2.5; 1, 3: 2; 2, 4: 1; 6: ½.
OPEN = (
    player_line(1, "Able, Ann", "1.5", ("   4 w 1", "   5 b =", "   3 w  "),
                rating=1900, sex="w", birth="2009/03/01"),
    player_line(2, "Baker, Ben", "0.0", ("   5 w 0", "   3 b 0", "   6 w  "),
                rating=1700, birth="2007/06/01"),
    player_line(3, "Cole, Cat", "1.5", ("   6 w =", "   2 w 1", "   1 b  "),
                rating=1550, sex="w", birth="2010/01/01"),
    player_line(4, "Dunn, Dan", "1.0", ("   1 b 0", "   6 b 1", "   5 w  "),
                rating=1500, birth="2011/01/01"),
    player_line(5, "Eads, Eve", "1.5", ("   2 b 1", "   1 w =", "   4 b  "),
                sex="w", birth="2012/01/01"),
    player_line(6, "Ford, Fay", "0.5", ("   3 b =", "   4 w 0", "   2 b  "),
                rating=1450),
)  # fmt: skip
OPEN_R3 = "3\n1 3\n4 5\n2 6\n"

# Juniors: R1 1-2 1-0, 3-5 1-0, 4-6 1-0; R2 3-1 0-1, 2-6 1-0, 4-5 1-0;
# R3 (journal) 1-4 1-0, 2-5 1-0, 3-6 1-0. Final: 1: 3; 2, 3, 4: 2; 5, 6: 0.
JUNIORS = (
    player_line(1, "Xu, Xavier", "2.0", ("   2 w 1", "   3 b 1", "   4 w  "), rating=2000),
    player_line(2, "Ash, Amy", "1.0", ("   1 b 0", "   6 w 1", "   5 w  "), rating=1500),
    player_line(3, "Bell, Bo", "1.0", ("   5 w 1", "   1 w 0", "   6 w  "), rating=1900),
    player_line(4, "Cruz, Cy", "2.0", ("   6 w 1", "   5 w 1", "   1 b  "), rating=1800),
    player_line(5, "Dale, Di", "0.0", ("   3 b 0", "   4 b 0", "   2 b  "), rating=1700),
    player_line(6, "Esk, Em", "0.0", ("   4 b 0", "   2 b 0", "   3 b  "), rating=1550),
)
JUNIORS_R3 = "3\n1 4\n2 5\n3 6\n"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    (tmp_path / "open.trf").write_text(trf_text("012 Open", "XXR 3", *OPEN))
    (tmp_path / "open-r3.txt").write_text(OPEN_R3)
    (tmp_path / "juniors.trf").write_text(trf_text("012 Juniors", "XXR 3", *JUNIORS))
    (tmp_path / "juniors-r3.txt").write_text(JUNIORS_R3)
    path = tmp_path / "event.toml"
    path.write_text(CONFIG)
    return path


def _journal(config: Path, results: dict[int, str]) -> None:
    """Each board's result set and confirmed through the real alert engine, journalled."""
    engine = AlertEngine(AlertSettings.from_config(load_config(config, env={})))
    with Journal(config.parent / "journal.db") as journal:
        for n, (board, result) in enumerate(results.items()):
            engine.set_result(board, result, T0 + 2 * n)
            engine.confirm_result(board, T0 + 2 * n + 1)
            journal.append_many(engine.decisions_made())


def _prizes(config: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    prizes_cmd.add_arguments(parser)
    code = prizes_cmd.run(parser.parse_args(["--config", str(config), *extra]))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


ROUND_3 = {1: "1/2-1/2", 2: "0-1", 3: "1-0", 11: "1-0", 12: "1-0", 13: "1-0"}

# Open, as tests/prizes/test_event.py works it out: Open 5 $300 (trophy), 1 and 3 share
# 2nd-3rd ($100 each; the 2nd trophy to 1 by PS 4.5 against 4); U1600: 3 took the
# Open's share (equal values keep the first list), so 4 ($100); U16: 5 and 3 took the
# Open, 4 U1600: nobody. Girls: 5, clear.
#
# Juniors: Open 1 $500; 2, 3, 4 tie on 2 for 2nd-4th: (350 + 300) / 3 = $216.67 each.
# U1600 (2 at 1500, 6 at 1550): 2 $300, 6 $100. 2 keeps U1600's $300 (more than
# $216.67) and leaves the Open, where 3 and 4 now share 2nd-3rd: $325 each, more than
# 2's $300: pooled, (300 + 325 + 325) / 3 = $316.666… each, paid $316.66. 6 keeps $100.
# Trophies: 1 (clear); 2nd and 3rd among 2, 3, 4 by PS: 4 (1, 2, 2: 5), 3 (1, 1, 2: 4),
# 2 (0, 1, 2: 3).
EXPECTED = """\
Riverside Weekender — Open: prizes after round 3

Open (6 eligible)
      1  Eads, Eve                        2.5     $300.00  Open
    2-3  Able, Ann                          2     $100.00  Open
    2-3  Cole, Cat                          2     $100.00  Open
      1  Eads, Eve                        2.5  trophy
      2  Able, Ann                          2  trophy (countback PS 4.5)

U1600 (3 eligible)
      1  Dunn, Dan                          1     $100.00  U1600

U16 (3 eligible)
  (nobody)

Girls (3 eligible)
      1  Eads, Eve                        2.5  trophy

Total paid: $600.00 to 4 players
  Eads, Eve: kept Open ($300.00), left U16
  Cole, Cat: kept Open ($100.00), left U1600, U16
  Dunn, Dan: kept U1600 ($100.00), left U16

Riverside Weekender — Juniors: prizes after round 3

Open (6 eligible)
      1  Xu, Xavier                         3     $500.00  Open
    2-3  Bell, Bo                           2     $316.66  Open, pooled with Ash, Amy, Cruz, Cy
    2-3  Cruz, Cy                           2     $316.66  Open, pooled with Ash, Amy, Bell, Bo
      1  Xu, Xavier                         3  trophy
      2  Cruz, Cy                           2  trophy (countback PS 5)
      3  Bell, Bo                           2  trophy (countback PS 4)

U1600 (2 eligible)
      1  Ash, Amy                           2     $316.66  U1600, pooled with Bell, Bo, Cruz, Cy
      2  Esk, Em                            0     $100.00  U1600

Total paid: $1,549.98 to 5 players
  Ash, Amy: kept U1600 ($300.00), left Open
"""


def test_the_prize_list_at_the_end_of_a_two_section_event(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _journal(config, ROUND_3)
    code, out = _prizes(config, capsys)
    assert code == 0, out
    assert out == EXPECTED


def test_the_treasurers_csv(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _journal(config, ROUND_3)
    code, out = _prizes(config, capsys, "--csv", "--section", "Juniors")
    assert code == 0, out
    rows = list(csv.DictReader(io.StringIO(out)))
    cash = {(r["name"], r["group"]): r["amount"] for r in rows if r["prize"] == "cash"}
    assert cash == {
        ("Xu, Xavier", "Open"): "500.00",
        ("Bell, Bo", "Open"): "316.66",
        ("Cruz, Cy", "Open"): "316.66",
        ("Ash, Amy", "U1600"): "316.66",
        ("Esk, Em", "U1600"): "100.00",
    }
    trophies = [(r["name"], r["places"], r["note"]) for r in rows if r["prize"] == "trophy"]
    assert trophies == [
        ("Xu, Xavier", "1", ""),
        ("Cruz, Cy", "2", "countback: PS"),
        ("Bell, Bo", "3", "countback: PS"),
    ]


def test_before_the_journal_the_trf_alone_counts(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # After round 2 (no journal yet), Juniors: 1 and 4 on 2 share 1st-2nd: $425 each.
    code, out = _prizes(config, capsys, "--section", "Juniors", "--csv")
    assert code == 0, out
    rows = {r["name"]: r["amount"] for r in csv.DictReader(io.StringIO(out)) if r["amount"]}
    assert rows["Xu, Xavier"] == rows["Cruz, Cy"] == "425.00"


def test_no_prizes_table_is_one_line_and_exit_2(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _prizes(config, capsys, "--section", "U12")
    assert (code, out) == (2, f'{config}: no section "U12" with [sections.prizes]\n')
