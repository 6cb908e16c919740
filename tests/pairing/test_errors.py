"""Bad TRF and pairings files: one exact line per problem, naming file, line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.pairing.handoff import RoundResults
from daemon.pairing.pairings import parse_pairings, read_pairings
from daemon.pairing.trf import PairingFileError, Tournament
from tests.pairing.support import player_line, trf_text

# Round 1 played: 1-3 1-0, 4-2 draw.
A = player_line(1, "Alpha, Ann", "1.0", ("   3 w 1",), rating=2100)
B = player_line(2, "Beta, Bob", "0.5", ("   4 b =",), rating=2000)
C = player_line(3, "Gamma, Cy", "0.0", ("   1 b 0",))
D = player_line(4, "Delta, Di", "0.5", ("   2 w =",))
HEAD = ("012 Errors", "XXR 5")
GOOD = (*HEAD, A, B, C, D)
XXS = "(scoring XXS WW=3 BW=3 WD=1 BD=1 HPB=1 FPB=3 FW=3)"


def _with(old: str, new: str, line: str = A) -> tuple[str, ...]:
    """The good file with ``old`` replaced by ``new`` in one of its lines."""
    return tuple(new_line if new_line != line else line.replace(old, new, 1) for new_line in GOOD)


TRF_CASES = [
    pytest.param(
        (*HEAD, A[:60], B, C, D),
        "t.trf:3:57: player line ends before its points (columns 81-84)",
        id="short-line",
    ),
    pytest.param(
        _with("   1", "00x1"), 't.trf:3:5: starting rank "00x1" is not a number 1-9999', id="rank"
    ),
    pytest.param(
        _with("   2", "   1", B),
        "t.trf:4:5: starting rank 1 is given twice (also line 3)",
        id="rank-twice",
    ),
    pytest.param(
        (*HEAD, A, C, D),
        "t.trf: no player has starting rank 2 (ranks must run from 1 to 4)\n"
        "t.trf:5:92: opponent 0002 is not a player (starting ranks 1-4)",
        id="rank-missing",
    ),
    pytest.param(_with("2100", "2a00"), 't.trf:3:49: rating "2a00" is not a number', id="rating"),
    pytest.param(
        _with(" 1.0", " 1,0"),
        't.trf:3:81: points " 1,0" are not a number like 11.5',
        id="points-text",
    ),
    pytest.param(
        _with(" 1.0", " 2.0"),
        "t.trf:3:81: points 2.0 do not add up: the results give 1.0 (scoring FIDE 1/½/0)",
        id="points-sum",
    ),
    pytest.param(
        ("012 Errors", "XXS W=3 D=1", A, B, C, D),
        f"t.trf:3:81: points 1.0 do not add up: the results give 3.0 {XXS}\n"
        f"t.trf:4:81: points 0.5 do not add up: the results give 1.0 {XXS}\n"
        f"t.trf:6:81: points 0.5 do not add up: the results give 1.0 {XXS}",
        id="points-under-xxs",
    ),
    pytest.param(
        _with("   3 w 1", "0045 w 1"),
        "t.trf:3:92: opponent 0045 is not a player (starting ranks 1-4)\n"
        "t.trf:5:92: round 1: player 3 meets 1, but line 3 gives player 1 a game against 45",
        id="opponent-unknown",
    ),
    pytest.param(
        _with("   3 w 1", "  4x w 1"),
        't.trf:3:92: opponent "4x" is not a number',
        id="opponent-text",
    ),
    pytest.param(
        _with("   3 w 1", "   1 w 1"),
        "t.trf:3:92: player 1 cannot be their own opponent",
        id="opponent-self",
    ),
    pytest.param(
        _with("   3 w 1", "   2 w 1"),
        "t.trf:3:92: round 1: player 1 meets 2, but line 4 gives player 2 a game against 4\n"
        "t.trf:5:92: round 1: player 3 meets 1, but line 3 gives player 1 a game against 2",
        id="opponents-disagree",
    ),
    pytest.param(
        _with("   1 b 0", "   1 w 0", C),
        "t.trf:3:97: round 1: players 1 and 3 both have colour w",
        id="same-colour",
    ),
    pytest.param(
        _with("   3 w 1", "   3 x 1"), 't.trf:3:97: colour must be w, b or -, got "x"', id="colour"
    ),
    pytest.param(
        _with("   3 w 1", "   3 - 1"),
        "t.trf:3:97: a game needs colour w or b",
        id="game-without-colour",
    ),
    pytest.param(
        _with("   3 w 1", "   3 w 7"),
        't.trf:3:99: result "7" is not one of 1 = 0 + - W D L H F U Z',
        id="result",
    ),
    pytest.param(
        _with("   3 w 1", "   3 - H"),
        "t.trf:3:99: H is a bye: the opponent must be 0000, not 3",
        id="bye-with-opponent",
    ),
    pytest.param(
        _with("   3 w 1", "0000 - 1"),
        "t.trf:3:92: result 1 needs an opponent",
        id="game-without-opponent",
    ),
    pytest.param(
        _with("     3 w 1", "    3 w 1 "),
        "t.trf:3:96: column 96 must be blank (round 1's columns are shifted)",
        id="shifted",
    ),
    pytest.param(
        ("012 Errors", "XXR 1", A + "  0000 - H", B, C, D),
        "t.trf:3:102: round 2 is past the last round (XXR 1)",
        id="past-last-round",
    ),
    pytest.param(
        ("012 Errors", "XXR five", A, B, C, D),
        't.trf:2:5: XXR must give the number of rounds, got "five"',
        id="xxr",
    ),
    pytest.param(
        ("012 Errors", "XXR 5", "142 7", A, B, C, D),
        "t.trf:3:5: 142 says 7 rounds, but line 2 says 5",
        id="xxr-and-142",
    ),
    pytest.param(
        (*HEAD, "XXS Q=1", A, B, C, D),
        't.trf:3:5: XXS: "Q=1" is not CODE=VALUE with a code of'
        " WW BW WD BD WL BL ZPB HPB FPB PAB FW FL W D",
        id="xxs-code",
    ),
    pytest.param(
        (*HEAD, "XXS WW=x", A, B, C, D),
        't.trf:3:8: XXS WW: "x" is not a number of points',
        id="xxs-value",
    ),
    pytest.param(
        (*HEAD, "162  Q 1.0", A, B, C, D),
        't.trf:3:6: 162: "Q" is not one of W D L A P X',
        id="tag-162",
    ),
    pytest.param(
        (*GOOD, "240 Q 002 0001"),
        't.trf:7:5: 240: bye type must be F, H or Z, got "Q"',
        id="bye-type",
    ),
    pytest.param(
        (*GOOD, "240 H 002 0009"), "t.trf:7:11: bye for 0009, who is not a player", id="bye-player"
    ),
    pytest.param((*GOOD, "XXZ 3 x"), 't.trf:7:7: "x" is not a starting rank', id="xxz"),
    pytest.param(HEAD, "t.trf: no player lines (001)", id="no-players"),
]


@pytest.mark.parametrize(("lines", "message"), TRF_CASES)
def test_bad_trf_files_get_one_exact_line_per_problem(lines: tuple[str, ...], message: str) -> None:
    with pytest.raises(PairingFileError) as caught:
        Tournament.from_text(trf_text(*lines), source="t.trf")
    assert str(caught.value) == message
    assert caught.value.problems == tuple(message.split("\n"))


def test_the_good_file_of_the_table_is_good() -> None:
    assert list(Tournament.from_text(trf_text(*GOOD), source="t.trf").players) == [1, 2, 3, 4]


def test_a_file_that_cannot_be_read(tmp_path: Path) -> None:
    missing = tmp_path / "missing.trf"
    with pytest.raises(PairingFileError) as caught:
        Tournament.from_trf(missing)
    assert str(caught.value) == f"{missing}: cannot read the file: No such file or directory"


TOURNAMENT = Tournament.from_text(trf_text(*GOOD), source="t.trf")

PAIRING_CASES = [
    pytest.param(
        "", "r.txt:1:1: empty file: the first line must be the number of pairs", id="empty"
    ),
    pytest.param(
        "two\n1 2\n", "r.txt:1:1: the first line must be the number of pairs", id="count-text"
    ),
    pytest.param(
        "3\n1 2\n3 4\n", "r.txt:1:1: the first line says 3 pairs, but 2 follow", id="count-wrong"
    ),
    pytest.param("1\n1\n", 'r.txt:2:1: a pair is "white black", got "1"', id="one-rank"),
    pytest.param("1\n1 2 3\n", 'r.txt:2:1: a pair is "white black", got "1 2 3"', id="three-ranks"),
    pytest.param("1\n1  x\n", 'r.txt:2:4: "x" is not a starting rank', id="rank-text"),
    pytest.param(
        "1\n0 1\n", "r.txt:2:1: 0 (the bye) can only be the second of a pair", id="bye-first"
    ),
    pytest.param("1\n2 2\n", "r.txt:2:3: player 2 cannot play themselves", id="self"),
    pytest.param("2\n1 0\n2 0\n", "r.txt:3:3: a second bye (also line 2)", id="two-byes"),
    pytest.param("2\n1 2\n3 1\n", "r.txt:3:3: player 1 is paired twice (also line 2)", id="twice"),
    pytest.param(
        "1\n1 45\n", "r.txt:2:3: player 45 is not in t.trf (starting ranks 1-4)", id="not-a-player"
    ),
    pytest.param(
        "2\n1 2\n\n 3 x\n", 'r.txt:4:4: "x" is not a starting rank', id="blank-lines-skipped"
    ),
]


@pytest.mark.parametrize(("text", "message"), PAIRING_CASES)
def test_bad_pairings_get_one_exact_line_per_problem(text: str, message: str) -> None:
    with pytest.raises(PairingFileError) as caught:
        parse_pairings(text, source="r.txt", tournament=TOURNAMENT)
    assert str(caught.value) == message


def test_pairings_that_cannot_be_read(tmp_path: Path) -> None:
    binary = tmp_path / "r.txt"
    binary.write_bytes(b"\xff\xfe2\n")
    with pytest.raises(PairingFileError, match=rf"^{binary}: not a text file \(UTF-8\)$"):
        read_pairings(binary)


ROUND_CASES = [
    pytest.param(
        (*GOOD, "240 H 002 0001"),
        "2\n1 2\n3 4\n",
        "r.txt:2:1: player 1 plays 2 with White, but t.trf gives them a bye (H) in round 2",
        id="paired-with-a-bye-ahead",
    ),
    pytest.param(
        (*HEAD, A + "  0000 - H", B, C, D),
        "2\n1 2\n3 4\n",
        "r.txt:2:1: player 1 plays 2 with White, but t.trf line 3 has 0000 - H in round 2",
        id="paired-with-a-bye-in-the-round",
    ),
    pytest.param(
        (*HEAD, A + "     4 w 1", B, C, _with("   2 w =", "   2 w =     1 b 0", D)[-1]),
        "2\n1 2\n3 4\n",
        "r.txt:2:1: player 1 plays 2 with White, but t.trf line 3 has 4 w 1 in round 2\n"
        "r.txt:3:1: player 4 plays 3 with Black, but t.trf line 6 has 1 b 0 in round 2",
        id="another-game-in-the-round",
    ),
    pytest.param(
        (*HEAD, A, B, C, _with("   2 w =", "   2 w =  0000 - Z", D)[-1]),
        "2\n1 2\n4 0\n",
        "r.txt:3:1: player 4 gets the bye, but t.trf line 6 has 0000 - Z in round 2",
        id="bye-with-another-entry",
    ),
    pytest.param(
        ("012 Errors", "XXR 1", A, B, C, D),
        "2\n1 2\n3 4\n",
        "t.trf: round 2 is past the last round (XXR 1)",
        id="past-last-round",
    ),
]


@pytest.mark.parametrize(("lines", "pairings", "message"), ROUND_CASES)
def test_pairings_that_do_not_fit_the_trf(
    lines: tuple[str, ...], pairings: str, message: str
) -> None:
    tournament = Tournament.from_text(trf_text(*lines), source="t.trf")
    pairs = parse_pairings(pairings, source="r.txt", tournament=tournament, first_board=1)
    with pytest.raises(PairingFileError) as caught:
        RoundResults(tournament, 2, pairs)
    assert str(caught.value) == message


def test_a_round_already_followed_by_a_later_one() -> None:
    tournament = Tournament.from_text(trf_text(*HEAD, A + "  0000 - H", B, C, D), source="t.trf")
    pairs = parse_pairings("2\n1 3\n4 2\n", source="r.txt", tournament=tournament)
    with pytest.raises(PairingFileError) as caught:
        RoundResults(tournament, 1, pairs)
    assert str(caught.value) == (
        "t.trf:3:102: player 1 already has round 2, but round 1 is being played"
    )
