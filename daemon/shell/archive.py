"""Past rounds for spectators, kept in the journal (layer L3).

When a section moves on (:class:`~daemon.shell.rounds.RoundKeeper`), :meth:`ArchiveKeeper.keep`
takes the section's boards from the live hub just before the change (their games as they
ended, PGN included), journals them as one ``round_games`` record (a decision: replays
never read it) and hands them to the broadcast's
:class:`~broadcast.feed.archive.RoundArchive`. At start :meth:`ArchiveKeeper.load` reads
those records back, so past rounds stay browsable after restarts, snapshots included.

A record for the round a section is still in (a crash between the record and the round
change itself) is left out: that round is live again. A later record of the same round
replaces an earlier one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

from broadcast.feed.archive import RoundArchive, round_number
from broadcast.feed.events import encode_json
from broadcast.feed.hub import Hub
from broadcast.feed.messages import board_state_from_json, to_json_dict
from daemon.journal.hold import HeldJournal
from daemon.journal.records import Entry
from daemon.journal.store import EVENT_BOARD, Journal

__all__ = ["ARCHIVE", "ArchiveKeeper"]

log = logging.getLogger(__name__)

#: Journal record kind (a decision): a section's round as it ended, for spectators.
ARCHIVE = "round_games"


class ArchiveKeeper:
    """Fills the spectators' archive of past rounds, and journals what it keeps.

    Args:
        archive: what the broadcast server serves.
        hub: the live hub (the boards as they are).
        writer: the service's journal writer (held and retried when the disk fails).
        wall_clock: time source (epoch seconds).
    """

    def __init__(
        self,
        archive: RoundArchive,
        hub: Hub,
        writer: HeldJournal,
        *,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.archive = archive
        self.hub = hub
        self.writer = writer
        self._wall_clock = wall_clock

    def keep(self, section: str) -> None:
        """Archive the section's round as it stands now (called just before it moves on)."""
        states = [state for state in self.hub.states() if state.section == section]
        rounds = {number for state in states if (number := round_number(state)) is not None}
        if len(rounds) != 1:
            return  # no board with a round number: nothing a spectator could look up
        number = rounds.pop()
        now = self._wall_clock()
        payload = {"section": section, "round": number, "games": to_json_dict(states)}
        if not self.writer.append_many(
            [Entry(board=EVENT_BOARD, kind=ARCHIVE, at=now, payload=payload)]
        ):
            log.warning(
                "= round %d of %s kept in memory: the journal refuses it for now",
                number,
                section or "the event",
            )
        self.archive.keep(section, number, states, now)

    def load(self, journal: Journal, current: Mapping[str, int]) -> int:
        """Read the past rounds from the journal; ``current`` is each section's round now.

        Returns the number of rounds archived.

        Raises:
            JournalDamaged: a record cannot be read.
        """
        for record in journal.records(board=EVENT_BOARD, kinds={ARCHIVE}):
            section = str(record.payload["section"])
            number = int(record.payload["round"])
            if current.get(section) == number:
                continue
            states = [board_state_from_json(encode_json(game)) for game in record.payload["games"]]
            self.archive.keep(section, number, states, record.at)
        return len(self.archive)
