"""The daemon's side of the pairing hand-off (issue 6, docs/pairing.md).

With a ``[pairing]`` table (one per section: ``[sections.pairing]``) the round's boards
take their players from the tournament's TRF and the pairing program's output, so
``[[boards]]`` only says which boards have e-boards and on which port; boards of the
pairings that the file does not list get their results by hand. Each result an arbiter
confirms is written into the round's TRF columns at once (atomically), published on MQTT
``<prefix>/results`` (with the board state), and the configured command, if any, is run
on the saved file. A result that is cleared or no longer confirmed is taken out of the
TRF again; at start the TRF is brought in line with the journal's last result decisions
(:meth:`PairingLink.align`). ``dgtcast round next`` gives a section's link the next
round's hand-off (:meth:`PairingLink.next_round`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Collection, Mapping
from typing import Any

from daemon.config.model import Config
from daemon.config.sections import Section
from daemon.journal.store import EVENT_BOARD, ROUND, Journal
from daemon.pairing import PairingFileError, ResultHandoff
from daemon.pairing.tiebreaks import read_tiebreaks
from daemon.round.change import RoundChange, section_after
from daemon.round.source import plan_round

__all__ = ["PairingLink", "apply_pairings", "last_decisions"]

log = logging.getLogger(__name__)


def apply_pairings(
    config: Config, *, skip: Collection[str] = ()
) -> tuple[Config, dict[str, ResultHandoff]]:
    """The configuration with the pairings' players, and each section's hand-off.

    A section with ``[pairing]`` takes its round's players from the ``pairings`` file (see
    :mod:`daemon.round.source`). The hand-off of each such section is returned by section
    name, its byes saved. Sections in ``skip`` (their journal has moved on to a later
    round: the journal says who plays) are left as configured.

    Raises:
        PairingFileError: a TRF or pairings file that cannot be used, or a section's
            games on another section's boards (one line per problem).
    """
    sections: list[Section] = []
    handoffs: dict[str, ResultHandoff] = {}
    for section in config.sections:
        pairing = section.pairing
        if pairing is not None and pairing.tiebreaks is not None:
            _check_tiebreaks(config, section.name, pairing.tiebreaks)
        if section.name in skip or pairing is None:
            sections.append(section)
            continue
        plan = plan_round(section, section.event.round)
        listed = {b.number for b in plan.boards}
        for board in section.boards:
            if board.number not in listed:
                log.warning(
                    "board %d is in [[boards]] but not in the pairings: no players", board.number
                )
        change = RoundChange.from_section(section, pairs=plan.pairs, source=plan.source)
        change = dataclasses.replace(change, boards=plan.boards)
        sections.append(section_after(section, change))
        plan.handoff.save()  # the round's byes
        handoffs[section.name] = plan.handoff
    clashes = _clashes(sections, {s.name for s in config.sections if s.name not in skip})
    if clashes:
        raise PairingFileError([f"{config.source}: {clash}" for clash in clashes])
    return dataclasses.replace(config, sections=tuple(sections)), handoffs


def _clashes(sections: list[Section], paired: Collection[str]) -> list[str]:
    """One line per paired section whose games take boards of another section."""
    owner: dict[int, str] = {}
    for section in sections:
        if section.pairing is None or section.name not in paired:
            for board in section.boards:
                owner.setdefault(board.number, section.name)
    problems = []
    for index, section in enumerate(sections, 1):
        if section.pairing is None or section.name not in paired:
            continue
        taken = {b.number: owner[b.number] for b in section.boards if b.number in owner}
        for other in sorted(set(taken.values())):
            numbers = [str(n) for n, name in sorted(taken.items()) if name == other]
            boards = f"board{'s' if len(numbers) > 1 else ''} {', '.join(numbers)}"
            problems.append(
                f"sections[{index}].pairing.first_board: the pairings put {section.name}'s games"
                f" of round {section.event.round} on {boards} of section {other!r}:"
                " number them from a board no other section uses"
            )
        for board in section.boards:
            owner.setdefault(board.number, section.name)
    return problems


def _check_tiebreaks(config: Config, section: str, codes: Collection[str]) -> None:
    """Refuse a configured tie-break dgtcast does not compute (one line each).

    Raises:
        PairingFileError: the codes dgtcast does not compute.
    """
    _, problems = read_tiebreaks(codes)
    table = "[sections.pairing]" if section else "[pairing]"
    where = f"{config.source}: {table} tiebreaks" + (f" of section {section}" if section else "")
    if problems:
        raise PairingFileError([f"{where}: {problem}" for problem in problems])


class PairingLink:
    """Feeds confirmed results to the hand-off; runs the configured command."""

    def __init__(self, handoff: ResultHandoff, *, section: str = "") -> None:
        self.handoff = handoff
        #: The section's name ("" in an event of one section), for the log.
        self.section = section
        self._written: dict[int, str] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def next_round(self, handoff: ResultHandoff) -> None:
        """Write the results of ``handoff``'s round from now on (its byes saved)."""
        handoff.save()
        self.handoff = handoff
        self._written = {}

    def receive_result(self, board: int, result: Mapping[str, Any]) -> None:
        """A ``result`` decision of the alert engine (a ResultState as JSON, or a clear).

        The TRF gets the board's confirmed result, or a blank when the result was
        cleared or is no longer confirmed (a correction waiting for its confirmation).
        A TRF that cannot be written is logged; the next change or the next start
        writes it (:meth:`align`): no other output waits for it.
        """
        value = str(result["result"]) if result.get("confirmed") else "*"
        if self._written.get(board) == value:
            return
        at = result.get("confirmed_at") or result.get("at")
        try:
            outcome = self.handoff.receive_result(
                board, value, source=str(result.get("source", "")), at=float(at or 0.0)
            )
        except (ValueError, OSError) as exc:
            log.error("board %d: result not written to the TRF: %s", board, exc)
            return
        self._written[board] = value
        if not outcome.changed:  # the TRF held it already (a restart, the same result again)
            log.debug("= board %d: %s already in %s", board, value, self.handoff.trf_path)
            return
        log.info("= board %d: %s written to %s", board, value, self.handoff.trf_path)
        if value != "*" and self.handoff.is_round_complete():
            where = f"{self.section}: " if self.section else ""
            log.info(  # news, not a warning (issue 33, item 5)
                "= %sthe round is complete (round %d): every board has a confirmed result",
                where,
                self.handoff.results.round,
            )
        if self.handoff.command is not None:
            task = asyncio.get_running_loop().create_task(self.handoff.run_command())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def align(self, decided: Mapping[int, Mapping[str, Any]]) -> None:
        """At start: the TRF as the journal has it (each board's last result decision).

        The journal is committed before the TRF is written, so a stop in between (or a
        TRF that could not be written) leaves the TRF behind; this writes what it
        missed. Boards the journal decided nothing about keep what the TRF has (a
        result entered there by hand).
        """
        for board, result in sorted(decided.items()):
            if board not in self.handoff.results.pairings:
                continue
            value = str(result["result"]) if result.get("confirmed") else "*"
            held = self.handoff.results.result_of(board) or "*"
            if held != value:
                log.warning(
                    "= board %d: the TRF had %s, the journal %s: writing %s",
                    board,
                    held,
                    value,
                    value,
                )
            self.receive_result(board, result)


def last_decisions(journal: Journal, link: PairingLink) -> dict[int, Mapping[str, Any]]:
    """Each board's last ``result`` decision in the journal since the link's round began.

    The round began at the section's last ``round`` record (none: the journal's start).
    """
    section = link.section
    since = 0
    for record in journal.records(board=EVENT_BOARD, kinds={ROUND}):
        if str(record.payload.get("section", "")) == section:
            since = record.seq
    boards = set(link.handoff.results.pairings)
    return {
        record.board: record.payload
        for record in journal.records(after=since, kinds={"result"})
        if record.board in boards
    }
