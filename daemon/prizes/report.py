"""A section's prize race as people read it: the ceremony's list, the treasurer's CSV, JSON.

* :func:`prize_list`: the text ``dgtcast prizes`` prints for the ceremony: each group's
  winners in place order, with the countback that decided each trophy, then every
  player's cash (one line each, pooled shares named) and the total.
* :func:`prize_csv`: one row per player who receives anything, for the treasurer.
* :func:`race_payload`: the JSON of ``/prizes.json`` (docs/prizes.md), each group's race
  "if the event ended now" with the shares.

Amounts are shown rounded down to the cent (:func:`~daemon.prizes.distribution.cents`).
Pure.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from daemon.prizes.distribution import CashAward, TrophyAward, cents
from daemon.prizes.event import PrizeRace
from daemon.prizes.lists import Tie

__all__ = ["prize_csv", "prize_list", "race_payload"]


def _points(score: Decimal) -> str:
    return str(score.normalize()) if score == score.to_integral_value() else str(score)


def _money(amount: Decimal) -> str:
    return f"${amount:,.2f}"


def _name(race: PrizeRace, rank: int) -> str:
    return race.entrants[rank].name


def _trophy_line(race: PrizeRace, trophy: TrophyAward, countback: Sequence[str]) -> str:
    entrant = race.entrants[trophy.rank]
    decided = ""
    if trophy.decided_by == "starting rank":
        decided = " (countback equal: by starting rank)"
    elif trophy.decided_by:
        index = list(countback).index(trophy.decided_by)
        decided = f" (countback {trophy.decided_by} {_points(entrant.countback[index])})"
    return (
        f"  {trophy.place:>5}  {entrant.name:<30} {_points(entrant.score):>5}  "
        f"{trophy.trophy}{decided}"
    )


def _cash_line(race: PrizeRace, award: CashAward) -> str:
    entrant = race.entrants[award.rank]
    pooled = ""
    if award.pooled_with:
        others = ", ".join(_name(race, rank) for rank in award.pooled_with)
        pooled = f", pooled with {others}"
    return (
        f"  {award.places:>5}  {entrant.name:<30} {_points(entrant.score):>5}  "
        f"{_money(cents(award.amount)):>10}  {award.group}{pooled}"
    )


def prize_list(race: PrizeRace, title: str, countback: Sequence[str]) -> list[str]:
    """The ceremony's prize list, one line each."""
    result = race.distribution
    lines = [f"{title}: prizes after round {race.rounds}"]
    if not race.groups_final:
        lines.append("(rating groups are provisional: their round has not begun)")
    for group in result.races:
        name = group.group.name
        lines += ["", f"{name} ({group.eligible} eligible)"]
        cash = [a for a in result.cash if a.group == name]
        trophies = [t for t in result.trophies if t.group == name]
        lines += [_cash_line(race, award) for award in cash]
        lines += [_trophy_line(race, trophy, countback) for trophy in trophies]
        if not cash and not trophies:
            lines.append("  (nobody)")
    fund = sum((cents(a.amount) for a in result.cash), Decimal(0))
    paid = len({award.rank for award in result.cash})
    lines += ["", f"Total paid: {_money(fund)} to {paid} player{'' if paid == 1 else 's'}"]
    for removal in result.removals:
        left = ", ".join(removal.left)
        lines.append(
            f"  {_name(race, removal.rank)}: kept {removal.kept} ({_money(cents(removal.value))}),"
            f" left {left}"
        )
    return lines


def prize_csv(race: PrizeRace, section: str) -> str:
    """The treasurer's CSV: one row per cash prize and per trophy."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["section", "start_rank", "name", "points", "group", "places", "amount", "prize", "note"]
    )
    result = race.distribution
    for award in result.cash:
        entrant = race.entrants[award.rank]
        note = "pooled with " + " ".join(str(r) for r in award.pooled_with)
        writer.writerow(
            [section, entrant.rank, entrant.name, _points(entrant.score), award.group,
             award.places, f"{cents(award.amount):.2f}", "cash",
             note if award.pooled_with else ""]
        )  # fmt: skip
    for trophy in result.trophies:
        entrant = race.entrants[trophy.rank]
        note = f"countback: {trophy.decided_by}" if trophy.decided_by else ""
        writer.writerow(
            [section, entrant.rank, entrant.name, _points(entrant.score), trophy.group,
             trophy.place, "", trophy.trophy, note]
        )  # fmt: skip
    return out.getvalue()


def _number(value: Decimal) -> float | int:
    return int(value) if value == value.to_integral_value() else float(value)


def _tie(race: PrizeRace, tie: Tie) -> dict[str, Any]:
    return {
        "places": tie.places,
        "points": _number(tie.score),
        "share": float(cents(tie.share)),
        "players": [
            {"start_rank": rank, "name": _name(race, rank), "rating": race.entrants[rank].rating}
            for rank in tie.players
        ],
    }


def race_payload(race: PrizeRace, section: str) -> dict[str, Any]:
    """One section's entry of ``/prizes.json``."""
    result = race.distribution
    return {
        "section": section,
        "after_round": race.rounds,
        "groups_final": race.groups_final,
        "groups": [
            {
                "name": group.group.name,
                "eligible": group.eligible,
                "places": [
                    {"amount": float(place.amount), "trophy": place.trophy}
                    for place in group.group.places
                ],
                "race": [_tie(race, tie) for tie in group.conditional],
                "final": [_tie(race, tie) for tie in group.final],
            }
            for group in result.races
        ],
        "cash": [
            {
                "start_rank": award.rank,
                "name": _name(race, award.rank),
                "group": award.group,
                "places": award.places,
                "amount": float(cents(award.amount)),
                "pooled_with": list(award.pooled_with),
            }
            for award in result.cash
        ],
        "trophies": [
            {
                "start_rank": trophy.rank,
                "name": _name(race, trophy.rank),
                "group": trophy.group,
                "place": trophy.place,
                "trophy": trophy.trophy,
                "decided_by": trophy.decided_by,
            }
            for trophy in result.trophies
        ],
        "removals": [
            {"start_rank": r.rank, "kept": r.kept, "left": list(r.left)} for r in result.removals
        ],
    }
