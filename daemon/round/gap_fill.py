"""Filling a gap the board's memory cannot cover by a search of the legal lines (pure).

A board still ahead of the game once its memory is replayed (or whose memory holds
nothing of the game) has the gap from the game's position to the placement it shows
searched (:mod:`daemon.game.gap`): one legal line is played, several are offered to the
arbiter (``choose_line``). The placement is a snapshot taken while the players go on: one
that may show a piece in a player's hand (a move half made) is not searched from; the
board stays out of sync and the heal looks again later (docs/daemon.md).

The line's last move takes its ``[%clk]`` from the first reading since that shows its
mover's side stopped (the readings were held while the memory was read); on a clock
dgtcast drives (mode 23) what the line's presses earned is owed to the clock.
"""

from __future__ import annotations

import chess

from daemon.game.clock import other_side
from daemon.game.events import ClocksCorrected, GameEvent, GapCandidates
from daemon.game.gap import search_gap
from daemon.game.matching import rotated
from daemon.game.tracker import GameTracker
from daemon.mode23.game_moves import move_number_of
from daemon.mode23.gap_increments import side_seconds
from daemon.round.board_game import BoardGame, ledger_since, line_sans
from daemon.round.inputs import RecoveryInput
from drivers.observations import ClockObserved, ClockSide

__all__ = ["clock_after_gap", "fill_gap"]

#: Positions the gap search visits at most: about a second of one core (it runs on the
#: event loop); a longer search gives up and the board goes out of sync as before.
_GAP_NODES = 40_000
#: Positions each search for a piece in the air visits at most, and the pieces tried.
_AIR_NODES = 10_000
_AIR_PIECES = 4


def fill_gap(game: BoardGame, tracker: GameTracker, item: RecoveryInput) -> list[GameEvent] | None:
    """The legal lines from the game to the placement the board shows once caught up.

    One line is played into the tracker; several are kept on ``game`` for the arbiter and
    offered as the :class:`GapCandidates` returned. None when nothing is searched (the
    memory is still being read, or no placement came with it).
    """
    sensed, side, at = item.placement, item.running, item.at
    if item.state == "reading" or sensed is None:
        return None
    if tracker.shows_game(sensed):
        return []
    to_move = None if side is None else tracker.color_at(side)
    real = rotated(sensed) if tracker.rotated else sensed
    game_board = tracker.board
    found = search_gap(game_board, real, to_move=to_move, node_limit=_GAP_NODES)
    if not found.lines or _piece_in_the_air(game_board, real, to_move):
        return []  # none, or a move half made: looked at again later
    if len(found.lines) == 1 and found.complete:
        before = tracker.board.copy(stack=False)
        if tracker.play_line(found.lines[0], at):
            game.gap_clock = _mover_side(tracker)
            _owe_searched(game, tracker, before, len(found.lines[0]))
        return []
    game.candidates = tuple(tuple(m.uci() for m in line) for line in found.lines)
    lines = tuple(tuple(line_sans(game_board, line)) for line in found.lines)
    return [GapCandidates(from_ply=tracker.ply + 1, lines=lines, complete=found.complete, at=at)]


def _piece_in_the_air(
    board: chess.Board, placement: chess.BaseBoard, to_move: chess.Color | None
) -> bool:
    """Whether ``placement`` may show a move half made rather than a position: one of the
    mover's pieces lifted from a square it stood on in the game's position (``board``),
    still in the player's hand. A search then finds lines that take the piece off the
    board (a capture, and the capturer back where it stood) that nobody played: the
    placement with the piece put back is a position of the game too, now or a legal line
    away."""
    if to_move is None:
        return False
    lifted = [
        (square, piece)
        for square, piece in board.piece_map().items()
        if piece.color == to_move and placement.piece_at(square) is None
    ]
    for square, piece in lifted[:_AIR_PIECES]:
        put_back = placement.copy()
        put_back.set_piece_at(square, piece)
        if put_back.board_fen() == board.board_fen():
            return True
        found = search_gap(board, put_back, to_move=to_move, max_lines=1, node_limit=_AIR_NODES)
        if found.lines:
            return True
    return False


def _owe_searched(game: BoardGame, tracker: GameTracker, before: chess.Board, plies: int) -> None:
    """Mode 23: what the presses of a searched gap's ``plies`` moves (from ``before``)
    earned and nobody gave the clock, owed like a log's (``clock_owed``). The first
    ones may have been pressed while dgtcast followed the board (their moves' field
    updates lost): those presses were answered."""
    white = tracker.white_side
    if game.section.event.dgt_mode != 23 or game.clock_adds or white is None:
        return
    black = other_side(white)
    rules = game.section.event.clock_rules
    since = ledger_since(game.ledger, before.ply())
    answered = sum(1 for kind, _ in since if kind in ("left", "right"))
    board = before
    for index, move in enumerate(tracker.board.move_stack[-plies:]):
        if index < answered:
            board.push(move)
            continue
        color = board.turn
        control = rules.white if color == chess.WHITE else rules.black
        side = white if color == chess.WHITE else black
        number = move_number_of(board, color)
        game.clock_owed[side] = game.clock_owed.get(side, 0) + control.added_after(number)
        board.push(move)


def _mover_side(tracker: GameTracker) -> tuple[int, ClockSide] | None:
    """The ply just played and the clock side of its mover (None: sides unknown)."""
    white = tracker.white_side
    if white is None or tracker.ply < 1:
        return None
    black = other_side(white)
    return tracker.ply, black if tracker.board.turn == chess.WHITE else white


def clock_after_gap(game: BoardGame, reading: ClockObserved, at: float) -> list[GameEvent]:
    """The ``[%clk]`` of a searched gap's last move, from ``reading``: its press came
    after the last reading the game had when the gap was filled (the readings were
    held while the memory was read), so that move took a time from before the gap. The
    first reading since that shows its mover's side stopped shows that side's time after
    the press."""
    ply, side = game.gap_clock or (0, None)
    if side is None or not reading.connected or reading.running in (None, side):
        return []
    game.gap_clock = None
    seconds = side_seconds(reading, side)
    moves = game.record.moves
    if not moves or moves[-1].ply != ply or moves[-1].clock == seconds:
        return []  # taken back since, or the time it has
    return [ClocksCorrected(clocks=((ply, seconds),), at=at)]
