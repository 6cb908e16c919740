"""A section's standings from its TRF: points and FIDE tie-breaks (pure).

Points follow the section's scoring (:class:`~daemon.pairing.scoring.Scoring`: FIDE's
1 / ½ / 0 unless ``XXS`` or tag ``162`` says otherwise). The tie-breaks are those the
section's regulations name (:mod:`daemon.pairing.tiebreaks`), by default, in this order,
these of the FIDE Tie-Break Regulations (Handbook C.07, in force from 1 August 2024):

* **Buchholz Cut-1** (BH-C1): Buchholz without its least significant contribution;
* **Buchholz** (BH): the sum of the opponents' scores;
* **Sonneborn-Berger** (SB): each opponent's score times the points scored against them.

BH-C1, BH and SB are always computed (their fields of :class:`Standing`); the ranking
uses :attr:`Standing.tiebreaks`.

Unplayed rounds (C.07 article 16), as the FIDE Technical Commission's reference
implementation (TieBreakServer) computes them:

* a round the participant did not play over the board (a forfeit either way, a bye, an
  absence) counts, for the participant's own BH and SB, as a game against a *dummy
  opponent* with the participant's own score; SB multiplies it by the points the round
  gave (a forfeit win 1, a half-point bye ½);
* an opponent's score is their points, except that the rounds after their last round
  that was not a *voluntarily unplayed round* (VUR: a half- or zero-point bye, an
  absence) in which they had no opponent count as draws (a withdrawn player);
* the VURs are forfeit losses, half- and zero-point byes and absences; a forfeit win,
  the pairing-allocated bye and a full-point bye are not. A cut (Cut-n, Median-n) cuts
  VURs' contributions first (the lowest one first), then the lowest others.

A game still to play (an opponent and no result) counts for neither player yet: the
standings are those of the results known. ``W D L`` (a game of less than one move) count
as played games. Ties left after the last tie-break share a place; the table lists them
by starting rank.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from daemon.pairing.scoring import GAME_CODES, RoundEntry, Scoring
from daemon.pairing.tiebreaks import (
    DEFAULT_TIEBREAKS,
    Contribution,
    TieBreak,
    average_rating,
    cut,
)
from daemon.pairing.trf_reader import Player

__all__ = ["Standing", "Unplayed", "entry_kind", "standings"]

_ZERO = Decimal(0)


class Unplayed:
    """What an entry is for the tie-breaks: one of these words (see :func:`entry_kind`)."""

    PLAYED = "played"  # a game over the board, with an opponent
    NOT_VOLUNTARY = "unplayed"  # forfeit win, pairing-allocated bye, full-point bye
    VOLUNTARY = "vur"  # forfeit loss, half- or zero-point bye, absence (C.07 art. 16)
    PENDING = "pending"  # a game still to play: not counted yet


def entry_kind(entry: RoundEntry | None) -> str:
    """What a round entry is for the tie-breaks (an :class:`Unplayed` word)."""
    if entry is None:
        return Unplayed.VOLUNTARY  # a blank round: absent (a zero-point bye)
    if entry.is_pending:
        return Unplayed.PENDING
    result = entry.result
    if entry.opponent != 0 and result in GAME_CODES:
        return Unplayed.PLAYED
    if entry.opponent != 0:
        return Unplayed.NOT_VOLUNTARY if result == "+" else Unplayed.VOLUNTARY
    # 0000 - U / F (and older TRF(x)'s 0000 - + for the pairing-allocated bye)
    return Unplayed.NOT_VOLUNTARY if result in ("U", "F", "+") else Unplayed.VOLUNTARY


@dataclass(frozen=True, slots=True, kw_only=True)
class Standing:
    """One row of the standings."""

    place: int  # 1-based; tied players share it
    player: Player
    points: Decimal
    buchholz_cut1: Decimal
    buchholz: Decimal
    sonneborn_berger: Decimal
    tiebreaks: tuple[Decimal, ...] = ()  # the ranking's tie-breaks, in their order
    games: int  # rounds counted (games played or not, results known)


@dataclass(frozen=True, slots=True)
class _Round:
    number: int
    entry: RoundEntry | None
    kind: str
    points: Decimal


def _counted(entries: Sequence[RoundEntry | None], rounds: int, scoring: Scoring) -> list[_Round]:
    """The rounds 1..``rounds`` of one player that count (games still to play left out)."""
    counted = []
    for number in range(1, rounds + 1):
        entry = entries[number - 1] if number <= len(entries) else None
        kind = entry_kind(entry)
        if kind != Unplayed.PENDING:
            counted.append(_Round(number, entry, kind, scoring.points_for(entry)))
    return counted


def _adjusted_score(counted: list[_Round], draw: Decimal) -> Decimal:
    """A player's score as an opponent's Buchholz counts it (withdrawals as draws)."""
    last = max((r.number for r in counted if r.kind != Unplayed.VOLUNTARY), default=0)
    total = _ZERO
    for played in counted:
        has_opponent = played.entry is not None and played.entry.opponent != 0
        total += played.points if played.number <= last or has_opponent else draw
    return total


def standings(
    players: Mapping[int, Player],
    entries: Mapping[int, Sequence[RoundEntry | None]],
    scoring: Scoring,
    rounds: int,
    tiebreaks: Sequence[TieBreak] = DEFAULT_TIEBREAKS,
) -> list[Standing]:
    """The standings over rounds 1..``rounds``, ranked by points then ``tiebreaks``.

    Args:
        players: by starting rank.
        entries: each player's rounds (round r at index r - 1; missing: blank).
        scoring: the points of each result.
        rounds: how many rounds count.
        tiebreaks: the tie-breaks, in order (:mod:`daemon.pairing.tiebreaks`).
    """
    counted = {rank: _counted(entries.get(rank, ()), rounds, scoring) for rank in players}
    points = {rank: sum((r.points for r in rows), _ZERO) for rank, rows in counted.items()}
    draw = scoring.values["WD"]
    adjusted = {rank: _adjusted_score(rows, draw) for rank, rows in counted.items()}
    win = scoring.values["WW"]
    rows: list[tuple[tuple[Decimal, ...], Standing]] = []
    for rank, player in players.items():
        contributions: list[Contribution] = []
        sb = _ZERO
        for played in counted[rank]:
            opponent = played.entry.opponent if played.entry is not None else 0
            if played.kind == Unplayed.PLAYED and opponent in adjusted:
                contribution = Contribution(adjusted[opponent], False)
            else:
                voluntary = played.kind == Unplayed.VOLUNTARY
                contribution = Contribution(points[rank], voluntary)
            contributions.append(contribution)
            sb += contribution.value * played.points
        bh = cut(contributions, 0, 0)
        computed = tuple(
            _value(tiebreak, contributions, sb, counted[rank], players, win)
            for tiebreak in tiebreaks
        )
        standing = Standing(
            place=0,
            player=player,
            points=points[rank],
            buchholz_cut1=cut(contributions, 1, 0),
            buchholz=bh,
            sonneborn_berger=sb,
            tiebreaks=computed,
            games=len(counted[rank]),
        )
        rows.append(((standing.points, *computed), standing))
    rows.sort(key=lambda row: (tuple(-v for v in row[0]), row[1].player.rank))
    placed: list[Standing] = []
    for index, (key, standing) in enumerate(rows):
        shared = index > 0 and rows[index - 1][0] == key
        place = placed[-1].place if shared else index + 1
        placed.append(dataclasses.replace(standing, place=place))
    return placed


def _value(
    tiebreak: TieBreak,
    contributions: Sequence[Contribution],
    sb: Decimal,
    counted: Sequence[_Round],
    players: Mapping[int, Player],
    win: Decimal,
) -> Decimal:
    """One tie-break of one player (a code of :data:`~daemon.pairing.tiebreaks.SUPPORTED`)."""
    name = tiebreak.name
    if name == "BH":
        return cut(contributions, tiebreak.low_cut, tiebreak.high_cut)
    if name == "SB":
        return sb
    if name == "PS":
        total, progressive = _ZERO, _ZERO
        for played in counted:
            total += played.points
            progressive += total
        return progressive
    if name == "WIN":
        return Decimal(sum(1 for played in counted if played.points == win))
    games = [played for played in counted if played.kind == Unplayed.PLAYED]
    if name == "ARO":
        ratings = [
            rating
            for played in games
            if played.entry is not None
            and (opponent := players.get(played.entry.opponent)) is not None
            and (rating := opponent.rating)
        ]
        return average_rating(ratings)
    black = [played for played in games if played.entry is not None and played.entry.colour == "b"]
    if name == "BPG":
        return Decimal(len(black))
    won = games if name == "WON" else black  # WON, or BWG
    return Decimal(sum(1 for p in won if p.entry is not None and p.entry.result in "1W"))
