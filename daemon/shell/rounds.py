"""Rounds in the running daemon: ``dgtcast round next`` without a restart (layer L3).

:class:`RoundKeeper` carries out the arbiter's "next round" for one section or all of
them:

1. **Pending results first.** Every board of the section with players and without a
   confirmed result is listed (``board 4: 1-0 not confirmed``, ``board 6: no result``).
   With any, the change is refused unless ``force`` is given: an arbiter confirms the
   round's results before pairing the next one, and a forced change leaves those boards
   out of the TRF (the round's PGN keeps what was played).
2. **The next round's players** come from the section's TRF and pairings
   (:mod:`daemon.round.source`); a section without ``[pairing]`` cannot move on.
3. **One journal record per section** (:mod:`daemon.round.change`): the core resets the
   section's boards to "waiting for the start position" with the new players and tags,
   the broadcast shows them, and the section's TRF hand-off moves to the new round.

What the old round wrote stays: its PGN folder (``round-N/``), its TRF columns, its
journal records. The round starts when the section's first clock is started (the new
default time of FIDE 6.7 counts from then, not from the change).

At a journal's first start the configured round of every section is recorded the same
way (:meth:`RoundKeeper.record_start`), so a restart rebuilds who plays from the journal;
after a restart :meth:`RoundKeeper.restore_links` gives each section's TRF hand-off the
round the journal is in.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from broadcast.feed.commands import CommandReply
from daemon.journal.inputs import INPUT_KINDS
from daemon.journal.store import EVENT_BOARD, ROUND, Journal
from daemon.links.pairing import PairingLink
from daemon.pairing import PairingFileError, ResultHandoff
from daemon.round.change import RoundChange
from daemon.round.core import RoundCore
from daemon.round.inputs import RoundChangeInput
from daemon.round.source import LastRoundPlayed, handoff_from_pairs, plan_round
from daemon.shell.service import RoundService

__all__ = ["RoundKeeper", "pending_results"]

log = logging.getLogger(__name__)


def pending_results(core: RoundCore, section: str) -> list[dict[str, Any]]:
    """The section's boards with players and no confirmed result, in board order."""
    pending: list[dict[str, Any]] = []
    for number, game in sorted(core.games.items()):
        if game.section.name != section or not (game.config.white or game.config.black):
            continue
        state = core.engine.result_of(number)
        if state is None or not state.confirmed:
            result = None if state is None else state.result
            pending.append({"section": section, "board": number, "result": result})
    return pending


def _rounds(count: int) -> str:
    return f"{count} round{'' if count == 1 else 's'}"


def _pending_text(item: Mapping[str, Any]) -> str:
    result = item["result"]
    state = "no result" if result is None else f"{result} not confirmed"
    return f"board {item['board']}: {state}"


