"""Reading a TRF file's lines: the players, and every check a pairing engine makes.

Part of :mod:`daemon.pairing.trf` (which users import): :func:`read_lines` turns the
lines of a file into :class:`Player` records, the number of rounds, the scoring and the
byes given ahead, and collects every problem as one line ``file:line:column: message``
(docs/pairing.md, "The TRF file": the columns; bbpPairings refuses files whose points do not add
up, and so does this).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from base.pgn_tags import tag_value_problem
from daemon.pairing.scoring import (
    BYE_CODES,
    GAME_CODES,
    RESULT_CODES,
    RoundEntry,
    Scoring,
    ScoringError,
    parse_points,
)
from daemon.pairing.tiebreaks import record_codes

__all__ = ["PairingFileError", "Player", "TrfReader", "block_start", "read_lines"]

_TITLES = {
    **{t: t for t in ("GM", "IM", "FM", "CM", "WGM", "WIM", "WFM", "WCM")},
    **{"G": "GM", "M": "IM", "F": "FM", "C": "CM"},
    **{"WG": "WGM", "WM": "WIM", "WF": "WFM", "WC": "WCM"},
}
_CODES_SHOWN = "1 = 0 + - W D L H F U Z"


class PairingFileError(Exception):
    """A TRF or pairings file that cannot be used; ``problems`` has one line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True, slots=True, kw_only=True)
class Player:
    """A ``001`` line.

    Attributes:
        rank: the starting rank (pairing number), columns 5-8.
        name: "Lastname, Firstname" as written.
        title: GM IM FM CM WGM WIM WFM WCM (older one-letter codes mapped), or None.
        rating: the FIDE rating, None when blank or 0.
        fide_id: None when blank or 0.
        points: columns 81-84.
        place: the rank column (86-89), None when blank.
        rounds: round r is ``rounds[r - 1]``; None for a blank round.
        line: the line number in the file (1-based).
    """

    rank: int
    name: str
    sex: str
    title: str | None
    rating: int | None
    federation: str
    fide_id: int | None
    birth_date: str
    points: Decimal
    place: int | None
    rounds: tuple[RoundEntry | None, ...]
    line: int

    def entry(self, round_number: int) -> RoundEntry | None:
        """The player's entry for a round (1-based); None when blank."""
        if 1 <= round_number <= len(self.rounds):
            return self.rounds[round_number - 1]
        return None


def block_start(round_number: int) -> int:
    """0-based index of a round's ten columns (two blanks, then ``oooo c r``)."""
    return 89 + 10 * (round_number - 1)


def read_lines(source: str, lines: list[str]) -> TrfReader:
    """Read and check the lines of a TRF file; the result's ``problems`` may be empty."""
    reader = TrfReader(source, lines)
    reader.read()
    return reader


def _number(text: str) -> int | None:
    """A right-aligned whole number; None when the text is not one."""
    stripped = text.strip()
    return int(stripped) if stripped.isascii() and stripped.isdigit() else None


