"""Hand confirmed results to the pairing program: the round's TRF columns, and a payload.

:class:`RoundResults` is the pure core: the tournament, the round's number and its
pairings go in; each confirmed result is written into the round's columns of both
players' ``001`` lines (opponent, scheduled colour, result code) and their points are
recomputed (scoring from ``XXS``/``162`` if present, else FIDE 1/½/0, Laws 10.1).
:class:`ResultHandoff` is the shell: it saves the TRF atomically after every change and
can run a configured command on it (e.g. the pairing engine), without blocking.

Result codes (docs/pairing.md, "Result codes", has the full table):

* ``1-0`` ``0-1`` ``1/2-1/2``: ``1 0``, ``0 1``, ``= =``. When the daemon knows that
  fewer than two plies were made (``moves_played`` < 2: not both players made a move),
  the game "lasted less than one move": ``W L``, ``L W``, ``D D`` (counted as played
  for pairing, not rated). A game that never started because a player was absent is a
  forfeit, not a ``W``/``L`` game (FIDE 6.7): the arbiter confirms ``+-``/``-+``.
* ``+-`` ``-+``: ``+ -``, ``- +``; ``--`` (double forfeit): ``- -``. The opponent and
  the scheduled colour are written for forfeits too.
* Byes: the pairing-allocated bye of the pairings (``0000 - U``) and the byes given
  ahead for the round (tag ``240``: ``H``, ``F``, ``Z``) are written with the first
  save; byes already in the round's column are kept. Byes need no result.
* ``*`` clears a board's result (its two entries become blank again).

Exceptions::

    PairingFileError   the pairings do not fit the TRF (a player paired twice, ...)
    ValueError         a board that is not in the pairings, or an unknown result (misuse)
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from base.atomic_file import write_atomically
from daemon.pairing.command import CommandReport, run_command
from daemon.pairing.pairings import Pairing
from daemon.pairing.scoring import RoundEntry
from daemon.pairing.trf import PairingFileError, Tournament

__all__ = [
    "TRF_CODES",
    "HandoffOutcome",
    "ResultHandoff",
    "RoundResults",
    "SideOutcome",
    "result_codes",
    "result_from_codes",
]

#: White's and Black's TRF result codes for each result the daemon confirms.
TRF_CODES: Mapping[str, tuple[str, str]] = {
    "1-0": ("1", "0"),
    "0-1": ("0", "1"),
    "1/2-1/2": ("=", "="),
    "+-": ("+", "-"),
    "-+": ("-", "+"),
    "--": ("-", "-"),
}
_SHORT_GAME = {"1-0": ("W", "L"), "0-1": ("L", "W"), "1/2-1/2": ("D", "D")}
_RESULT_OF = {codes: result for result, codes in TRF_CODES.items()} | {
    codes: result for result, codes in _SHORT_GAME.items()
}


def result_codes(result: str, *, moves_played: int | None = None) -> tuple[str, str]:
    """White's and Black's TRF codes for a result (``1-0`` ... ``--``).

    Args:
        result: a PGN result or a forfeit (broadcast/feed/messages.py ``RESULTS`` but ``*``).
        moves_played: plies made on the board, when known; under 2 a game result gets
            the codes of a game that lasted less than one move (``W D L``).

    Raises:
        ValueError: an unknown result.
    """
    if result not in TRF_CODES:
        raise ValueError(f"result must be one of {', '.join(TRF_CODES)}, got {result!r}")
    if moves_played is not None and moves_played < 2 and result in _SHORT_GAME:
        return _SHORT_GAME[result]
    return TRF_CODES[result]


def result_from_codes(white: str, black: str) -> str | None:
    """The result two entries' codes stand for; None for other pairs (``= 0``, ...)."""
    return _RESULT_OF.get((white.upper(), black.upper()))


