"""A section's prize race from its TRF: entrants, rating groups and the distribution.

The standings come from :func:`daemon.pairing.standings.standings` with the countback's
tie-breaks (PS, BH, SB by default), over the rounds the TRF has results for: a game still
to play counts for nobody yet, so the race shown during a round is the one "if the event
ended now". Birth dates and sex come from the TRF's columns 70-79 and 10 (``w``: a girls'
group); the rating that counts from the ratings CSV when there is one
(:mod:`daemon.prizes.ratings`), else the TRF's.

Rating groups are formed from the rated players who took part in rounds 1 to
``groups_after`` (an entry in one of them, a bye included); before any of those rounds
has an entry, from every rated player of the TRF: such a race is marked provisional
(:attr:`PrizeRace.groups_final`). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from daemon.pairing.standings import standings
from daemon.pairing.tiebreaks import parse_tiebreak
from daemon.pairing.trf import Tournament
from daemon.pairing.trf_reader import Player
from daemon.prizes.distribution import Distribution, distribute
from daemon.prizes.groups import birth_date, rating_groups
from daemon.prizes.lists import Entrant
from daemon.prizes.ratings import Ratings
from daemon.prizes.rules import PrizeRules

__all__ = ["PrizeRace", "entrants", "played_rounds", "prize_race"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PrizeRace:
    """A section's prizes after ``rounds`` rounds.

    Attributes:
        rounds: the rounds counted.
        entrants: every player, by starting rank.
        distribution: who wins what if the event ended now.
        groups_final: False while rating groups are formed from every rated player
            because round ``groups_after`` has not begun.
    """

    rounds: int
    entrants: dict[int, Entrant]
    distribution: Distribution
    groups_final: bool = True


def played_rounds(tournament: Tournament) -> int:
    """The last round any player has an entry for (0 before round 1)."""
    return max(
        (
            number
            for player in tournament.players.values()
            for number, entry in enumerate(player.rounds, start=1)
            if entry is not None
        ),
        default=0,
    )


def _grouped(
    tournament: Tournament, rules: PrizeRules, rating: dict[int, int | None]
) -> tuple[dict[int, int], bool]:
    """Each rated player's rating group, and whether the groups are final."""
    if rules.groups_after is None:
        return {}, True
    after = rules.groups_after

    def took_part(player: Player) -> bool:
        return any(player.entry(number) is not None for number in range(1, after + 1))

    members = {rank for rank, player in tournament.players.items() if took_part(player)}
    final = bool(members)
    members = members or set(tournament.players)
    field = {rank: rating[rank] for rank in members}
    return rating_groups(field, rules.rating_groups), final


def entrants(
    tournament: Tournament, rules: PrizeRules, rounds: int, ratings: Ratings | None = None
) -> tuple[dict[int, Entrant], bool]:
    """Every player as the prizes see them after ``rounds`` rounds, and whether the
    rating groups are final.

    Raises:
        ValueError: a countback code dgtcast does not compute (the configuration checks).
    """
    countback = tuple(parse_tiebreak(code) for code in rules.countback)
    entries = {rank: player.rounds for rank, player in tournament.players.items()}
    rows = standings(tournament.players, entries, tournament.scoring, rounds, countback)
    rating = {
        rank: ratings.rating_of(player) if ratings is not None else player.rating
        for rank, player in tournament.players.items()
    }
    groups, final = _grouped(tournament, rules, rating)
    found = {
        row.player.rank: Entrant(
            rank=row.player.rank,
            name=row.player.name,
            score=row.points,
            countback=row.tiebreaks,
            rating=rating[row.player.rank],
            rating_group=groups.get(row.player.rank),
            born=birth_date(row.player.birth_date),
            girl=row.player.sex.lower() in ("w", "f"),
        )
        for row in rows
    }
    return dict(sorted(found.items())), final


def prize_race(
    tournament: Tournament,
    rules: PrizeRules,
    rounds: int | None = None,
    ratings: Ratings | None = None,
) -> PrizeRace:
    """Who wins what after ``rounds`` rounds (default: every round with an entry)."""
    counted = played_rounds(tournament) if rounds is None else rounds
    players, final = entrants(tournament, rules, counted, ratings)
    distribution = distribute(
        rules.groups,
        list(players.values()),
        countback=rules.countback,
        one_cash_prize=rules.one_cash_prize,
    )
    return PrizeRace(
        rounds=counted, entrants=players, distribution=distribution, groups_final=final
    )