class TrfReader:
    """Reads the lines of a TRF file, collecting every problem."""

    def __init__(self, source: str, lines: list[str]) -> None:
        self.source = source
        self.lines = lines
        self.problems: list[str] = []
        self.players: dict[int, Player] = {}
        self.rounds: int | None = None
        self.rounds_tag = ""
        self.rounds_line = 0
        self.scoring = Scoring.fide()
        self.byes: dict[int, dict[int, str]] = {}
        self.bye_lines: list[tuple[int, int, int]] = []  # (line, column, rank)
        self.absent: list[int] = []
        self.tiebreaks: tuple[str, ...] = ()  # record 202 or 212's codes (212 wins)
        self.tiebreaks_tag = ""
        self.incomplete = False  # a 001 line gave no player: ranks may be missing
        self.broken: set[int] = set()  # players with a bad field: no checks across lines

    def problem(self, line: int, column: int, message: str) -> None:
        self.problems.append(f"{self.source}:{line}:{column}: {message}")

    def read(self) -> None:
        for number, line in enumerate(self.lines, 1):
            self._line(number, line)
        if not self.players and not self.problems:
            self.problems.append(f"{self.source}: no player lines (001)")
        _Checker(self).check()

    def _line(self, number: int, line: str) -> None:
        tag = line[:3]
        if tag == "001":
            self._player(number, line)
        elif tag in ("XXR", "142"):
            self._rounds(number, line, tag)
        elif tag in ("XXS", "162"):
            self._scoring(number, line, tag)
        elif tag == "240":
            self._byes(number, line)
        elif tag in ("202", "212") and (tag == "212" or self.tiebreaks_tag != "212"):
            self.tiebreaks, self.tiebreaks_tag = tuple(record_codes(line)), tag
        elif tag == "XXZ":
            self.absent += self._ranks(number, line, 4, line[3:].split())

    def _rounds(self, number: int, line: str, tag: str) -> None:
        value = _number(line[3:])
        if value is None or value < 1:
            self.problem(number, 5, f'{tag} must give the number of rounds, got "{line[4:]}"')
        elif self.rounds is not None and value != self.rounds:
            self.problem(
                number,
                5,
                f"{tag} says {value} rounds, but line {self.rounds_line} says {self.rounds}",
            )
        else:
            self.rounds, self.rounds_tag, self.rounds_line = value, tag, number

    def _scoring(self, number: int, line: str, tag: str) -> None:
        try:
            if tag == "XXS":
                self.scoring = self.scoring.receive_xxs(line)
            else:
                self.scoring = self.scoring.receive_tag_162(line)
        except ScoringError as exc:
            self.problem(number, exc.column, str(exc))

    def _byes(self, number: int, line: str) -> None:
        kind = line[4:5]
        round_number = _number(line[6:9])
        if kind not in ("F", "H", "Z"):
            self.problem(number, 5, f'240: bye type must be F, H or Z, got "{kind}"')
        elif round_number is None or round_number < 1:
            self.problem(number, 7, f'240: "{line[6:9]}" is not a round number')
        else:
            fields = [line[i : i + 4] for i in range(10, len(line.rstrip()), 5)]
            for index, rank in enumerate(self._ranks(number, line, 11, fields)):
                self.byes.setdefault(round_number, {})[rank] = kind
                self.bye_lines.append((number, 11 + 5 * index, rank))

    def _ranks(self, number: int, line: str, column: int, fields: list[str]) -> list[int]:
        ranks = []
        for field in fields:
            rank = _number(field)
            if rank is None or rank < 1:
                where = line.find(field, column - 1) + 1 or column
                self.problem(number, where, f'"{field.strip()}" is not a starting rank')
            else:
                ranks.append(rank)
        return ranks

    def _player(self, number: int, line: str) -> None:
        before = len(self.problems)
        player = self._read_player(number, line)
        if player is None:
            self.incomplete = True
            return
        self.players[player.rank] = player
        if len(self.problems) > before:
            self.broken.add(player.rank)

    def _read_player(self, number: int, line: str) -> Player | None:
        if len(line.rstrip()) < 84:
            self.problem(
                number,
                len(line.rstrip()) + 1,
                "player line ends before its points (columns 81-84)",
            )
            return None
        rank = _number(line[4:8])
        if rank is None or rank < 1:
            self.problem(number, 5, f'starting rank "{line[4:8]}" is not a number 1-9999')
            return None
        if rank in self.players:
            other = self.players[rank].line
            self.problem(number, 5, f"starting rank {rank} is given twice (also line {other})")
            return None
        rounds = tuple(self._entries(number, line, rank))
        return self._fields(number, line, rank, rounds)

    def _fields(
        self, number: int, line: str, rank: int, rounds: tuple[RoundEntry | None, ...]
    ) -> Player | None:
        rating = self._optional_number(number, line, 48, 52, "rating")
        fide_id = self._optional_number(number, line, 57, 68, "FIDE id")
        place = self._optional_number(number, line, 85, 89, "rank")
        try:
            points = parse_points(line[80:84])
        except ValueError:
            self.problem(number, 81, f'points "{line[80:84]}" are not a number like 11.5')
            return None
        name = line[14:47].strip()
        problem = tag_value_problem(name)
        if problem is not None:
            self.problem(number, 15, f"player name {problem} (PGN tags are one line)")
            return None
        return Player(
            rank=rank,
            name=name,
            sex=line[9:10].strip().lower(),
            title=_TITLES.get(line[10:13].strip().upper()),
            rating=rating or None,
            federation=line[53:56].strip(),
            fide_id=fide_id or None,
            birth_date=line[69:79].strip(),
            points=points,
            place=place,
            rounds=rounds,
            line=number,
        )

    def _optional_number(
        self, number: int, line: str, start: int, end: int, what: str
    ) -> int | None:
        text = line[start:end]
        if not text.strip():
            return None
        value = _number(text)
        if value is None:
            self.problem(number, start + 1, f'{what} "{text.strip()}" is not a number')
        return value

    def _entries(self, number: int, line: str, rank: int) -> list[RoundEntry | None]:
        entries = []
        round_number = 1
        while block_start(round_number) < len(line):
            start = block_start(round_number)
            block = line[start : start + 10].ljust(10)
            entries.append(self._entry(number, rank, round_number, block, start))
            round_number += 1
        while entries and entries[-1] is None:
            entries.pop()
        return entries

    def _entry(
        self, number: int, rank: int, round_number: int, block: str, start: int
    ) -> RoundEntry | None:
        if not block.strip():
            return None
        for i in (0, 1, 6, 8):
            if block[i] != " ":
                self.problem(
                    number,
                    start + i + 1,
                    f"column {start + i + 1} must be blank (round {round_number}'s columns"
                    " are shifted)",
                )
                return None
        opponent = 0 if not block[2:6].strip() else _number(block[2:6])
        if opponent is None:
            self.problem(number, start + 3, f'opponent "{block[2:6].strip()}" is not a number')
            return None
        colour = block[7] if block[7] != " " else "-"
        if colour not in ("w", "b", "-"):
            self.problem(number, start + 8, f'colour must be w, b or -, got "{colour}"')
            return None
        code = block[9]
        if code != " " and code.upper() not in RESULT_CODES:
            self.problem(number, start + 10, f'result "{code}" is not one of {_CODES_SHOWN}')
            return None
        entry = RoundEntry(opponent=opponent, colour=colour, code=code)
        return entry if self._entry_is_sound(number, rank, entry, start) else None

    def _entry_is_sound(self, number: int, rank: int, entry: RoundEntry, start: int) -> bool:
        result = entry.result
        problem: tuple[int, str] | None = None
        if entry.opponent == rank:
            problem = (3, f"player {rank} cannot be their own opponent")
        elif result in BYE_CODES and entry.opponent:
            problem = (10, f"{result} is a bye: the opponent must be 0000, not {entry.opponent}")
        elif not entry.opponent and (result in GAME_CODES or entry.colour != "-"):
            problem = (3, f"result {result} needs an opponent" if result.strip() else "no opponent")
        elif entry.opponent and entry.colour == "-" and (result in GAME_CODES or result == " "):
            problem = (8, "a game needs colour w or b")
        if problem is not None:
            self.problem(number, start + problem[0], problem[1])
            return False
        return True


