"""A round's pairings as the pairing engine writes them, and the players of each board.

The format of JaVaFo and bbpPairings (``-p``), docs/pairing.md, "The pairings file": the
first line is the number of pairs; then one ``white black`` pair of starting ranks per line,
in board order; ``0`` as the opponent is the pairing-allocated bye (``U`` in the TRF)::

    6
    2 1
    13 4
    ...
    11 0

Games get board numbers in the order given, from ``first_board`` on; byes are no board
and are numbered after the last game (the engines write the bye last).

:func:`boards_from_pairings` gives each board's players from the TRF (names, ratings,
FIDE ids, titles), for the PGN headers: the daemon merges them into ``[[boards]]``,
which then only says which boards have e-boards and on which port.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from daemon.pairing.trf import PairingFileError, Player, Tournament, read_text

__all__ = ["BoardPlayers", "Pairing", "boards_from_pairings", "parse_pairings", "read_pairings"]

_FIELD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Pairing:
    """One line of the pairings: a board, or the bye (``black`` None).

    Attributes:
        board: the board number; for a bye, a number after the last board.
        white: White's starting rank (the bye's receiver for a bye).
        black: Black's starting rank; None for the pairing-allocated bye.
        line: the line of the pairings file (for messages).
        source: the pairings file's name (for messages).
    """

    board: int
    white: int
    black: int | None
    line: int = field(default=0, compare=False)
    source: str = field(default="", compare=False)

    @property
    def is_bye(self) -> bool:
        """True for the pairing-allocated bye."""
        return self.black is None

    @property
    def where(self) -> str:
        """``round4.txt:3:1``, for messages."""
        return f"{self.source}:{self.line}:1"


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardPlayers:
    """Who plays on a board: everything the PGN headers and ``[[boards]]`` need.

    The ``white*``/``black*`` fields are named like the keys of ``[[boards]]``
    (:class:`daemon.config.model.BoardConfig`); :meth:`board_fields` gives them as a dict.
    """

    board: int
    white_rank: int
    black_rank: int
    white: str
    black: str
    white_elo: int | None
    black_elo: int | None
    white_fide_id: int | None
    black_fide_id: int | None
    white_title: str | None
    black_title: str | None

    def board_fields(self) -> dict[str, Any]:
        """The ``[[boards]]`` keys with the players (merge with ``model_copy(update=...)``)."""
        return {
            "white": self.white,
            "black": self.black,
            "white_elo": self.white_elo,
            "black_elo": self.black_elo,
            "white_fide_id": self.white_fide_id,
            "black_fide_id": self.black_fide_id,
            "white_title": self.white_title,
            "black_title": self.black_title,
        }


def read_pairings(
    path: str | os.PathLike[str],
    *,
    tournament: Tournament | None = None,
    first_board: int = 1,
) -> list[Pairing]:
    """Read the pairing engine's output.

    Args:
        path: the pairings file; named in every message as given.
        tournament: when given, every starting rank must be one of its players.
        first_board: the number of the first board.

    Raises:
        PairingFileError: the file cannot be read, or one line per problem in it.
    """
    data = read_text(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise PairingFileError([f"{path}: not a text file (UTF-8)"]) from None
    return parse_pairings(text, source=str(path), tournament=tournament, first_board=first_board)


def parse_pairings(
    text: str,
    *,
    source: str,
    tournament: Tournament | None = None,
    first_board: int = 1,
) -> list[Pairing]:
    """Check pairings text (see :func:`read_pairings`).

    Raises:
        PairingFileError: one line per problem.
    """
    parser = _Parser(source, tournament)
    pairs = parser.parse(text.splitlines())
    if parser.problems:
        raise PairingFileError(parser.problems)
    games = [p for p in pairs if p.black is not None]
    byes = [p for p in pairs if p.black is None]
    return [
        Pairing(board=number, white=p.white, black=p.black, line=p.line, source=source)
        for number, p in enumerate([*games, *byes], first_board)
    ]


def boards_from_pairings(tournament: Tournament, pairings: list[Pairing]) -> list[BoardPlayers]:
    """Each board's players, from the TRF (byes are no board).

    Raises:
        PairingFileError: a starting rank that is not a player of the tournament.
    """
    problems = [
        f"{p.where}: player {rank} is not in {tournament.source}"
        f" (starting ranks {tournament.ranks_text()})"
        for p in pairings
        for rank in (p.white, p.black)
        if rank is not None and rank not in tournament.players
    ]
    if problems:
        raise PairingFileError(problems)
    return [
        _board(p.board, tournament.player(p.white), tournament.player(p.black))
        for p in pairings
        if p.black is not None
    ]


def _board(number: int, white: Player, black: Player) -> BoardPlayers:
    return BoardPlayers(
        board=number,
        white_rank=white.rank,
        black_rank=black.rank,
        white=white.name,
        black=black.name,
        white_elo=white.rating,
        black_elo=black.rating,
        white_fide_id=white.fide_id,
        black_fide_id=black.fide_id,
        white_title=white.title,
        black_title=black.title,
    )


class _Parser:
    """Reads pairing lines, collecting every problem as ``file:line:column: message``."""

    def __init__(self, source: str, tournament: Tournament | None) -> None:
        self.source = source
        self.tournament = tournament
        self.problems: list[str] = []
        self.seen: dict[int, int] = {}  # rank -> line
        self.bye_line: int | None = None

    def problem(self, line: int, column: int, message: str) -> None:
        self.problems.append(f"{self.source}:{line}:{column}: {message}")

    def parse(self, lines: list[str]) -> list[Pairing]:
        numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
        if not numbered:
            self.problem(1, 1, "empty file: the first line must be the number of pairs")
            return []
        (first, count_text), rest = numbered[0], numbered[1:]
        count = _whole(count_text.strip())
        if count is None or len(count_text.split()) != 1:
            self.problem(first, _column(count_text), "the first line must be the number of pairs")
        pairs = [pair for n, line in rest if (pair := self._pair(n, line)) is not None]
        if count is not None and count != len(rest):
            self.problem(
                first,
                _column(count_text),
                f"the first line says {count} pairs, but {len(rest)} follow",
            )
        return pairs

    def _pair(self, number: int, line: str) -> Pairing | None:
        fields = [(m.start() + 1, m.group()) for m in _FIELD.finditer(line)]
        if len(fields) != 2:
            shown = " ".join(text for _, text in fields)
            self.problem(number, _column(line), f'a pair is "white black", got "{shown}"')
            return None
        ranks = []
        for column, text in fields:
            rank = _whole(text)
            if rank is None:
                self.problem(number, column, f'"{text}" is not a starting rank')
                return None
            ranks.append((rank, column))
        return self._checked(number, ranks[0], ranks[1])

    def _checked(
        self, number: int, white: tuple[int, int], black: tuple[int, int]
    ) -> Pairing | None:
        (w, w_column), (b, b_column) = white, black
        if w == 0:
            self.problem(number, w_column, "0 (the bye) can only be the second of a pair")
            return None
        if w == b:
            self.problem(number, b_column, f"player {w} cannot play themselves")
            return None
        if b == 0:
            if self.bye_line is not None:
                self.problem(number, b_column, f"a second bye (also line {self.bye_line})")
                return None
            self.bye_line = number
        ok = all(self._player(number, rank, col) for rank, col in (white, black) if rank)
        return Pairing(board=0, white=w, black=b or None, line=number) if ok else None

    def _player(self, number: int, rank: int, column: int) -> bool:
        tournament = self.tournament
        if tournament is not None and rank not in tournament.players:
            self.problem(
                number,
                column,
                f"player {rank} is not in {tournament.source}"
                f" (starting ranks {tournament.ranks_text()})",
            )
            return False
        if rank in self.seen:
            self.problem(
                number, column, f"player {rank} is paired twice (also line {self.seen[rank]})"
            )
            return False
        self.seen[rank] = number
        return True


def _whole(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() else None


def _column(line: str) -> int:
    """The column of the line's first non-blank character."""
    return len(line) - len(line.lstrip()) + 1
