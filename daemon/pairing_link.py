"""The daemon's side of the pairing hand-off (issue 6, docs/pairing.md).

With a ``[pairing]`` table the round's boards take their players from the tournament's TRF
and the pairing program's output, so ``[[boards]]`` only says which boards have e-boards
and on which port; boards of the pairings that the file does not list get their results by
hand. Each result an arbiter confirms is written into the round's TRF columns at once
(atomically), published on MQTT ``<prefix>/results`` (with the board state), and the
configured command, if any, is run on the saved file. A result that is cleared or no longer
confirmed is taken out of the TRF again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from daemon.config import BoardConfig, Config
from daemon.pairing import ResultHandoff, Tournament, boards_from_pairings, read_pairings

__all__ = ["PairingLink", "apply_pairings"]

log = logging.getLogger(__name__)


def apply_pairings(config: Config) -> tuple[Config, ResultHandoff | None]:
    """The configuration with the pairings' players, and the hand-off (None without pairing).

    Raises:
        PairingFileError: a TRF or pairings file that cannot be used (one line per problem).
        ValueError: a configuration the hand-off cannot serve (several rounds at once).
    """
    pairing = config.pairing
    if pairing is None or pairing.pairings is None:
        return config, None
    rounds = {section.event.round for section in config.sections}
    if len(config.sections) != 1 or len(rounds) != 1:
        raise ValueError("[pairing] serves one section: the TRF is one tournament's")
    tournament = Tournament.from_trf(pairing.trf)
    pairings = read_pairings(pairing.pairings, tournament=tournament)
    section = config.sections[0]
    listed = {board.number: board for board in section.boards}
    boards: list[BoardConfig] = []
    for players in boards_from_pairings(tournament, pairings):
        base = listed.pop(players.board, None) or BoardConfig(number=players.board)
        boards.append(base.model_copy(update=players.board_fields()))
    for number in sorted(listed):
        log.warning("board %d is in [[boards]] but not in the pairings: no players", number)
        boards.append(listed[number])
    section = dataclasses.replace(section, boards=tuple(boards))
    handoff = ResultHandoff(
        tournament,
        section.event.round,
        pairings,
        pairing.trf,
        command=pairing.command,
    )
    handoff.save()  # the round's byes
    return dataclasses.replace(config, sections=(section,)), handoff


class PairingLink:
    """Feeds confirmed results to the hand-off; runs the configured command."""

    def __init__(self, handoff: ResultHandoff) -> None:
        self.handoff = handoff
        self._written: dict[int, str] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def receive_result(self, board: int, result: Mapping[str, Any]) -> None:
        """A ``result`` decision of the alert engine (a ResultState as JSON)."""
        value = str(result["result"]) if result.get("confirmed") else "*"
        if self._written.get(board, "*") == value:
            return
        try:
            outcome = self.handoff.receive_result(
                board, value, source=str(result["source"]), at=float(result["at"])
            )
        except (ValueError, OSError) as exc:
            log.error("board %d: result not written to the TRF: %s", board, exc)
            return
        self._written[board] = value
        log.info("= board %d: %s written to %s", board, value, self.handoff.trf_path)
        if self.handoff.is_round_complete():
            log.warning("= the round is complete: every board has a confirmed result")
        if outcome.changed and self.handoff.command is not None:
            task = asyncio.get_running_loop().create_task(self.handoff.run_command())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
