"""``dgtcast lichess setup --config FILE [--rounds N]``: the lichess broadcast of the event.

For each ``[lichess]`` / ``[[lichess]]`` table of the configuration (its ``token`` or
``DGTCAST_LICHESS_TOKEN``, its ``server``): the table's ``broadcast`` is read back from
lichess, or a broadcast is created (named after the event, its section, and its boards
when the table names a range); then one lichess round per event round, named
``Round N`` (``Round N, boards 101-200`` for a table with a board range), starting at the
section's ``round_start`` for the configured round. The ids go into the table's
``broadcast`` and ``rounds`` keys (:mod:`daemon.config.lichess_ids`; the rest of the file
as it was), where the daemon finds them, also while it runs (it reads the lichess tables
again when the file is saved).

Running it again creates nothing: rounds whose ids the table has and lichess still knows
are kept, a round of the broadcast with the wanted name is reused. The number of rounds
is ``--rounds`` or the section's TRF (``XXR`` / tag 142).

Exit codes: 0 done, 1 lichess refused or could not be reached (ids created before that
are written), 2 bad configuration, no lichess table, no token or no number of rounds.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from base.atomic_file import write_atomically
from broadcast.outputs.lichess_setup import (
    ExistingRound,
    LichessBroadcasts,
    LichessSetupError,
    WantedRound,
    plan_rounds,
)
from daemon.config.lichess_ids import with_lichess_ids
from daemon.config.model import LICHESS_TOKEN_ENV, Config, ConfigFile, load_config_or_report
from daemon.config.sections import Section
from daemon.config.tables import FileTables, LichessConfig
from daemon.pairing.trf import PairingFileError, Tournament
from daemon.shell import runtime

__all__ = ["Setup", "add_arguments", "plan_setups", "run", "set_up"]

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``setup``, ``--config`` and ``--rounds``."""
    parser.add_argument("action", choices=["setup"], help="setup: create or reuse, keep ids")
    parser.add_argument("--config", required=True, help="the event's TOML configuration")
    parser.add_argument(
        "--rounds", type=int, metavar="N", help="rounds of the event (default: the TRF's)"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Setup:
    """What one lichess table needs on lichess."""

    position: int  # 0-based, file order
    table: LichessConfig
    token: str
    name: str
    rounds: tuple[WantedRound, ...]


def _section(config: Config, table: LichessConfig) -> Section:
    for section in config.sections:
        if section.name == (table.section or section.name):
            return section
    raise ValueError(f'{config.source}: no section "{table.section}"')


def _round_count(section: Section, rounds: int | None, where: str) -> int:
    if rounds is not None:
        return rounds
    if section.pairing is not None:
        try:
            count = Tournament.from_trf(section.pairing.trf).rounds
        except PairingFileError as exc:
            raise ValueError(str(exc)) from None
        if count:
            return count
    raise ValueError(f"{where}: how many rounds? give --rounds N (or XXR in the section's TRF)")


def plan_setups(config: Config, tables: Sequence[LichessConfig], rounds: int | None) -> list[Setup]:
    """Each table with rounds to set up (a ``push_url`` table has none).

    Raises:
        ValueError: no token, an unknown section, no number of rounds (one line).
    """
    setups = []
    for position, table in enumerate(tables):
        where = f"{config.source}: lichess" + (f"[{position + 1}]" if len(tables) > 1 else "")
        if table.push_url is not None:
            continue
        token = os.environ.get(LICHESS_TOKEN_ENV) or table.token
        if not token:
            raise ValueError(f"{where}.token: required (or set {LICHESS_TOKEN_ENV})")
        section = _section(config, table)
        event = section.event
        boards = "" if table.boards is None else f", boards {table.boards[0]}-{table.boards[1]}"
        name = event.name + (f" - {section.name}" if section.name else "") + boards
        starts = event.round_start
        wanted = tuple(
            WantedRound(
                number=number,
                name=f"Round {number}{boards}",
                starts_at=int(starts.timestamp() * 1000)
                if starts is not None and number == event.round
                else None,
            )
            for number in range(1, _round_count(section, rounds, where) + 1)
        )
        setups.append(Setup(position=position, table=table, token=token, name=name, rounds=wanted))
    return setups


async def set_up(setup: Setup, ids: dict[int, tuple[str, dict[int, str]]]) -> list[str]:
    """Create or reuse the broadcast and rounds of one table; ``ids`` gets them as they
    come (so that what was created before a failure is kept). The lines to print.

    Raises:
        LichessSetupError: lichess refused or could not be reached.
    """
    api = LichessBroadcasts(setup.table.server, setup.token)
    lines = []
    try:
        tour = setup.table.broadcast
        if tour is None:
            tour = await api.create_broadcast(setup.name)
            existing: list[ExistingRound] = []
            lines.append(f'broadcast "{setup.name}": {tour} (created)')
        else:
            name, existing = await api.broadcast(tour)
            lines.append(f'broadcast "{name}": {tour} (kept)')
        configured = {int(n): rid for n, rid in (setup.table.rounds or {}).items()}
        made = ids.setdefault(setup.position, (tour, {}))[1]
        for step in plan_rounds(setup.rounds, existing, configured):
            ident = step.id or await api.create_round(tour, step.round)
            made[step.round.number] = ident
            word = {"keep": "kept", "reuse": "reused", "create": "created"}[step.action]
            lines.append(f"  {step.round.name}: {ident} ({word})")
    finally:
        await api.aclose()
    return lines


def _save(path: Path, ids: dict[int, tuple[str, dict[int, str]]]) -> bool:
    """Write the ids into the file; whether it changed."""
    text = path.read_text(encoding="utf-8")
    new = with_lichess_ids(text, ids, source=str(path))
    if new == text:
        return False
    write_atomically(path, new.encode("utf-8"))
    return True


def run(args: argparse.Namespace) -> int:
    """Set up lichess; see the module docstring for the exit codes."""
    config = load_config_or_report(args.config)
    if config is None:
        return EXIT_BAD_INPUT
    path = Path(args.config)
    tables = FileTables.model_validate(ConfigFile.read(path).data).lichess or []
    try:
        setups = plan_setups(config, tables, args.rounds)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return EXIT_BAD_INPUT
    if not setups:
        print(f"{config.source}: no [[lichess]] table with a section to set up", file=sys.stderr)
        return EXIT_BAD_INPUT
    ids: dict[int, tuple[str, dict[int, str]]] = {}
    failed: LichessSetupError | None = None

    async def all_tables() -> None:
        nonlocal failed
        for setup in setups:
            try:
                print("\n".join(await set_up(setup, ids)))
            except LichessSetupError as exc:
                failed = exc
                return

    runtime.run(all_tables())
    if ids and _save(path, ids):
        print(f"{path}: lichess ids written")
    elif ids:
        print(f"{path}: already holds these ids")
    if failed is not None:
        print(f"dgtcast: {failed}", file=sys.stderr)
        return EXIT_FAILED
    return 0