class _Checker:
    """The checks across lines: ranks, opponents, colours, rounds, points, byes."""

    def __init__(self, reader: TrfReader) -> None:
        self.reader = reader
        self.players = reader.players
        self.ranks = f"1-{max(self.players, default=0)}"

    def check(self) -> None:
        top = max(self.players, default=0)
        for rank in range(1, top + 1):
            if rank not in self.players and not self.reader.incomplete:
                self.reader.problems.append(
                    f"{self.reader.source}: no player has starting rank {rank}"
                    f" (ranks must run from 1 to {top})"
                )
        played = max((len(p.rounds) for p in self.players.values()), default=0)
        for player in self.players.values():
            self._rounds_of(player)
            if player.rank not in self.reader.broken:
                self._points_of(player, played)
        for line, column, rank in self.reader.bye_lines:
            if rank not in self.players:
                self.reader.problem(line, column, f"bye for {rank:04d}, who is not a player")

    def _rounds_of(self, player: Player) -> None:
        reader = self.reader
        for index, entry in enumerate(player.rounds):
            round_number = index + 1
            start = block_start(round_number)
            if reader.rounds is not None and round_number > reader.rounds:
                reader.problem(
                    player.line,
                    start + 3,
                    f"round {round_number} is past the last round"
                    f" ({reader.rounds_tag} {reader.rounds})",
                )
                return
            if entry is not None and entry.opponent:
                self._opponent(player, round_number, entry, start)

    def _opponent(self, player: Player, round_number: int, entry: RoundEntry, start: int) -> None:
        other = self.players.get(entry.opponent)
        if other is None and self.reader.incomplete:
            return  # its line may be the one that could not be read
        if other is None:
            self.reader.problem(
                player.line,
                start + 3,
                f"opponent {entry.opponent:04d} is not a player (starting ranks {self.ranks})",
            )
            return
        if {player.rank, other.rank} & self.reader.broken:
            return
        back = other.entry(round_number)
        if back is None or back.opponent != player.rank:
            has = "nothing" if back is None else _describe(back)
            self.reader.problem(
                player.line,
                start + 3,
                f"round {round_number}: player {player.rank} meets {other.rank}, but line"
                f" {other.line} gives player {other.rank} {has}",
            )
        elif entry.colour != "-" and entry.colour == back.colour and player.rank < other.rank:
            self.reader.problem(
                player.line,
                start + 8,
                f"round {round_number}: players {player.rank} and {other.rank} both have"
                f" colour {entry.colour}",
            )

    def _points_of(self, player: Player, played: int) -> None:
        scoring = self.reader.scoring
        total = scoring.total(player.rounds)
        # Pairing engines also accept points without the last round's entry (bbpPairings).
        before_last = total - scoring.points_for(player.entry(played))
        if player.points not in (total, before_last):
            self.reader.problem(
                player.line,
                81,
                f"points {player.points} do not add up: the results give {total:.1f}"
                f" (scoring {scoring.describe()})",
            )


def _describe(entry: RoundEntry) -> str:
    if entry.opponent:
        return f"a game against {entry.opponent}"
    return f"a bye ({entry.result.strip() or 'Z'})"
