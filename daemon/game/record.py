"""The game record: a python-chess ``chess.pgn.Game`` built from the tracker's events.

* Tags: the Seven Tag Roster plus WhiteElo, BlackElo, TimeControl, Termination and the
  optional WhiteFideId, BlackFideId, WhiteTitle, BlackTitle from :class:`GameHeaders`
  (lichess identifies a broadcast game by Event, Site, Round and the FIDE ids or names:
  they never change during a game, docs/integrations.md, "What lichess expects").
* Every move carries ``[%clk h:mm:ss]`` (the mover's time right after it) and
  ``[%emt h:mm:ss]`` when the clock gave them, the last move included.
* A withdrawn move is cut from the main line; its replacement takes its place. Nothing
  is ever kept as a variation (lichess would analyse it: docs/integrations.md,
  "What lichess expects").
* Chess960: ``[Variant "Chess960"]``, ``[SetUp "1"]`` and ``[FEN ...]`` (the start
  position, castling rights included) from the start on, and a comment before the first
  move naming the start position's number, ``{Chess960 start position 518}``. Castling
  is written ``O-O``/``O-O-O`` (python-chess).
* A position accepted by the arbiter (an illegal move that stands, FIDE Laws 7.5) cannot
  be written as a move. The record then goes on from that position: ``[SetUp "1"]`` and
  ``[FEN ...]`` name it, and a comment before the first move keeps the moves played
  before it and says how many plies between the last agreed position and the board the
  record lacks (or that they cannot be counted), e.g. ``{Position accepted by the arbiter
  after 1. e4 e5, then 3 plies not recovered; play went on from the board as it stood.}``.
  Nothing is thrown away silently.

Results: mate, stalemate and dead positions end the game with Termination "normal";
the kings gesture gives the result ("time forfeit" if it confirms a flag fall's
result); a flag fall alone stays provisional until :meth:`GameRecord.set_result`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import chess
import chess.pgn

from base.pgn_tags import escape_tag_value
from daemon.game.events import (
    ClocksCorrected,
    FlagFell,
    GameEnded,
    GameEvent,
    GameStarted,
    MoveMade,
    MovesWithdrawn,
    PositionAccepted,
    ResultSignalled,
)

__all__ = [
    "GameHeaders",
    "GameRecord",
    "PgnExporter",
    "RecordedMove",
    "pgn_text",
]

_RESULTS = frozenset({"1-0", "0-1", "1/2-1/2", "*"})


@dataclass(frozen=True, slots=True, kw_only=True)
class GameHeaders:
    """The tournament's tags for one game (PGN Seven Tag Roster and lichess's extras).

    Attributes:
        date: ``YYYY.MM.DD`` (``?`` for unknown parts).
        round: ``"3"`` or ``"3.1"`` (round.board, the form lichess reads).
        time_control: PGN form, e.g. ``"5400+30"`` (seconds + increment).
        clock_tags: the time tags when given (``TimeControl`` and, under time odds or
            draw odds, ``WhiteTimeControl``, ``BlackTimeControl``, ``DrawOdds``); they
            replace ``time_control``.
        white_fide_id / black_fide_id: FIDE ids, digits only.
        white_title / black_title: GM, IM, WGM, FM, ... (docs/pairing.md, "The TRF file").
    """

    event: str = "?"
    site: str = "?"
    date: str = "????.??.??"
    round: str = "?"
    white: str = "?"
    black: str = "?"
    white_elo: int | None = None
    black_elo: int | None = None
    time_control: str = "?"
    white_fide_id: str | None = None
    black_fide_id: str | None = None
    white_title: str | None = None
    black_title: str | None = None
    clock_tags: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        for fide_id in (self.white_fide_id, self.black_fide_id):
            if fide_id is not None and not fide_id.isdigit():
                raise ValueError(f"a FIDE id is digits only, got {fide_id!r}")

    def tags(self) -> dict[str, str]:
        """The tags in PGN order; optional ones only when known."""
        tags = {
            "Event": self.event,
            "Site": self.site,
            "Date": self.date,
            "Round": self.round,
            "White": self.white,
            "Black": self.black,
        }
        optional = {
            "WhiteElo": self.white_elo,
            "BlackElo": self.black_elo,
            "WhiteTitle": self.white_title,
            "BlackTitle": self.black_title,
            "WhiteFideId": self.white_fide_id,
            "BlackFideId": self.black_fide_id,
        }
        tags |= {name: str(value) for name, value in optional.items() if value is not None}
        tags["TimeControl"] = self.time_control
        tags |= dict(self.clock_tags)
        return tags


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedMove:
    """One ply of the main line, with its clock annotations (seconds)."""

    ply: int
    uci: str
    san: str
    clock: float | None
    emt: float | None


class GameRecord:
    """The record of one game on one board, kept up to date from :class:`GameEvent`.

    Args:
        headers: the tournament's tags for this game.
    """

    def __init__(self, headers: GameHeaders | None = None) -> None:
        self.headers = headers or GameHeaders()
        self._start = chess.Board()
        self._chess960: int | None = None  # the Chess960 start position number
        self._moves: list[RecordedMove] = []
        self._earlier: list[str] = []
        self._result = "*"
        self._termination: str | None = None
        self._flag_result: str | None = None
        self._ended: int | None = None  # the ply a GameEnded came after (mate, stalemate)

    @property
    def moves(self) -> tuple[RecordedMove, ...]:
        """The main line since the start (or the last accepted position)."""
        return tuple(self._moves)

    @property
    def result(self) -> str:
        """The PGN result, ``"*"`` while the game goes on."""
        return self._result

    @property
    def termination(self) -> str | None:
        """The PGN Termination (``"normal"``, ``"time forfeit"``, ...), once decided."""
        return self._termination

    def receive_event(self, event: GameEvent) -> None:
        """Apply one tracker event; events that do not touch the record are ignored."""
        if isinstance(event, GameStarted):
            start = chess.Board()
            if event.chess960 is not None:
                start = chess.Board.from_chess960_pos(event.chess960)
            self._restart(start, earlier=[])
            self._result, self._termination, self._flag_result = "*", None, None
            self._ended = None
        elif isinstance(event, MoveMade):
            self._moves = [move for move in self._moves if move.ply < event.ply]
            self._moves.append(
                RecordedMove(
                    ply=event.ply, uci=event.uci, san=event.san, clock=event.clock, emt=event.emt
                )
            )
        elif isinstance(event, MovesWithdrawn):
            self._moves = [move for move in self._moves if move.ply < event.from_ply]
            if self._ended is not None and self._ended >= event.from_ply:  # its end too
                self._result, self._termination, self._ended = "*", None, None
        elif isinstance(event, ClocksCorrected):
            clocks = dict(event.clocks)
            self._moves = [
                dataclasses.replace(move, clock=clocks.get(move.ply, move.clock))
                for move in self._moves
            ]
        elif isinstance(event, PositionAccepted):
            self._accept(event)
        else:
            self._receive_result(event)

    def set_result(self, result: str, termination: str | None = "normal") -> None:
        """The arbiter's result (confirming a flag, a resignation, an agreed draw)."""
        if result not in _RESULTS:
            raise ValueError(f"result must be one of {sorted(_RESULTS)}")
        self._result, self._termination = result, termination

    def game(self) -> chess.pgn.Game:
        """The record as a python-chess game (a fresh object each call)."""
        game = chess.pgn.Game()
        for name, value in self.headers.tags().items():
            game.headers[name] = value
        if self._start.chess960:
            game.setup(self._start)
            game.headers["SetUp"] = "1"  # also for number 518, the standard position
            game.headers["FEN"] = self._start.fen()
        elif self._start.fen() != chess.STARTING_FEN:
            game.setup(self._start)
        comments = []
        if self._chess960 is not None:
            comments.append(f"Chess960 start position {self._chess960}")
        if self._earlier:
            comments.append(
                f"Position accepted by the arbiter after {'; then '.join(self._earlier)}; "
                "play went on from the board as it stood."
            )
        game.comment = " ".join(comments)
        node: chess.pgn.GameNode = game
        for move in self._moves:
            node = node.add_variation(chess.Move.from_uci(move.uci))
            node.set_clock(move.clock)
            node.set_emt(move.emt)
        game.headers["Result"] = self._result
        if self._termination is not None:
            game.headers["Termination"] = self._termination
        return game

    def pgn_text(self) -> str:
        """The record as PGN text (tags, main line, comments)."""
        return pgn_text(self.game())

    # -- internals ------------------------------------------------------------------

    def _receive_result(self, event: GameEvent) -> None:
        if isinstance(event, GameEnded):
            self._result, self._termination = event.result, "normal"
            self._ended = self._moves[-1].ply if self._moves else 0
        elif isinstance(event, ResultSignalled):
            forfeit = event.result == self._flag_result
            self._result = event.result
            self._termination = "time forfeit" if forfeit else "normal"
        elif isinstance(event, FlagFell):
            self._flag_result = event.result

    def _accept(self, event: PositionAccepted) -> None:
        earlier = list(self._earlier)
        lost = event.unrecovered_text
        if self._moves or lost:
            played = self._movetext() if self._moves else "no move"
            earlier.append(f"{played}, then {lost}" if lost else played)
        self._restart(chess.Board(event.fen, chess960=self._start.chess960), earlier=earlier)

    def _restart(self, start: chess.Board, *, earlier: list[str]) -> None:
        if not earlier:
            self._chess960 = start.chess960_pos() if start.chess960 else None
        self._start = start
        self._moves = []
        self._earlier = earlier

    def _movetext(self) -> str:
        board = self._start.copy()
        return board.variation_san([chess.Move.from_uci(move.uci) for move in self._moves])


class PgnExporter(chess.pgn.StringExporter):
    """python-chess's string exporter, with tag values escaped as PGN §8.1.1 says.

    python-chess writes tag values as they are: a quote or a backslash in a player's
    name would end the string token early.
    """

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        super().visit_header(tagname, escape_tag_value(tagvalue))


def pgn_text(game: chess.pgn.Game) -> str:
    """PGN text of ``game``: tags, the main line with its comments, no variations."""
    exporter = PgnExporter(headers=True, variations=False, comments=True)
    return game.accept(exporter) + "\n"
