"""FIDE TRF-16 files with TRF-2026 and TRF(x) extension lines: read, update, write.

The tournament the pairing program keeps (docs/pairing.md, "The TRF file"). A
:class:`Tournament` keeps every line of the file as it was, with its own line ending;
writing it back changes only the lines of players whose rounds changed, and in them only
the points (columns 81-84) and the changed round's ten columns. Every other line,
extension lines included (``XXR``, ``XXC``, ``XXS``, ``XXZ``, ``XXP``, tags 142-222,
comments), is written back byte for byte.

A ``001`` line, columns 1-based and inclusive::

    1-3 001   5-8 starting rank   10 sex   11-13 title   15-47 name   49-52 rating
    54-56 federation   58-68 FIDE id   70-79 birth date   81-84 points   86-89 rank
    round r: 92+10(r-1)..95+10(r-1) opponent, 97+10(r-1) colour, 99+10(r-1) result

What is read besides the players: the number of rounds (``XXR``, tag ``142``), the
scoring (``XXS``, tag ``162``: :mod:`daemon.pairing.scoring`), byes given ahead for a
round (tag ``240``), the absentees of the next round to pair (``XXZ``) and the tie-breaks
of the section's regulations (records ``202`` and ``212``: :mod:`daemon.pairing.tiebreaks`).

The file is checked as a pairing engine would (bbpPairings refuses a file whose points
do not add up): every problem is one line ``file:line:column: what is wrong``.

Exceptions::

    PairingFileError    a TRF or pairings file that cannot be used (one line per problem)
"""

from __future__ import annotations

import codecs
import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from daemon.pairing.scoring import RoundEntry, Scoring, format_points
from daemon.pairing.trf_reader import PairingFileError, Player, block_start, read_lines

