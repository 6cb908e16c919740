"""``dgtcast results export --config FILE [--out PATH]``: the round's TRF from the journal.

Reads the tournament (``[pairing] trf``), the round's pairings (``[pairing] pairings``)
and every result decision in the journal (``[storage] path``, read only). Each board's
last decision counts: a confirmed result is written into the round's columns, a result
that is cleared or no longer confirmed is removed; boards the journal says nothing about
keep what the TRF has. Byes are written too. The TRF goes to ``--out`` (``-``: standard
output), by default back to the configured file, atomically. It then says whether the
round is complete: every board has a confirmed result.

The round is the one the journal is in: after ``dgtcast round next`` its last ``round``
record names the round and its pairs, and only the results recorded after it count. In
a ``[[sections]]`` event ``--section NAME`` picks the section (and its TRF).

The journal does not tell whether an e-board saw the whole game, so this command never
turns a result into a "less than one move" code (``W D L``) by itself; codes of that
kind the daemon already wrote for the same result are kept.

Exit codes: 0 written, 1 the journal cannot be read or the TRF not written, 2 bad
configuration, TRF or pairings.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from base.atomic_file import write_atomically
from daemon.config.model import Config, load_config_or_report
from daemon.config.sections import Section
from daemon.journal.records import JournalError, Record
from daemon.journal.store import ROUND, Journal
from daemon.pairing.handoff import RoundResults
from daemon.pairing.pairings import Pairing, read_pairings
from daemon.pairing.trf import PairingFileError, Tournament
from daemon.round.change import RoundChange
from daemon.round.source import first_board

__all__ = [
    "JournalResult",
    "add_arguments",
    "confirmed_results",
    "export_round",
    "run",
    "tournament_now",
]

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalResult:
    """A board's confirmed result, as the arbiter engine journalled it."""

    board: int
    result: str
    source: str
    at: float


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``export``, ``--config`` and ``--out``."""
    parser.add_argument("action", choices=["export"], help="export: write the round's TRF")
    parser.add_argument("--config", required=True, help="the round's TOML configuration")
    parser.add_argument(
        "--out",
        help="where to write the TRF; - for standard output (default: the [pairing] trf file)",
    )
    parser.add_argument("--section", help="the section to export (needed with several)")


def run(args: argparse.Namespace) -> int:
    """Export the round's TRF; see the module docstring for the exit codes."""
    config = load_config_or_report(args.config)
    if config is None:
        return EXIT_BAD_INPUT
    try:
        section = _section(config, args.section)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return EXIT_BAD_INPUT
    missing: Exception | None = None
    records: list[Record] = []
    try:
        records = _records(config)
    except (JournalError, OSError) as exc:
        missing = exc
    try:
        round_number, tournament, pairings, since = _inputs(config, section, records)
    except (PairingFileError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return EXIT_BAD_INPUT
    if missing is not None:
        print(missing, file=sys.stderr)
        return EXIT_FAILED
    numbers = {p.board for p in pairings}
    try:
        results = confirmed_results(
            r for r in records if r.seq > since and r.kind == "result" and r.board in numbers
        )
        core = export_round(tournament, round_number, pairings, results, warn=sys.stderr)
    except PairingFileError as exc:
        print(exc, file=sys.stderr)
        return EXIT_BAD_INPUT
    except (JournalError, OSError) as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED
    return _write(core, args.out, config, section)


def confirmed_results(records: Iterable[Record]) -> dict[int, JournalResult | None]:
    """Each board's final state from ``result`` records (daemon/arbiter/engine.py payloads).

    A board maps to its confirmed result, or to None when its last record clears the
    result (``*``) or is not confirmed; boards without records are left out.
    """
    results: dict[int, JournalResult | None] = {}
    for record in records:
        if record.kind != "result":
            continue
        payload = record.payload
        board = int(payload["board"])
        if payload.get("result") == "*" or not payload.get("confirmed"):
            results[board] = None
            continue
        at = payload.get("confirmed_at")
        results[board] = JournalResult(
            board=board,
            result=str(payload["result"]),
            source=str(payload.get("source", "")),
            at=float(record.at if at is None else at),
        )
    return results


def export_round(
    tournament: Tournament,
    round_number: int,
    pairings: list[Pairing],
    results: dict[int, JournalResult | None],
    *,
    warn: TextIO | None = None,
) -> RoundResults:
    """The round's results applied to the tournament (pure but for the warnings).

    Raises:
        PairingFileError: the pairings do not fit the TRF.
    """
    core = RoundResults(tournament, round_number, pairings)
    games = {p.board for p in pairings if not p.is_bye}
    for board, state in sorted(results.items()):
        if board not in games:
            if state is not None and warn is not None:
                print(f"board {board}: {state.result} is not a game of the pairings", file=warn)
            continue
        if state is None:
            core.receive_result(board, "*", source="", at=0.0)
        else:
            core.receive_result(board, state.result, source=state.source, at=state.at)
    return core


def tournament_now(config: Config, section: Section) -> Tournament:
    """The section's TRF with the confirmed results of the round in play from the journal
    (as ``export`` writes it); the TRF alone when there is no journal yet.

    Raises:
        PairingFileError, ValueError: the TRF or pairings cannot be used.
        JournalError, OSError: the journal cannot be read.
    """
    pairing = section.pairing
    if pairing is None:
        raise ValueError(f"{config.source}: the section has no [pairing] trf")
    if not config.storage.path.exists():
        return Tournament.from_trf(pairing.trf)
    records = _records(config)
    round_number, tournament, pairings, since = _inputs(config, section, records)
    numbers = {p.board for p in pairings}
    results = confirmed_results(
        r for r in records if r.seq > since and r.kind == "result" and r.board in numbers
    )
    return export_round(tournament, round_number, pairings, results).tournament


def _section(config: Config, name: str | None) -> Section:
    if config.pairing is None and all(s.pairing is None for s in config.sections):
        raise ValueError(f"{config.source}: [pairing] needs trf and pairings to export results")
    if name is None:
        if len(config.sections) != 1:
            names = ", ".join(s.name for s in config.sections)
            raise ValueError(f"{config.source}: name the section to export (--section: {names})")
        return config.sections[0]
    for section in config.sections:
        if section.name == name:
            return section
    raise ValueError(f'{config.source}: no section "{name}"')


def _inputs(
    config: Config, section: Section, records: list[Record]
) -> tuple[int, Tournament, list[Pairing], int]:
    """The round, the TRF, the pairings and the record the round's results come after."""
    pairing = section.pairing
    if pairing is None or pairing.pairings is None:
        raise ValueError(f"{config.source}: [pairing] needs trf and pairings to export results")
    tournament = Tournament.from_trf(pairing.trf)
    rounds = [r for r in records if r.kind == ROUND and r.payload.get("section") == section.name]
    change = RoundChange.from_payload(rounds[-1].payload) if rounds else None
    if change is None or change.pairs is None:
        round_number = section.event.round if change is None else change.round
        path = pairing.pairings_for(round_number)
        assert path is not None
        pairings = read_pairings(path, tournament=tournament, first_board=first_board(section))
        return round_number, tournament, pairings, rounds[-1].seq if rounds else 0
    source = f"the journal's round {change.round}"
    pairings = [
        Pairing(board=board, white=white, black=black, line=i, source=source)
        for i, (board, white, black) in enumerate(change.pairs, 1)
    ]
    return change.round, tournament, pairings, rounds[-1].seq


def _records(config: Config) -> list[Record]:
    path = config.storage.path
    if not path.exists():
        raise JournalError(f"{path}: no journal (has the daemon run this round?)")
    with Journal(path, read_only=True) as journal:
        return list(journal.records(kinds={"result", ROUND}))


def _write(core: RoundResults, out: str | None, config: Config, section: Section) -> int:
    pairing = section.pairing
    assert pairing is not None
    data = core.tournament.to_bytes()
    report = sys.stdout
    try:
        if out == "-":
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
            report = sys.stderr
        else:
            write_atomically(Path(out) if out else pairing.trf, data)
    except OSError as exc:
        print(f"cannot write the TRF: {exc}", file=sys.stderr)
        return EXIT_FAILED
    _report(core, report, "standard output" if out == "-" else str(out or pairing.trf))
    return 0


def _report(core: RoundResults, stream: TextIO, where: str) -> None:
    games = [p.board for p in core.pairings.values() if not p.is_bye]
    waiting = core.boards_without_result()
    print(
        f"{where}: round {core.round}, {len(games) - len(waiting)} of {len(games)} boards"
        " have a confirmed result",
        file=stream,
    )
    if waiting:
        boards = ", ".join(str(b) for b in waiting)
        print(f"round {core.round} is not complete: waiting for boards {boards}", file=stream)
    else:
        print(f"round {core.round} is complete", file=stream)
    absent = core.tournament.absent
    if absent:
        ranks = " ".join(str(r) for r in absent)
        print(
            f"note: XXZ {ranks} names players absent from the next round to pair;"
            " check it before pairing the next round",
            file=stream,
        )
