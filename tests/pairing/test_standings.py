"""Standings and FIDE tie-breaks against values worked out by hand (C.07, article 16)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from daemon.pairing.scoring import RoundEntry
from daemon.pairing.standings import Standing, Unplayed, entry_kind, standings
from daemon.pairing.tiebreaks import TieBreak, parse_tiebreak, read_tiebreaks
from daemon.pairing.trf import Tournament
from tests.pairing.support import player_line, trf_text

# Six players, three rounds (FIDE scoring):
#   R1: 1-4 1-0, 2-5 ½-½, 3-6 +/- (6 forfeits)
#   R2: 1-2 0-1, 3-4 1-0, 5 half-point bye, 6 zero-point bye
#   R3: 2-3 ½-½, 1-5 1-0, 4 pairing-allocated bye, 6 blank (withdrawn)
SIX = Tournament.from_text(
    trf_text(
        "012 Hand Open",
        "XXR 3",
        player_line(1, "One, A", "2.0", ("   4 w 1", "   2 w 0", "   5 w 1")),
        player_line(2, "Two, B", "2.0", ("   5 b =", "   1 b 1", "   3 w =")),
        player_line(3, "Three, C", "2.5", ("   6 w +", "   4 w 1", "   2 b =")),
        player_line(4, "Four, D", "1.0", ("   1 b 0", "   3 b 0", "0000 - U")),
        player_line(5, "Five, E", "1.0", ("   2 w =", "0000 - H", "   1 b 0")),
        player_line(6, "Six, F", "0.0", ("   3 b -", "0000 - Z")),
    ),
    source="six.trf",
)


def _table(tournament: Tournament, rounds: int) -> dict[int, tuple[Decimal, ...]]:
    """Place, points, BH-C1, BH and SB of each starting rank."""
    entries = {rank: player.rounds for rank, player in tournament.players.items()}
    rows = standings(tournament.players, entries, tournament.scoring, rounds)
    return {
        row.player.rank: (
            Decimal(row.place),
            row.points,
            row.buchholz_cut1,
            row.buchholz,
            row.sonneborn_berger,
        )
        for row in rows
    }


def _expected(*values: str) -> tuple[Decimal, ...]:
    return tuple(Decimal(value) for value in values)


def test_points_and_tie_breaks_as_worked_out_by_hand() -> None:
    # Scores: 1: 2, 2: 2, 3: 2.5, 4: 1, 5: 1, 6: 0.
    # Opponents' scores for Buchholz: as they are, but player 6 (no round that is not
    # voluntarily unplayed) has rounds 2 and 3 without an opponent: draws, so 0 + ½ + ½ = 1.
    # 1: opponents 4, 2, 5 = 1 + 2 + 1 = 4; cut the lowest (1): 3; SB 1·1 + 2·0 + 1·1 = 2.
    # 2: 5, 1, 3 = 1 + 2 + 2.5 = 5.5; cut 1: 4.5; SB 1·½ + 2·1 + 2.5·½ = 3.75.
    # 3: forfeit win = own score 2.5, then 4 and 2 = 2.5 + 1 + 2 = 5.5; no VUR, cut 1: 4.5;
    #    SB 2.5·1 + 1·1 + 2·½ = 4.5.
    # 4: 1, 3, pairing-allocated bye = own 1 = 2 + 2.5 + 1 = 5.5; cut 1: 4.5; SB 1·1 = 1.
    # 5: 2, half-point bye = own 1 (a VUR), 1 = 2 + 1 + 2 = 5; cut the VUR: 4;
    #    SB 2·½ + 1·½ + 2·0 = 1.5.
    # 6: three unplayed rounds, each own 0: 0.
    assert _table(SIX, 3) == {
        3: _expected("1", "2.5", "4.5", "5.5", "4.5"),
        2: _expected("2", "2.0", "4.5", "5.5", "3.75"),
        1: _expected("3", "2.0", "3", "4", "2"),
        4: _expected("4", "1", "4.5", "5.5", "1"),
        5: _expected("5", "1.0", "4.0", "5.0", "1.5"),
        6: _expected("6", "0", "0", "0", "0"),
    }


def test_the_order_is_points_then_cut1_buchholz_sb_then_starting_rank() -> None:
    entries = {rank: player.rounds for rank, player in SIX.players.items()}
    rows = standings(SIX.players, entries, SIX.scoring, 3)
    assert [row.player.rank for row in rows] == [3, 2, 1, 4, 5, 6]


def test_cut1_cuts_a_voluntarily_unplayed_round_first_even_when_it_is_not_lowest() -> None:
    # R1: 1-2 1-0, 3-4 ½-½; R2: 1 half-point bye, 2-3 0-1, 4 absent (zero-point bye).
    # 1: 1.5 points; contributions: opponent 2 (0 points) = 0, the bye = own 1.5 (a VUR):
    #    BH 1.5, Cut-1 cuts the VUR: 0 (cutting the lowest would give 1.5);
    #    SB 0·1 + 1.5·½ = 0.75.
    # 4: ½ then absent after their last round with an opponent: ½ + ½ (a draw) = 1 for
    #    the Buchholz of 3. 3: opponents 4 (1) and 2 (0): BH 1, Cut-1 1, SB 1·½ + 0·1 = 0.5.
    four = Tournament.from_text(
        trf_text(
            "012 Cut Open",
            "XXR 2",
            player_line(1, "One, A", "1.5", ("   2 w 1", "0000 - H")),
            player_line(2, "Two, B", "0.0", ("   1 b 0", "   3 w 0")),
            player_line(3, "Three, C", "1.5", ("   4 w =", "   2 b 1")),
            player_line(4, "Four, D", "0.5", ("   3 b =", "0000 - Z")),
        ),
        source="four.trf",
    )
    table = _table(four, 2)
    assert table[1] == _expected("2", "1.5", "0", "1.5", "0.75")
    assert table[3] == _expected("1", "1.5", "1", "1", "0.5")


def test_a_game_still_to_play_counts_for_neither_player() -> None:
    entries = {rank: list(player.rounds) for rank, player in SIX.players.items()}
    entries[2][2] = RoundEntry(opponent=3, colour="w", code=" ")
    entries[3][2] = RoundEntry(opponent=2, colour="b", code=" ")
    rows = {r.player.rank: r for r in standings(SIX.players, entries, SIX.scoring, 3)}
    assert rows[2].points == Decimal("1.5")
    assert rows[2].games == 2
    assert rows[3].points == Decimal(2)
    assert rows[3].games == 2
    # 2's Buchholz: 5 (1) + 1 (2) = 3; 1's: 4 (1) + 2 (1.5) + 5 (1) = 3.5.
    assert rows[2].buchholz == Decimal(3)
    assert rows[1].buchholz == Decimal("3.5")


def test_what_each_entry_is_for_the_tie_breaks() -> None:
    def kind(opponent: int, colour: str, code: str) -> str:
        return entry_kind(RoundEntry(opponent=opponent, colour=colour, code=code))

    assert kind(3, "w", "1") == Unplayed.PLAYED
    assert kind(3, "b", "D") == Unplayed.PLAYED
    assert kind(3, "w", "+") == Unplayed.NOT_VOLUNTARY
    assert kind(3, "w", "-") == Unplayed.VOLUNTARY
    assert kind(0, "-", "U") == Unplayed.NOT_VOLUNTARY
    assert kind(0, "-", "F") == Unplayed.NOT_VOLUNTARY
    assert kind(0, "-", "+") == Unplayed.NOT_VOLUNTARY  # older TRF(x): the PAB
    assert kind(0, "-", "H") == Unplayed.VOLUNTARY
    assert kind(0, "-", "Z") == Unplayed.VOLUNTARY
    assert kind(3, "w", " ") == Unplayed.PENDING
    assert entry_kind(None) == Unplayed.VOLUNTARY


# -- the tie-breaks a section's regulations name (records 202 / 212, daemon/pairing/tiebreaks.py)


def _with(records: tuple[str, ...], *, ratings: dict[int, int] | None = None) -> Tournament:
    """SIX with these records (after XXR) and ratings."""
    rated = ratings or {}
    lines = [
        player_line(1, "One, A", "2.0", ("   4 w 1", "   2 w 0", "   5 w 1"), rating=rated.get(1)),
        player_line(2, "Two, B", "2.0", ("   5 b =", "   1 b 1", "   3 w ="), rating=rated.get(2)),
        player_line(
            3, "Three, C", "2.5", ("   6 w +", "   4 w 1", "   2 b ="), rating=rated.get(3)
        ),
        player_line(4, "Four, D", "1.0", ("   1 b 0", "   3 b 0", "0000 - U"), rating=rated.get(4)),
        player_line(5, "Five, E", "1.0", ("   2 w =", "0000 - H", "   1 b 0"), rating=rated.get(5)),
        player_line(6, "Six, F", "0.0", ("   3 b -", "0000 - Z"), rating=rated.get(6)),
    ]
    return Tournament.from_text(
        trf_text("012 Hand Open", "XXR 3", *records, *lines), source="six.trf"
    )


def _ranked(tournament: Tournament, codes: tuple[str, ...]) -> list[Standing]:
    tiebreaks, problems = read_tiebreaks(codes)
    assert problems == []
    entries = {rank: player.rounds for rank, player in tournament.players.items()}
    return standings(tournament.players, entries, tournament.scoring, 3, tiebreaks)


def _values(rows: list[Standing]) -> dict[int, tuple[Decimal, ...]]:
    return {row.player.rank: row.tiebreaks for row in rows}


def test_buchholz_cut2_and_median1_as_worked_out_by_hand() -> None:
    # Contributions (see above): 1: 1 2 1; 2: 1 2 2.5; 3: 2.5 (forfeit win, own) 1 2;
    # 4: 2 2.5 1 (the PAB, own); 5: 2, 1 (half-point bye: a VUR), 2; 6: 0 0 0 (VURs).
    # Cut-2 cuts the two least significant (a VUR first): 1: 2; 2: 2.5; 3: 2.5; 4: 2.5;
    #   5: the VUR then a 2: 2. Median-1 cuts the lowest (a VUR first) and the highest:
    #   1: 1; 2: 2; 3: 2; 4: 2; 5: the VUR and a 2: 2.
    rows = _ranked(SIX, ("BH-C2", "BH/M1", "BH#C1"))
    assert _values(rows) == {
        1: _expected("2", "1", "3"),
        2: _expected("2.5", "2", "4.5"),
        3: _expected("2.5", "2", "4.5"),
        4: _expected("2.5", "2", "4.5"),
        5: _expected("2", "2", "4"),
        6: _expected("0", "0", "0"),
    }


def test_progressive_wins_and_colours_as_worked_out_by_hand() -> None:
    # PS, the score after each round summed: 1: 1+1+2 = 4; 2: ½+1½+2 = 4; 3: 1+2+2½ = 5½;
    #   4: 0+0+1 = 1; 5: ½+1+1 = 2½; 6: 0.
    # WIN, rounds worth a win: 1: R1 R3; 2: R2; 3: the forfeit win and R2; 4: the PAB.
    # WON, wins over the board: 1: 2; 2: 1; 3: 1 (the forfeit is not a game); 4, 5, 6: 0.
    # BPG, games with Black over the board: 1: 0; 2: R1 R2; 3: R3; 4: R1 R2; 5: R3; 6: the
    #   forfeit is not one. BWG: only 2's R2.
    rows = _ranked(SIX, ("PS", "WIN", "WON", "BPG", "BWG"))
    assert _values(rows) == {
        1: _expected("4", "2", "2", "0", "0"),
        2: _expected("4", "1", "1", "2", "1"),
        3: _expected("5.5", "2", "1", "1", "0"),
        4: _expected("1", "1", "0", "2", "0"),
        5: _expected("2.5", "0", "0", "1", "0"),
        6: _expected("0", "0", "0", "0", "0"),
    }


def test_average_rating_of_opponents_rounds_half_up_and_leaves_out_the_unrated() -> None:
    # Ratings 1: 2000, 2: 1900, 3: 1800, 4: unrated, 5: 1601, 6: 1500.
    # 1 played 4 (unrated: left out), 2 and 5: (1900 + 1601) / 2 = 1750.5 → 1751.
    # 2 played 5, 1, 3: 5401 / 3 → 1800. 3: the forfeit is no game, 4 unrated, 2: 1900.
    # 4 played 1 and 3 (the PAB is no game): 1900. 5 played 2 and 1: 1950. 6: none, 0.
    rated = _with((), ratings={1: 2000, 2: 1900, 3: 1800, 5: 1601, 6: 1500})
    rows = _ranked(rated, ("ARO",))
    assert _values(rows) == {
        1: _expected("1751"),
        2: _expected("1800"),
        3: _expected("1900"),
        4: _expected("1900"),
        5: _expected("1950"),
        6: _expected("0"),
    }


def test_the_ranking_follows_the_named_tie_breaks_and_ties_share_a_place() -> None:
    # By WIN, 1 (2 wins) goes before 2 (1), 4 (1) before 5 (0): not the default order.
    assert [r.player.rank for r in _ranked(SIX, ("WIN", "BH-M1"))] == [3, 1, 2, 4, 5, 6]
    # By WON alone, 4 and 5 (1 point, no win over the board) share the 4th place.
    rows = {r.player.rank: r.place for r in _ranked(SIX, ("WON",))}
    assert rows == {3: 1, 1: 2, 2: 3, 4: 4, 5: 4, 6: 6}


def test_records_202_and_212_name_the_tie_breaks_and_212_wins() -> None:
    assert _with(("202 WIN, BH/M1",)).tiebreaks == ("WIN", "BH/M1")
    assert _with(("202 WIN",)).tiebreaks_tag == "202"
    for records in (("202 WIN", "212 PTS BPG SB"), ("212 PTS BPG SB", "202 WIN")):
        tournament = _with(records)
        assert tournament.tiebreaks == ("PTS", "BPG", "SB")
        assert tournament.tiebreaks_tag == "212"
    # PTS is the points, which always rank first: left out of the tie-breaks.
    tiebreaks, problems = read_tiebreaks(("PTS", "BPG", "SB"))
    assert [t.code for t in tiebreaks] == ["BPG", "SB"]
    assert problems == []
    assert _with(()).tiebreaks == ()


def test_a_code_dgtcast_does_not_compute_is_one_line_and_left_out() -> None:
    tiebreaks, problems = read_tiebreaks(("DE", "BH-C1", "SB-X9", "BPG/C1", "bh/c2"))
    assert [t.code for t in tiebreaks] == ["BH-C1", "BH-C2"]
    assert problems == [
        'tie-break "DE" is not one dgtcast computes (BH SB PS WIN WON BPG BWG ARO)',
        'tie-break "SB-X9" is not one dgtcast computes (BH SB PS WIN WON BPG BWG ARO)',
        'tie-break "BPG/C1": BPG takes no modifier C1 (none)',
    ]
    with pytest.raises(ValueError, match='"TPR"'):
        parse_tiebreak("TPR")
    assert parse_tiebreak("bh#m1") == TieBreak("BH", "M1")