@dataclass(frozen=True, slots=True, kw_only=True)
class SideOutcome:
    """One player of a board after the result: ``code`` None when the result was cleared."""

    rank: int
    name: str
    code: str | None
    points: Decimal

    def payload(self) -> dict[str, Any]:
        """As JSON data (points as a number)."""
        return {
            "rank": self.rank,
            "name": self.name,
            "code": self.code,
            "points": float(self.points),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class HandoffOutcome:
    """What a result did to the TRF; :meth:`payload` is published on ``<prefix>/results``.

    Attributes:
        changed: the TRF's text changed (False when the same result came again).
        round_complete: every board of the round has a result (byes count as done).
    """

    board: int
    round: int
    result: str
    white: SideOutcome
    black: SideOutcome
    source: str
    at: float
    changed: bool
    round_complete: bool

    def payload(self) -> dict[str, Any]:
        """The JSON payload for MQTT ``<prefix>/results`` (docs/pairing.md)."""
        return {
            "board": self.board,
            "round": self.round,
            "result": self.result,
            "white": self.white.payload(),
            "black": self.black.payload(),
            "source": self.source,
            "at": self.at,
            "round_complete": self.round_complete,
        }


class RoundResults:
    """The round's results in the tournament's TRF (pure: no file, no clock).

    Args:
        tournament: the TRF as read (it may hold results of this round already: they
            count, so a restart changes nothing).
        round_number: the round being played.
        pairings: the round's pairings (:func:`~daemon.pairing.pairings.read_pairings`).

    Raises:
        PairingFileError: the pairings do not fit the TRF.
        ValueError: ``round_number`` below 1.
    """

    def __init__(self, tournament: Tournament, round_number: int, pairings: Sequence[Pairing]):
        if round_number < 1:
            raise ValueError(f"round must be 1 or more, got {round_number}")
        self.round = round_number
        self.pairings = {p.board: p for p in pairings}
        _check_round(tournament, round_number, pairings)
        self._tournament = tournament.with_round(
            round_number, _byes(tournament, round_number, pairings)
        )
        self._results: dict[int, str] = {}
        for pairing in pairings:
            result = self._result_in_trf(pairing)
            if result is not None:
                self._results[pairing.board] = result

    @property
    def tournament(self) -> Tournament:
        """The tournament with every result received so far and the round's byes."""
        return self._tournament

    def receive_result(
        self,
        board: int,
        result: str,
        *,
        source: str,
        at: float,
        moves_played: int | None = None,
    ) -> HandoffOutcome:
        """Write a confirmed result (``*``: clear it); then save :attr:`tournament`.

        Args:
            board: a board of the pairings.
            result: ``1-0``, ``0-1``, ``1/2-1/2``, ``+-``, ``-+``, ``--`` or ``*``.
            source: where the result came from (``ResultSource``: arbiter, flag_fall, ...).
            at: when it was confirmed (epoch seconds), for the payload.
            moves_played: plies made, when an e-board saw the game (see the module doc).

        Raises:
            ValueError: a board that is not a game of the pairings, or an unknown result.
        """
        pairing = self._game(board)
        white, black = pairing.white, pairing.black
        assert black is not None
        codes, entries = self._entries(pairing, result, moves_played)
        if codes is None:
            self._results.pop(board, None)
        else:
            self._results[board] = result
        before = self._tournament
        self._tournament = before.with_round(self.round, entries)
        return HandoffOutcome(
            board=board,
            round=self.round,
            result=result,
            white=self._side(white, None if codes is None else codes[0]),
            black=self._side(black, None if codes is None else codes[1]),
            source=str(source),
            at=at,
            changed=self._tournament.lines != before.lines,
            round_complete=self.is_round_complete(),
        )

    def result_of(self, board: int) -> str | None:
        """The board's result in the TRF; None while there is none."""
        return self._results.get(board)

    def boards_without_result(self) -> list[int]:
        """The boards still waiting for a result, in board order."""
        return [
            b for b, p in sorted(self.pairings.items()) if not p.is_bye and b not in self._results
        ]

    def is_round_complete(self) -> bool:
        """Every board has a result (byes need none)."""
        return not self.boards_without_result()

    def _game(self, board: int) -> Pairing:
        pairing = self.pairings.get(board)
        if pairing is None or pairing.is_bye:
            raise ValueError(f"board {board} is not a game of round {self.round}'s pairings")
        return pairing

    def _side(self, rank: int, code: str | None) -> SideOutcome:
        player = self._tournament.player(rank)
        return SideOutcome(rank=rank, name=player.name, code=code, points=player.points)

    def _entries(
        self, pairing: Pairing, result: str, moves_played: int | None
    ) -> tuple[tuple[str, str] | None, dict[int, RoundEntry | None]]:
        """The codes and the two entries for a result; None codes when it is cleared."""
        white, black = pairing.white, pairing.black
        assert black is not None
        if result == "*":
            return None, {white: None, black: None}
        codes = result_codes(result, moves_played=moves_played)
        if moves_played is None and self._results.get(pairing.board) == result:
            return self._codes_in_trf(pairing), {}  # unknown plies keep a known W/D/L
        return codes, {
            white: RoundEntry(opponent=black, colour="w", code=codes[0]),
            black: RoundEntry(opponent=white, colour="b", code=codes[1]),
        }

    def _codes_in_trf(self, pairing: Pairing) -> tuple[str, str]:
        assert pairing.black is not None
        white = self._tournament.player(pairing.white).entry(self.round)
        black = self._tournament.player(pairing.black).entry(self.round)
        assert white is not None
        assert black is not None
        return white.code, black.code

    def _result_in_trf(self, pairing: Pairing) -> str | None:
        if pairing.black is None:
            return None
        white = self._tournament.player(pairing.white).entry(self.round)
        black = self._tournament.player(pairing.black).entry(self.round)
        if white is None or black is None or white.is_pending or black.is_pending:
            return None
        return result_from_codes(white.code, black.code) or f"{white.code} {black.code}"


def _byes(
    tournament: Tournament, round_number: int, pairings: Sequence[Pairing]
) -> dict[int, RoundEntry | None]:
    """The byes to write: the pairing-allocated one, and those given ahead (tag 240)."""
    byes: dict[int, RoundEntry | None] = {}
    for rank, code in tournament.byes.get(round_number, {}).items():
        byes[rank] = RoundEntry(opponent=0, colour="-", code=code)
    for pairing in pairings:
        if pairing.is_bye:
            byes[pairing.white] = RoundEntry(opponent=0, colour="-", code="U")
    return {
        rank: entry
        for rank, entry in byes.items()
        if tournament.player(rank).entry(round_number) is None
    }


def _check_round(tournament: Tournament, round_number: int, pairings: Sequence[Pairing]) -> None:
    """The pairings must fit the TRF: players, the round's number, entries already there."""
    source = tournament.source
    if tournament.rounds is not None and round_number > tournament.rounds:
        last = f"{tournament.rounds_tag} {tournament.rounds}"
        raise PairingFileError([f"{source}: round {round_number} is past the last round ({last})"])
    problems = [
        f"{p.where}: player {rank} is not in {source} (starting ranks {tournament.ranks_text()})"
        for p in pairings
        for rank in (p.white, p.black)
        if rank is not None and rank not in tournament.players
    ]
    if problems:
        raise PairingFileError(problems)
    problems += _later_rounds(tournament, round_number)
    for pairing in pairings:
        problems += _conflicts(tournament, round_number, pairing)
    if problems:
        raise PairingFileError(problems)


def _later_rounds(tournament: Tournament, round_number: int) -> list[str]:
    problems = []
    for player in tournament.players.values():
        later = [r for r in range(round_number + 1, len(player.rounds) + 1) if player.entry(r)]
        if later:
            problems.append(
                f"{tournament.source}:{player.line}:{92 + 10 * (later[0] - 1)}: player"
                f" {player.rank} already has round {later[0]}, but round {round_number} is"
                " being played"
            )
    return problems


def _conflicts(tournament: Tournament, round_number: int, pairing: Pairing) -> list[str]:
    """What the TRF already says about the round for this pairing's players."""
    problems = []
    given = tournament.byes.get(round_number, {})
    sides = [(pairing.white, pairing.black, "w"), (pairing.black, pairing.white, "b")]
    for rank, opponent, colour in sides:
        if rank is None:
            continue
        player = tournament.player(rank)
        entry = player.entry(round_number)
        paired = (
            "gets the bye"
            if opponent is None
            else f"plays {opponent} with {'White' if colour == 'w' else 'Black'}"
        )
        if rank in given:
            problems.append(
                f"{pairing.where}: player {rank} {paired}, but {tournament.source} gives"
                f" them a bye ({given[rank]}) in round {round_number}"
            )
        elif entry is not None and not _fits(entry, opponent, colour):
            problems.append(
                f"{pairing.where}: player {rank} {paired}, but {tournament.source} line"
                f" {player.line} has {entry.render().strip()} in round {round_number}"
            )
    return problems


def _fits(entry: RoundEntry, opponent: int | None, colour: str) -> bool:
    if opponent is None:
        return entry.opponent == 0 and entry.result in ("U", "+")
    return entry.opponent == opponent and entry.colour == colour


class ResultHandoff:
    """Writes confirmed results into the TRF file and runs the configured command.

    Args:
        tournament: the TRF as read from ``trf_path``.
        round_number: the round being played.
        pairings: the round's pairings.
        trf_path: the file to update (atomically, after every change).
        command: run after each saved change, with the TRF's path appended (e.g. a
            script that pairs the next round once the round is complete); it gets
            ``DGTCAST_ROUND`` and ``DGTCAST_ROUND_COMPLETE`` (``1``/``0``) as environment.
        command_timeout: seconds before the command is killed.

    Raises:
        PairingFileError, ValueError: as :class:`RoundResults`.
    """

    def __init__(
        self,
        tournament: Tournament,
        round_number: int,
        pairings: Sequence[Pairing],
        trf_path: str | os.PathLike[str],
        command: Sequence[str] | None = None,
        *,
        command_timeout: float = 60.0,
    ) -> None:
        self.results = RoundResults(tournament, round_number, pairings)
        self.trf_path = Path(trf_path)
        self.command = tuple(command) if command else None
        self.command_timeout = command_timeout
        self._on_disk = tournament.to_bytes()
        self._command_lock = asyncio.Lock()

    def save(self) -> bool:
        """Write the TRF if it differs from what is on disk; True when written.

        Call it once at the start (it writes the round's byes); results save themselves.

        Raises:
            OSError: the file cannot be written (the previous one stays whole).
        """
        data = self.results.tournament.to_bytes()
        if data == self._on_disk:
            return False
        write_atomically(self.trf_path, data)
        self._on_disk = data
        return True

    def receive_result(
        self,
        board: int,
        result: str,
        *,
        source: str,
        at: float,
        moves_played: int | None = None,
    ) -> HandoffOutcome:
        """Write a confirmed result into the TRF and save it (see :class:`RoundResults`).

        Then publish :meth:`HandoffOutcome.payload` and, when it ``changed``, start
        :meth:`run_command` as a task.

        Raises:
            ValueError: a board that is not a game of the pairings, or an unknown result.
            OSError: the file cannot be written.
        """
        outcome = self.results.receive_result(
            board, result, source=source, at=at, moves_played=moves_played
        )
        self.save()
        return outcome

    def is_round_complete(self) -> bool:
        """Every board has a result (byes need none)."""
        return self.results.is_round_complete()

    async def run_command(self) -> CommandReport | None:
        """Run the configured command on the saved TRF (one run at a time); None if none."""
        if self.command is None:
            return None
        async with self._command_lock:
            env = {
                "DGTCAST_ROUND": str(self.results.round),
                "DGTCAST_ROUND_COMPLETE": "1" if self.is_round_complete() else "0",
            }
            return await run_command(
                self.command, self.trf_path, env=env, kill_after=self.command_timeout
            )
