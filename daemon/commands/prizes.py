"""``dgtcast prizes --config FILE [--section NAME] [--csv] [--after N]``: the prize list.

For the ceremony: each section with ``[prizes]`` (or ``[sections.prizes]``), its prize
groups' winners in place order with the countback that decided each trophy, every
player's cash (one prize each, pooled shares named) and the total; ``--csv`` writes one
row per prize for the treasurer instead. The standings come from the section's TRF with
the confirmed results of the round in play that the journal holds (as ``dgtcast results
export`` writes them; the TRF alone before the daemon has run); the ratings that count
from the ``ratings`` CSV when one is configured (docs/prizes.md).

``--after N`` counts rounds 1 to N only (default: every round the TRF has an entry for).

Exit codes: 0 printed, 1 the journal cannot be read, 2 bad configuration, TRF, pairings
or ratings file, or no ``[prizes]``.
"""

from __future__ import annotations

import argparse
import sys

from daemon.commands.results import tournament_now
from daemon.config.model import Config, load_config_or_report
from daemon.config.sections import Section
from daemon.journal.records import JournalError
from daemon.pairing.trf import PairingFileError
from daemon.prizes.event import PrizeRace, prize_race
from daemon.prizes.ratings import RatingsFileError, load_ratings
from daemon.prizes.report import prize_csv, prize_list

__all__ = ["add_arguments", "run", "section_race"]

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config``, ``--section``, ``--csv`` and ``--after``."""
    parser.add_argument("--config", required=True, help="the event's TOML configuration")
    parser.add_argument("--section", help="only this section (default: every one with prizes)")
    parser.add_argument("--csv", action="store_true", help="one CSV row per prize, for payment")
    parser.add_argument(
        "--after", type=int, metavar="N", help="count rounds 1 to N (default: every round)"
    )


def section_race(config: Config, section: Section, after: int | None = None) -> PrizeRace:
    """A section's prize race now (see the module docstring).

    Raises:
        PairingFileError, RatingsFileError, ValueError: bad input (exit 2).
        JournalError, OSError: the journal cannot be read (exit 1).
    """
    rules = config.prizes[section.name]
    ratings = load_ratings(rules.ratings, rules.rating_systems)
    return prize_race(tournament_now(config, section), rules, after, ratings)


def _sections(config: Config, name: str | None) -> list[Section]:
    chosen = [s for s in config.sections if s.name in config.prizes]
    if name is not None:
        chosen = [s for s in chosen if s.name == name]
        if not chosen:
            raise ValueError(f'{config.source}: no section "{name}" with [sections.prizes]')
    if not chosen:
        raise ValueError(f"{config.source}: no [prizes] table: nothing to award (docs/prizes.md)")
    return chosen


def run(args: argparse.Namespace) -> int:
    """Print the prize list; see the module docstring for the exit codes."""
    config = load_config_or_report(args.config)
    if config is None:
        return EXIT_BAD_INPUT
    try:
        sections = _sections(config, args.section)
        races = [(section, section_race(config, section, args.after)) for section in sections]
    except (PairingFileError, RatingsFileError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return EXIT_BAD_INPUT
    except (JournalError, OSError) as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED
    for index, (section, race) in enumerate(races):
        if args.csv:
            text = prize_csv(race, section.name)
            sys.stdout.write(text if index == 0 else text.split("\n", 1)[1])
            continue
        title = section.event.name + (f" — {section.name}" if section.name else "")
        countback = config.prizes[section.name].countback
        print("\n".join(([""] if index else []) + prize_list(race, title, countback)))
    return 0
