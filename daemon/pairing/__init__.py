"""The hand-off to the pairing program: TRF and pairings in, results out (docs/pairing.md).

* :mod:`~daemon.pairing.trf`: the tournament's FIDE TRF file (TRF-16 with TRF-2026 and
  TRF(x) extension lines), read, checked, updated and written back atomically.
* :mod:`~daemon.pairing.pairings`: the pairing engine's output, and each board's players.
* :mod:`~daemon.pairing.handoff`: confirmed results into the round's TRF columns, the
  MQTT ``<prefix>/results`` payload, and the configured command.
* ``dgtcast results export`` lives in :mod:`~daemon.commands.results`. May import ``base``
  and ``daemon.config``.

Exceptions::

    PairingFileError    a TRF or pairings file that cannot be used: one line per
                        problem, ``file:line:column: what is wrong`` (a peer fault)
    ValueError          a board that is not in the pairings, an unknown result (misuse)
"""

from __future__ import annotations

from daemon.pairing.command import CommandReport, run_command
from daemon.pairing.handoff import (
    HandoffOutcome,
    ResultHandoff,
    RoundResults,
    SideOutcome,
    result_codes,
)
from daemon.pairing.pairings import BoardPlayers, Pairing, boards_from_pairings, read_pairings
from daemon.pairing.scoring import RoundEntry, Scoring
from daemon.pairing.trf import PairingFileError, Player, Tournament

__all__ = [
    "BoardPlayers",
    "CommandReport",
    "HandoffOutcome",
    "Pairing",
    "PairingFileError",
    "Player",
    "ResultHandoff",
    "RoundEntry",
    "RoundResults",
    "Scoring",
    "SideOutcome",
    "Tournament",
    "boards_from_pairings",
    "read_pairings",
    "result_codes",
    "run_command",
]