class RoundKeeper:
    """Moves sections on to their next round in the running daemon.

    Args:
        core: the round core (read only: changes go through the service).
        service: journals and applies the round change.
        links: each section's TRF hand-off, by section name.
        wall_clock: time source (epoch seconds).
        listeners: called after a section changed round (section name, round).
        before_change: called just before a section changes round (section name).
    """

    def __init__(
        self,
        core: RoundCore,
        service: RoundService,
        links: dict[str, PairingLink],
        *,
        wall_clock: Callable[[], float] = time.time,
        listeners: Sequence[Callable[[str, int], None]] = (),
        before_change: Sequence[Callable[[str], None]] = (),
    ) -> None:
        self.core = core
        self.service = service
        self.links = links
        self._wall_clock = wall_clock
        #: Called after a section changed round (section name, round).
        self.listeners = list(listeners)
        #: Called just before a section changes round (section name): its old round is
        #: still in the hub (the spectators' archive keeps it).
        self.before_change = list(before_change)

    def sections(self, name: str) -> list[str]:
        """The sections ``name`` selects ("" = every section)."""
        names = [section.name for section in self.core.config.sections]
        return names if not name else [n for n in names if n == name]

    def next_round(self, section: str = "", *, force: bool = False) -> CommandReply:
        """Move ``section`` ("" = every section) to its next round; the arbiter's reply."""
        names = self.sections(section)
        if not names:
            return CommandReply(ok=False, reason=f'no section "{section}"')
        pending = [item for name in names for item in pending_results(self.core, name)]
        if pending and not force:
            shown = "; ".join(_pending_text(item) for item in pending)
            return CommandReply(
                ok=False,
                reason=f"results not confirmed: {shown}. Confirm them, or force the change",
                details={"pending": pending},
            )
        try:
            plans = {name: self._plan(name) for name in names}
        except PairingFileError as exc:
            return CommandReply(ok=False, reason=self._refusal(names, exc), details={})
        if pending:
            shown = "; ".join(_pending_text(item) for item in pending)
            log.warning("= moving on by force; left out of the TRF: %s", shown)
        changed = [self._change(name, change, handoff) for name, (change, handoff) in plans.items()]
        return CommandReply(ok=True, details={"sections": changed, "pending": pending})

    def _refusal(self, names: list[str], problem: PairingFileError) -> str:
        """Why the sections cannot move on; "the event is over" once every section of
        the event has played its last round (docs/tournament.md)."""
        if not isinstance(problem, LastRoundPlayed):
            return "; ".join(problem.problems)
        over = {name: rounds for name in self.sections("") if (rounds := self._over(name))}
        if len(over) == len(self.sections("")):
            if list(over) == [""]:
                return f"the event is over: {_rounds(over[''])} played"
            played = "; ".join(f"{name}: {_rounds(rounds)}" for name, rounds in over.items())
            return f"the event is over: every section has played its last round ({played})"
        done = [f"{n} has played its last round ({_rounds(over[n])})" for n in names if n in over]
        if len(names) > 1:
            done.append("move the other sections on with --section NAME")
        return "; ".join(done)

    def _over(self, name: str) -> int | None:
        """The section's number of rounds when it has played the last one, else None."""
        try:
            self._plan(name)
        except LastRoundPlayed as last:
            return last.rounds
        except PairingFileError:
            return None
        return None

    def _plan(self, name: str) -> tuple[RoundChange, ResultHandoff]:
        section = next(s for s in self.core.config.sections if s.name == name)
        round_number = section.event.round + 1
        plan = plan_round(section, round_number)
        others = {n: g.section.name for n, g in self.core.games.items() if g.section.name != name}
        clashes = [
            f"{name or 'the event'}: board {b.number} of round {round_number} is a board of"
            f" section {others[b.number]!r}: set first_board in its [sections.pairing]"
            for b in plan.boards
            if b.number in others
        ]
        if clashes:
            raise PairingFileError(clashes)
        change = RoundChange(
            section=name,
            round=round_number,
            round_start=None,  # the section's first clock started starts it (FIDE 6.6)
            date=dt.datetime.fromtimestamp(self._wall_clock()).astimezone().date().isoformat(),
            boards=plan.boards,
            pairs=plan.pairs,
            source=plan.source,
        )
        return change, plan.handoff

    def _change(self, name: str, change: RoundChange, handoff: ResultHandoff) -> dict[str, Any]:
        for before in self.before_change:
            before(name)
        self.service.receive(RoundChangeInput(at=self._wall_clock(), change=change))
        link = self.links.get(name)
        if link is None:
            link = self.links[name] = PairingLink(handoff, section=name)
            handoff.save()
        else:
            link.next_round(handoff)
        shown = name or "the event"
        log.info(
            "= %s moves on to round %d: %d boards, players from %s",
            shown,
            change.round,
            len(change.boards),
            change.source,
        )
        for listener in self.listeners:
            listener(name, change.round)
        return {"section": name, "round": change.round, "boards": len(change.boards)}

    def record_start(self, journal: Journal) -> None:
        """Record each section's configured round in a journal that holds no input yet."""
        if next(journal.records(kinds=INPUT_KINDS), None) is not None:
            return  # rounds recorded, or a journal written before rounds were
        for section in self.core.config.sections:
            link = self.links.get(section.name)
            pairs = None
            if link is not None:
                pairs = [
                    (p.board, p.white, p.black) for p in link.handoff.results.pairings.values()
                ]
            change = RoundChange.from_section(section, pairs=pairs, source="configuration")
            self.service.receive(RoundChangeInput(at=self._wall_clock(), change=change))

    def restore_links(self, journal: Journal) -> None:
        """After a replay: each section's TRF hand-off for the round the journal is in.

        Raises:
            PairingFileError: the TRF no longer fits the journal's round.
        """
        last: dict[str, RoundChange] = {}
        for record in journal.records(board=EVENT_BOARD, kinds={ROUND}):
            recorded = RoundChange.from_payload(record.payload)
            last[recorded.section] = recorded
        for section in self.core.config.sections:
            change = last.get(section.name)
            link = self.links.get(section.name)
            if change is None or section.pairing is None or change.pairs is None:
                continue
            if link is not None and link.handoff.results.round == change.round:
                continue
            handoff = handoff_from_pairs(section.pairing, change.round, change.pairs)
            if link is None:
                self.links[section.name] = PairingLink(handoff, section=section.name)
            else:
                link.next_round(handoff)
            log.info(
                "= %s: results go to round %d of %s",
                section.name or "the event",
                change.round,
                section.pairing.trf,
            )
