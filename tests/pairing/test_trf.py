"""TRF files: every field read from its columns, written back byte for byte, scoring."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.pairing.scoring import RoundEntry, Scoring, format_points
from daemon.pairing.trf import PairingFileError, Tournament
from tests.pairing.support import EXAMPLE_TRF, block, column, player_line, trf_text


@pytest.fixture(scope="module")
def example() -> Tournament:
    return Tournament.from_trf(EXAMPLE_TRF)


def test_the_example_is_read_with_every_field(example: Tournament) -> None:
    assert list(example.players) == list(range(1, 14))
    okafor = example.player(1)
    assert (okafor.name, okafor.sex, okafor.title, okafor.rating) == (
        "Okafor, Daniel",
        "m",
        "FM",
        2315,
    )
    assert (okafor.federation, okafor.fide_id, okafor.birth_date) == ("AUS", 3212345, "1994/03/11")
    assert (okafor.points, okafor.place, okafor.line) == (Decimal("2.5"), 2, 18)
    assert okafor.rounds == (
        RoundEntry(opponent=7, colour="w", code="1"),
        RoundEntry(opponent=4, colour="b", code="="),
        RoundEntry(opponent=3, colour="w", code="1"),
    )
    assert example.player(2).title == "WIM"
    assert example.player(13).rating is None  # unrated: blank
    assert example.player(13).entry(1) == RoundEntry(opponent=0, colour="-", code="U")
    assert example.player(11).entry(2) == RoundEntry(opponent=0, colour="-", code="H")
    assert example.player(8).entry(2) == RoundEntry(opponent=6, colour="b", code="-")
    assert example.player(5).entry(4) is None


def test_the_example_extension_lines(example: Tournament) -> None:
    assert (example.rounds, example.played_rounds) == (7, 3)
    assert example.scoring.is_fide
    assert example.byes == {4: {9: "H"}}
    assert example.absent == (5,)


def test_reading_and_writing_back_changes_no_byte(example: Tournament) -> None:
    assert example.to_bytes() == EXAMPLE_TRF.read_bytes()


@pytest.mark.parametrize("ending", ["\r", "\n", "\r\n"])
def test_each_line_keeps_its_ending_and_a_missing_last_one_stays_missing(ending: str) -> None:
    text = trf_text(
        "012 Endings",
        player_line(1, "Alpha, Ann", "0.0"),
        player_line(2, "Beta, Bob", "0.0"),
        ending=ending,
    )
    text = text[: -len(ending)] + "\r\n### mixed" * (ending != "\r\n")
    tournament = Tournament.from_text(text, source="t.trf")
    assert tournament.to_trf() == text
    changed = tournament.with_round(
        1,
        {
            1: RoundEntry(opponent=2, colour="w", code="1"),
            2: RoundEntry(opponent=1, colour="b", code="0"),
        },
    )
    assert changed.to_trf().count(ending) == text.count(ending)
    assert changed.to_trf().splitlines()[0] == "012 Endings"


def test_latin_1_files_and_byte_order_marks_are_written_back_as_they_were() -> None:
    text = trf_text(player_line(1, "Müller, Jörg", "0.0"), player_line(2, "Ñúñez, Ana", "0.0"))
    latin = Tournament.from_bytes(text.encode("latin-1"), source="t.trf")
    assert (latin.encoding, latin.player(1).name) == ("latin-1", "Müller, Jörg")
    assert latin.to_bytes() == text.encode("latin-1")
    marked = Tournament.from_bytes(b"\xef\xbb\xbf" + text.encode(), source="t.trf")
    assert (marked.bom, marked.player(2).name) == (True, "Ñúñez, Ana")
    assert marked.to_bytes() == b"\xef\xbb\xbf" + text.encode()


def test_columns_count_characters_not_bytes_in_utf_8_names() -> None:
    line = player_line(1, "Ødegård, Åse", "1.0", ("   2 b 1",), rating=1999)
    text = trf_text(line, player_line(2, "Beta, Bob", "0.0", ("   1 w 0",)))
    tournament = Tournament.from_bytes(text.encode(), source="t.trf")
    assert tournament.player(1).rating == 1999
    assert tournament.player(1).entry(1) == RoundEntry(opponent=2, colour="b", code="1")


@pytest.mark.parametrize(
    ("written", "title"),
    [
        ("GM", "GM"),
        (" g", "GM"),
        (" m", "IM"),
        ("wg", "WGM"),
        ("WFM", "WFM"),
        ("  ", None),
        (" x", None),
    ],
)
def test_titles_old_one_letter_codes_are_mapped(written: str, title: str | None) -> None:
    line = player_line(1, "Alpha, Ann", "0.0", title=written)
    tournament = Tournament.from_text(trf_text(line), source="t.trf")
    assert tournament.player(1).title == title


def test_with_round_rewrites_only_the_players_lines_points_and_round_columns(
    example: Tournament,
) -> None:
    entries: dict[int, RoundEntry | None] = {
        2: RoundEntry(opponent=1, colour="w", code="0"),
        1: RoundEntry(opponent=2, colour="b", code="1"),
    }
    changed = example.with_round(4, entries)
    before, after = example.to_trf().splitlines(), changed.to_trf().splitlines()
    differing = [i + 1 for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert differing == [18, 19]
    okafor = after[17]
    assert column(okafor, 81, 84) == " 3.5"
    assert block(okafor, 4) == "   2 b 1"
    assert okafor[:119] == before[17][:80] + " 3.5" + before[17][84:119]
    assert len(before[17]) == 119
    assert changed.player(1).points == Decimal("3.5")
    assert changed.player(2).points == Decimal("3.0")
    cleared = changed.with_round(4, dict.fromkeys((1, 2)))
    assert cleared.to_trf() == example.to_trf()


def test_xxs_scoring_applies_in_order_with_shortcuts() -> None:
    scoring = Scoring.fide().receive_xxs("XXS W=3 D=1 WL=0.5")
    assert scoring.values["WW"] == scoring.values["FW"] == scoring.values["FPB"] == 3
    assert scoring.values["PAB"] == 1  # W does not include the pairing-allocated bye
    assert [scoring.values[k] for k in ("HPB", "WL", "BL")] == [1, Decimal("0.5"), 0]
    overridden = Scoring.fide().receive_xxs("XXS FPB=0").receive_xxs("XXS W=3")
    assert overridden.values["FPB"] == 3
    kept = Scoring.fide().receive_xxs("XXS W=3").receive_xxs("XXS FPB=0 HPB=.5")
    assert [kept.values["FPB"], kept.values["HPB"]] == [0, Decimal("0.5")]


def test_tag_162_scoring_and_the_pairing_bye_following_the_win() -> None:
    scoring = Scoring.fide().receive_tag_162("162  W 3.0    D 1.0    A 0.0")
    assert [scoring.values[k] for k in ("WW", "PAB", "HPB")] == [3, 3, 1]
    separate = Scoring.fide().receive_tag_162("162  P 1.0    W 3.0")
    assert separate.values["PAB"] == 1


@pytest.mark.parametrize(
    ("entry", "points"),
    [
        (RoundEntry(opponent=2, colour="w", code="1"), "3"),
        (RoundEntry(opponent=2, colour="b", code="w"), "2"),  # lower case, lasted < 1 move
        (RoundEntry(opponent=2, colour="w", code="="), "1"),
        (RoundEntry(opponent=2, colour="b", code="D"), "0.5"),
        (RoundEntry(opponent=2, colour="w", code="0"), "0.25"),
        (RoundEntry(opponent=2, colour="b", code="+"), "2.5"),
        (RoundEntry(opponent=2, colour="w", code="-"), "0.1"),
        (RoundEntry(opponent=0, colour="-", code="H"), "0.75"),
        (RoundEntry(opponent=0, colour="-", code="F"), "1.5"),
        (RoundEntry(opponent=0, colour="-", code="U"), "1.25"),
        (RoundEntry(opponent=0, colour="-", code="Z"), "0.2"),
        (RoundEntry(opponent=0, colour="-", code=" "), "0.2"),
        (RoundEntry(opponent=0, colour="-", code="+"), "1.25"),  # older PAB
        (RoundEntry(opponent=2, colour="w", code=" "), "0"),  # still to play
    ],
)
def test_each_code_scores_its_own_xxs_value(entry: RoundEntry, points: str) -> None:
    scoring = Scoring.fide().receive_xxs(
        "XXS WW=3 BW=2 WD=1 BD=.5 WL=.25 BL=0 FW=2.5 FL=.1 HPB=.75 FPB=1.5 PAB=1.25 ZPB=.2"
    )
    assert scoring.points_for(entry) == Decimal(points)


def test_points_without_the_last_rounds_entry_are_accepted_as_engines_do() -> None:
    text = trf_text(
        player_line(1, "Alpha, Ann", "1.0", ("   2 w 1", "0000 - H")),
        player_line(2, "Beta, Bob", "0.0", ("   1 b 0", "0000 - Z")),
    )
    tournament = Tournament.from_text(text, source="t.trf")
    assert tournament.player(1).points == 1
    with pytest.raises(PairingFileError, match=r"points 2\.0 do not add up"):
        Tournament.from_text(text.replace(" 1.0", " 2.0", 1), source="t.trf")


def test_points_format_fits_four_columns() -> None:
    assert [format_points(Decimal(p)) for p in ("0", "3.5", "10", "99.5")] == [
        " 0.0",
        " 3.5",
        "10.0",
        "99.5",
    ]
    with pytest.raises(ValueError, match="do not fit"):
        format_points(Decimal("100"))
    with pytest.raises(ValueError, match="do not fit"):
        format_points(Decimal("0.25"))


_CODES = {"1-0": ("1", "0"), "0-1": ("0", "1"), "=": ("=", "="), "+-": ("+", "-"), "--": ("-", "-")}


@st.composite
def tournaments(draw: st.DrawFn) -> tuple[str, dict[int, list[RoundEntry | None]]]:
    """A consistent random tournament as TRF text, and every player's rounds."""
    size = draw(st.integers(min_value=2, max_value=16))
    rounds = draw(st.integers(min_value=0, max_value=5))
    entries: dict[int, list[RoundEntry | None]] = {rank: [] for rank in range(1, size + 1)}
    for _ in range(rounds):
        order = draw(st.permutations(list(entries)))
        for white, black in zip(order[::2], order[1::2], strict=False):
            codes = _CODES[draw(st.sampled_from(sorted(_CODES)))]
            entries[white].append(RoundEntry(opponent=black, colour="w", code=codes[0]))
            entries[black].append(RoundEntry(opponent=white, colour="b", code=codes[1]))
        if size % 2:
            bye = draw(st.sampled_from([None, *"HFUZ"]))
            entries[order[-1]].append(
                None if bye is None else RoundEntry(opponent=0, colour="-", code=bye)
            )
    scoring = Scoring.fide()
    lines = ["012 Random", "XXR 9"]
    for rank, rounds_of in entries.items():
        blocks = tuple(" " * 8 if e is None else e.render() for e in rounds_of)
        points = format_points(scoring.total(rounds_of))
        lines.append(player_line(rank, f"Player, No{rank}", points, blocks).rstrip())
    for rounds_of in entries.values():
        while rounds_of and rounds_of[-1] is None:
            rounds_of.pop()
    return trf_text(*lines), entries


@settings(max_examples=60, deadline=None)
@given(tournaments())
def test_random_tournaments_read_back_exactly(
    case: tuple[str, dict[int, list[RoundEntry | None]]],
) -> None:
    text, entries = case
    tournament = Tournament.from_text(text, source="random.trf")
    assert tournament.to_trf() == text
    assert {rank: list(p.rounds) for rank, p in tournament.players.items()} == entries
    again = Tournament.from_text(tournament.to_trf(), source="random.trf")
    assert again.players == tournament.players