__all__ = ["PairingFileError", "Player", "Tournament", "read_text"]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Tournament:
    """A TRF file: its players, rounds, scoring and byes, and every line as written.

    Attributes:
        source: the file's name for messages.
        players: by starting rank, in file order.
        rounds: the number of rounds (``XXR`` or tag ``142``), None when not given.
        rounds_tag: the tag that gave it, for messages.
        byes: ``byes[round][rank]`` is a bye given ahead (tag ``240``): ``F``, ``H`` or ``Z``.
        absent: the starting ranks ``XXZ`` lists (absent from the next round to pair).
        tiebreaks / tiebreaks_tag: the tie-break codes of record ``212`` (the ranking
            order) or else ``202`` (after the points), as written; the record's tag.
        lines / endings: every line of the file now, and its line ending.
        read_players / read_lines: the players and lines as read from the file.
    """

    source: str
    players: Mapping[int, Player]
    rounds: int | None
    rounds_tag: str
    scoring: Scoring
    byes: Mapping[int, Mapping[int, str]]
    absent: tuple[int, ...]
    lines: tuple[str, ...]
    endings: tuple[str, ...]
    read_players: Mapping[int, Player]
    read_lines: tuple[str, ...]
    encoding: str = "utf-8"
    bom: bool = False
    tiebreaks: tuple[str, ...] = ()
    tiebreaks_tag: str = ""

    @classmethod
    def from_trf(cls, path: str | os.PathLike[str]) -> Tournament:
        """Read and check a TRF file (UTF-8, or Latin-1 when it is not UTF-8).

        Raises:
            PairingFileError: the file cannot be read, or one line per problem in it.
        """
        data = read_text(path)
        return cls.from_bytes(data, source=str(path))

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str) -> Tournament:
        """Check TRF bytes; ``source`` names the file in messages.

        Raises:
            PairingFileError: one line per problem.
        """
        bom = data.startswith(codecs.BOM_UTF8)
        body = data[len(codecs.BOM_UTF8) :] if bom else data
        try:
            return cls.from_text(body.decode("utf-8"), source=source, bom=bom)
        except UnicodeDecodeError:
            return cls.from_text(body.decode("latin-1"), source=source, encoding="latin-1")

    @classmethod
    def from_text(
        cls, text: str, *, source: str, encoding: str = "utf-8", bom: bool = False
    ) -> Tournament:
        """Check TRF text (see :meth:`from_bytes`).

        Raises:
            PairingFileError: one line per problem.
        """
        lines, endings = _split_lines(text)
        reader = read_lines(source, lines)
        if reader.problems:
            raise PairingFileError(reader.problems)
        return cls(
            source=source,
            players=MappingProxyType(reader.players),
            rounds=reader.rounds,
            rounds_tag=reader.rounds_tag,
            scoring=reader.scoring,
            byes=MappingProxyType(reader.byes),
            absent=tuple(reader.absent),
            lines=tuple(lines),
            endings=tuple(endings),
            read_players=MappingProxyType(reader.players),
            read_lines=tuple(lines),
            encoding=encoding,
            bom=bom,
            tiebreaks=reader.tiebreaks,
            tiebreaks_tag=reader.tiebreaks_tag,
        )

    def player(self, rank: int) -> Player:
        """The player with this starting rank.

        Raises:
            KeyError: no such player.
        """
        return self.players[rank]

    @property
    def played_rounds(self) -> int:
        """The last round any player has an entry for (0 before round 1)."""
        return max((len(p.rounds) for p in self.players.values()), default=0)

    def ranks_text(self) -> str:
        """``1-40``: the starting ranks, for messages."""
        return f"1-{max(self.players, default=0)}"

    def with_round(self, round_number: int, entries: Mapping[int, RoundEntry | None]) -> Tournament:
        """A copy with these players' entries for one round (None: blank) and new points.

        Points are recomputed from every round with :attr:`scoring`. Lines whose player
        does not change stay as they were.

        Raises:
            KeyError: a rank that is not a player.
        """
        players = dict(self.players)
        lines = list(self.lines)
        for rank, entry in entries.items():
            player = players[rank]
            rounds = list(player.rounds) + [None] * max(0, round_number - len(player.rounds))
            rounds[round_number - 1] = entry
            while rounds and rounds[-1] is None:
                rounds.pop()
            changed = dataclasses.replace(
                player, rounds=tuple(rounds), points=self.scoring.total(rounds)
            )
            if changed == player:
                continue
            players[rank] = changed
            index = player.line - 1
            if changed == self.read_players[rank]:
                lines[index] = self.read_lines[index]  # back as read, trailing blanks too
            else:
                lines[index] = _render(lines[index], changed, round_number)
        return dataclasses.replace(self, players=MappingProxyType(players), lines=tuple(lines))

    def to_trf(self) -> str:
        """The file's text: unchanged lines exactly as read, each with its own ending."""
        return "".join(line + ending for line, ending in zip(self.lines, self.endings, strict=True))

    def to_bytes(self) -> bytes:
        """The file's bytes, in the encoding (and with the byte order mark) it was read in."""
        data = self.to_trf().encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def read_text(path: str | os.PathLike[str]) -> bytes:
    """A file's bytes.

    Raises:
        PairingFileError: the file cannot be read.
    """
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise PairingFileError([f"{path}: cannot read the file: {exc.strerror or exc}"]) from None


# -- lines ----------------------------------------------------------------------------------


def _split_lines(text: str) -> tuple[list[str], list[str]]:
    """Lines without their endings, and each line's ending (CR, LF, CRLF or none)."""
    lines: list[str] = []
    endings: list[str] = []
    end = 0
    for match in _LINE.finditer(text):
        line = match.group().rstrip("\r\n")
        lines.append(line)
        endings.append(match.group()[len(line) :])
        end = match.end()
    if end < len(text):
        lines.append(text[end:])
        endings.append("")
    return lines, endings


def _put(line: str, index: int, text: str) -> str:
    line = line.ljust(index + len(text))
    return line[:index] + text + line[index + len(text) :]


def _render(line: str, player: Player, round_number: int) -> str:
    """The player's line with new points and a new entry for ``round_number``."""
    line = _put(line, 80, format_points(player.points))
    entry = player.entry(round_number)
    block = "  " + (" " * 8 if entry is None else entry.render())
    return _put(line, block_start(round_number), block).rstrip(" ")
