"""A board's game record: the moves the tracker published, as PGN with clock times.

The record is kept in *segments*: a game starts from the initial position; when an arbiter
accepts a position the board reached by an irregularity (FIDE Laws 7.5), a new segment
starts there. In the PGN the jump between segments becomes the move that was really made
when one piece went from one square to another (with a comment saying the arbiter accepted
it); otherwise the record restarts from the accepted position (``SetUp``/``FEN`` tags) with
the earlier moves in a comment, so every PGN stays replayable.

Every move carries ``[%clk h:mm:ss]`` (the mover's time after the move) and ``[%emt]``
when known; corrections replace moves in the main line, never as variations
(tournament-rules.md §5).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import chess
import chess.pgn

from broadcast.messages import MoveInfo

__all__ = ["GameRecord", "Segment", "format_clock", "pseudo_move"]

ACCEPTED_COMMENT = "illegal move accepted by the arbiter (FIDE Laws 7.5)"


def format_clock(seconds: float) -> str:
    """``h:mm:ss`` for PGN ``[%clk]``/``[%emt]``, whole seconds."""
    total = max(0, round(seconds))
    return f"{total // 3600}:{total // 60 % 60:02d}:{total % 60:02d}"


@dataclass(slots=True)
class Segment:
    """Moves played from one starting position."""

    start_fen: str
    moves: list[MoveInfo] = field(default_factory=list)

    @property
    def first_ply(self) -> int:
        """The ply number of the segment's first move (1 from the initial position)."""
        board = chess.Board(self.start_fen)
        return 2 * (board.fullmove_number - 1) + (board.turn == chess.BLACK) + 1

    def end_board(self) -> chess.Board:
        """The position after the segment's moves."""
        board = chess.Board(self.start_fen)
        for move in self.moves:
            board.push(chess.Move.from_uci(move.uci))
        return board


def pseudo_move(before: chess.Board, after: chess.Board) -> chess.Move | None:
    """The one piece move (legal or not) that turns ``before`` into ``after``, if any."""
    old, new = before.piece_map(), after.piece_map()
    vacated = [sq for sq in old if sq not in new]
    changed = [sq for sq, piece in new.items() if old.get(sq) != piece]
    if len(vacated) != 1 or len(changed) != 1:
        return None
    src, dst = vacated[0], changed[0]
    if old[src] != new[dst] or before.color_at(src) != before.turn:
        return None
    return chess.Move(src, dst)


class GameRecord:
    """The moves of one board's game, in segments, and their PGN."""

    def __init__(self) -> None:
        self.segments = [Segment(chess.STARTING_FEN)]

    @property
    def current(self) -> Segment:
        """The segment moves are added to."""
        return self.segments[-1]

    def restart(self) -> None:
        """A new game from the initial position."""
        self.segments = [Segment(chess.STARTING_FEN)]

    def add_move(self, ply: int, move: MoveInfo) -> None:
        """Move ``ply`` of the current segment; later plies there are replaced."""
        seg = self.current
        del seg.moves[max(0, ply - seg.first_ply) :]
        seg.moves.append(move)

    def withdraw(self, from_ply: int) -> None:
        """Plies ``from_ply`` and later are gone from the current segment."""
        seg = self.current
        del seg.moves[max(0, from_ply - seg.first_ply) :]

    def accept(self, fen: str) -> None:
        """The arbiter accepted the position ``fen``: a new segment starts there."""
        self.segments.append(Segment(fen))

    def fen(self) -> str:
        """The current position."""
        return self.current.end_board().fen()

    def moves(self) -> tuple[MoveInfo, ...]:
        """The main line as spectators see it (a pseudo move bridges accepted positions)."""
        return tuple(m for _, m, _ in self._line())

    def game(self, headers: Iterable[tuple[str, str]]) -> chess.pgn.Game:
        """The record as a python-chess game with ``headers`` (in order) and clock comments."""
        line = self._line()
        game = chess.pgn.Game()
        game.headers.clear()
        for name, value in headers:
            game.headers[name] = value
        root_fen = line[0][0] if line else self.segments[-1].start_fen
        if root_fen != chess.STARTING_FEN:
            game.setup(chess.Board(root_fen))
        node: chess.pgn.GameNode = game
        dropped = self._dropped_text()
        if dropped:
            game.comment = dropped
        for _, move, comment in line:
            node = node.add_variation(chess.Move.from_uci(move.uci))
            node.comment = " ".join(filter(None, [comment, _clock_comment(move)]))
        return game

    def _line(self) -> list[tuple[str, MoveInfo, str]]:
        """(fen before, move, extra comment) of the main line, from the last clean start."""
        start = self._clean_start()
        out: list[tuple[str, MoveInfo, str]] = []
        for index in range(start, len(self.segments)):
            seg = self.segments[index]
            if index > start:
                prev = self.segments[index - 1].end_board()
                bridge = pseudo_move(prev, chess.Board(seg.start_fen))
                assert bridge is not None
                info = MoveInfo(san=_san(prev, bridge), uci=bridge.uci(), clock=None)
                out.append((prev.fen(), info, ACCEPTED_COMMENT))
            board = chess.Board(seg.start_fen)
            for move in seg.moves:
                out.append((board.fen(), move, ""))
                board.push(chess.Move.from_uci(move.uci))
        return out

    def _clean_start(self) -> int:
        """Index of the first segment from which every jump is a pseudo move."""
        start = 0
        for index in range(1, len(self.segments)):
            prev = self.segments[index - 1].end_board()
            if pseudo_move(prev, chess.Board(self.segments[index].start_fen)) is None:
                start = index
        return start

    def _dropped_text(self) -> str:
        start = self._clean_start()
        if start == 0:
            return ""
        earlier = GameRecord()
        earlier.segments = self.segments[:start]
        sans = " ".join(m.san for m in earlier.moves())
        return f"position set by the arbiter after: {sans}".strip()


def _san(board: chess.Board, move: chess.Move) -> str:
    try:
        return board.san(move)
    except (ValueError, AssertionError):
        return move.uci()


def _clock_comment(move: MoveInfo) -> str:
    parts = []
    if move.clock is not None:
        parts.append(f"[%clk {format_clock(move.clock)}]")
    if move.emt is not None:
        parts.append(f"[%emt {format_clock(move.emt)}]")
    return " ".join(parts)
