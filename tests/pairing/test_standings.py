"""Standings and FIDE tie-breaks against values worked out by hand (C.07, article 16)."""

from __future__ import annotations

from decimal import Decimal

from daemon.pairing.scoring import RoundEntry
from daemon.pairing.standings import Unplayed, entry_kind, standings
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
