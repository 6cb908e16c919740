"""A board's game as PGN text, extended move by move instead of exported again.

Used by the round's core (:mod:`daemon.round.core`) for every board state it publishes.
"""

from __future__ import annotations

import copy

import chess
import chess.pgn

from base.fen import position_fen
from broadcast.feed.messages import MoveInfo
from daemon.game.record import GameRecord, PgnExporter, RecordedMove

__all__ = ["RenderedGame"]


class RenderedGame:
    """A board's game as PGN for one result, extended move by move.

    python-chess exports a game by visiting it: the tag lines, then each main-line move's
    number and SAN (computed from the position before it) and its comment, wrapped at 80
    columns, then the result. Exporting the whole game again on every move replays it
    (about 5 ms at move 40 on the benchmark machine, for every move on every board).
    This keeps the exporter's state after the last move and the position, and visits
    only the moves added since, as ``Game.accept`` visits them, so the text is the one a
    full export gives (``bench/recovery.py`` checks that on every board it plays).

    Args:
        record: the game record; it is exported in full once.
        result: the PGN result to write.
        termination: the Termination to write instead of the record's (an arbiter's
            confirmation of a flag fall: ``"time forfeit"``); None keeps the record's.
    """

    def __init__(self, record: GameRecord, result: str, termination: str | None = None) -> None:
        self.result = result
        self.termination = termination
        game = record.game()
        game.headers["Result"] = result
        if termination is not None:
            game.headers["Termination"] = termination
        self._tags = len(game.headers)
        self._exporter = _OpenExporter(headers=True, variations=False, comments=True)
        game.accept(self._exporter)
        self._board = game.end().board()
        self._recorded = record.moves
        #: The main line as the broadcast shows it.
        self.moves = tuple(_move_info(m) for m in self._recorded)
        self._text: tuple[str, str, str] | None = None

    def extend(self, recorded: tuple[RecordedMove, ...]) -> bool:
        """Visit the moves added after those held; False if the line changed otherwise."""
        held = self._recorded
        if len(recorded) < len(held):
            return False
        if any(a is not b for a, b in zip(held, recorded[: len(held)], strict=True)):
            return False
        added = recorded[len(held) :]
        for move in added:
            self._visit(move)
        if added:
            self._recorded = recorded
            self.moves += tuple(_move_info(m) for m in added)
            self._text = None
        return True

    def text(self) -> tuple[str, str, str]:
        """(tag lines, blank line + movetext + result, FEN of the last position)."""
        if self._text is None:
            final = copy.copy(self._exporter)
            final.lines = list(self._exporter.lines)
            chess.pgn.StringExporter.visit_result(final, self.result)
            chess.pgn.StringExporter.end_game(final)
            pgn = final.result() + "\n"
            split = sum(len(line) + 1 for line in final.lines[: self._tags])
            self._text = pgn[:split], pgn[split:], position_fen(self._board)
        return self._text

    def __getstate__(self) -> dict[str, object]:
        """For snapshots: the last position is all the rendering needs of the game's
        board (a move stack is as big as the rest of the rendering together)."""
        state = dict(vars(self))
        state["_board"] = self._board.copy(stack=False)
        state["_text"] = None
        return state

    def _visit(self, recorded: RecordedMove) -> None:
        move = chess.Move.from_uci(recorded.uci)
        node = chess.pgn.Game().add_variation(move)  # the comment, as GameRecord.game() sets it
        node.set_clock(recorded.clock)
        node.set_emt(recorded.emt)
        self._exporter.visit_move(self._board, move)
        self._board.push(move)
        if node.comment:
            self._exporter.visit_comment(node.comment)


class _OpenExporter(PgnExporter):
    """An exporter that stops after the last move, so that more can be visited later."""

    def visit_result(self, result: str) -> None:
        pass

    def end_game(self) -> None:
        pass


def _move_info(move: RecordedMove) -> MoveInfo:
    return MoveInfo(san=move.san, uci=move.uci, clock=move.clock, emt=move.emt)
