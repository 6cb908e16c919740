"""A human at the board: plays a game as a schedule of timed physical actions.

People do not move pieces the way a move list reads. The schedule shows what the board's
sensors are made to cope with (docs/protocol.md §12.1, the real recordings):

* captures in either order: the captured piece lifted first, or the mover lifted first,
  or the mover put on the square and the captured piece pushed away (its field is then
  never reported empty);
* castling king first, rook first, both lifted, or the king put on its rook's square
  first, in standard chess and in Chess960 (:mod:`drivers.emulator.castling`);
* en passant with the captured pawn taken before or after; promotion straight to the new
  piece, or the pawn first put on the last rank and then swapped for the queen (or the
  under-promotion piece);
* noise, with a chosen probability per move: a piece adjusted (j'adoube: lifted and put
  back), a piece knocked over onto a neighbouring square and put back, a rook, bishop or
  queen slid so the squares in between show up;
* then the mover presses the clock lever.

It also signals results with the kings (§9.1), stops moving (so a flag falls) and arrives
late. Timings are random but seeded, drawn in "human seconds" and divided by ``speed``.
Pure: the schedule is a list; applying it to a board is the caller's business.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import chess
import chess.pgn

from drivers.emulator.castling import CASTLING_ORDERS, CastlingOrder, castling_hops
from drivers.emulator.clock import Side, other_side

__all__ = [
    "RESULT_SQUARES",
    "Action",
    "HumanPlayer",
    "Lift",
    "Place",
    "PressLever",
    "StartClock",
    "TimedAction",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Lift:
    """A hand takes the piece off ``square``."""

    square: chess.Square


@dataclass(frozen=True, slots=True, kw_only=True)
class Place:
    """A hand puts ``piece`` on ``square`` (pushing away any piece standing there)."""

    square: chess.Square
    piece: chess.Piece


@dataclass(frozen=True, slots=True, kw_only=True)
class PressLever:
    """The player sitting on ``side`` of the clock presses their lever."""

    side: Side


@dataclass(frozen=True, slots=True, kw_only=True)
class StartClock:
    """The arbiter presses play: the side whose lever is up starts running."""


Action = Lift | Place | PressLever | StartClock


@dataclass(frozen=True, slots=True, kw_only=True)
class TimedAction:
    """An action due ``at`` seconds after the schedule's origin."""

    at: float
    action: Action


#: Where the kings go to signal a result (docs/protocol.md §9.1): light d5+e4 = 1-0,
#: dark d4+e5 = 0-1, one light and one dark (side by side) = draw.
RESULT_SQUARES: dict[str, tuple[tuple[chess.Square, chess.Square], ...]] = {
    "1-0": ((chess.D5, chess.E4),),
    "0-1": ((chess.D4, chess.E5),),
    "1/2-1/2": ((chess.D5, chess.E5), (chess.D4, chess.E4)),
}


class _Script:
    """Accumulates actions at a running time while mirroring the physical placement."""

    def __init__(self, board: chess.BaseBoard, rng: random.Random, speed: float, at: float):
        self.board = board.copy()
        self.rng = rng
        self.speed = speed
        self.at = at
        self.actions: list[TimedAction] = []

    def wait(self, low: float, high: float) -> None:
        self.at += self.rng.uniform(low, high) / self.speed

    def lift(self, square: chess.Square) -> chess.Piece:
        piece = self.board.remove_piece_at(square)
        if piece is None:
            raise ValueError(f"the script lifts from the empty square {chess.square_name(square)}")
        self._add(Lift(square=square))
        return piece

    def place(self, square: chess.Square, piece: chess.Piece) -> None:
        self.board.set_piece_at(square, piece)
        self._add(Place(square=square, piece=piece))

    def press(self, side: Side) -> None:
        self._add(PressLever(side=side))

    def start_clock(self) -> None:
        self._add(StartClock())

    def chance(self, probability: float) -> bool:
        return self.rng.random() < probability

    def _add(self, action: Action) -> None:
        self.actions.append(TimedAction(at=self.at, action=action))


class HumanPlayer:
    """Both players (and the arbiter's hands) at one board.

    Args:
        seed: seeds every random choice and timing; equal seeds give equal schedules.
        speed: divides every human duration (10 = ten times faster than life).
        noise: probability per move of each kind of noise (adjust, knock over, slide).
        white_side: the clock side White sits at (whose lever White presses).
        think: (low, high) bounds in human seconds of the thinking time per move.
        castling: the order hands castle in; None = a random one each time.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        speed: float = 1.0,
        noise: float = 0.0,
        white_side: Side = "left",
        think: tuple[float, float] = (1.0, 12.0),
        castling: CastlingOrder | None = None,
    ) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        if not 0.0 <= noise <= 1.0:
            raise ValueError("noise is a probability, 0..1")
        self._rng = random.Random(seed)
        self.speed = speed
        self.noise = noise
        self.white_side = white_side
        self.think = think
        self.castling = castling

    def side_of(self, color: chess.Color) -> Side:
        """The clock side of the player with ``color``."""
        return self.white_side if color == chess.WHITE else other_side(self.white_side)

    def play(
        self,
        game: chess.pgn.Game | Iterable[chess.Move],
        *,
        start: chess.Board | None = None,
        at: float = 0.0,
        plies: int | None = None,
        late_by: float = 0.0,
        start_clock: bool = True,
        result: str | None = None,
    ) -> list[TimedAction]:
        """Schedule a game: the arbiter starts the clock, then the players move.

        Args:
            game: a PGN game (its main line) or the moves from ``start``.
            start: the position the moves start from (default: the game's or the
                standard start position); the physical board must stand like it.
            at: when the schedule begins.
            plies: play only this many plies, then stop moving (the flag will fall).
            late_by: real seconds (not scaled by speed) the first mover arrives late;
                ``math.inf``: nobody turns up.
            start_clock: begin with the arbiter pressing play.
            result: signal this result with the kings after the last move (§9.1).
        """
        board, moves = _moves_of(game, start)
        script = _Script(board, self._rng, self.speed, at)
        if start_clock:
            script.start_clock()
        if math.isinf(late_by):
            return script.actions  # nobody turns up: only the clock runs
        script.at += late_by
        for index, move in enumerate(moves):
            if plies is not None and index >= plies:
                break
            self._think(script, first=index == 0)
            self._move(script, board, move)
            board.push(move)
        if result is not None:
            script.wait(1.0, 4.0)
            self._signal(script, result)
        return script.actions

    def move(self, board: chess.Board, move: chess.Move, *, at: float = 0.0) -> list[TimedAction]:
        """Schedule one move (hand actions and the lever press) from ``board``."""
        script = _Script(board, self._rng, self.speed, at)
        self._move(script, board, move)
        return script.actions

    def signal_result(
        self, placement: chess.BaseBoard, result: str, *, at: float = 0.0
    ) -> list[TimedAction]:
        """Schedule the kings being put on the centre squares for ``result`` (§9.1).

        Both kings are lifted first (so the first king move is never a legal move); a
        piece in the way on a centre square is taken off the board.

        Raises:
            ValueError: ``result`` is not 1-0, 0-1 or 1/2-1/2, or a king is missing.
        """
        script = _Script(placement, self._rng, self.speed, at)
        self._signal(script, result)
        return script.actions

    # -- one move ---------------------------------------------------------------------

    def _think(self, script: _Script, *, first: bool) -> None:
        low, high = self.think
        if first:
            script.wait(low / 2, low)
        else:
            script.wait(low, high)

    def _move(self, script: _Script, board: chess.Board, move: chess.Move) -> None:
        """Hands, noise, then the lever. A null move (PGN ``Z0``) is only a lever press."""
        if script.chance(self.noise):
            self._adjust(script, board.turn)
        if move:
            self._hands_for(board, move)(script, board, move)
        if script.chance(self.noise):
            self._knock_over(script)
        script.wait(0.2, 0.9)
        script.press(self.side_of(board.turn))

    def _hands_for(
        self, board: chess.Board, move: chess.Move
    ) -> Callable[[_Script, chess.Board, chess.Move], None]:
        if board.is_castling(move):
            return self._castle
        if board.is_en_passant(move):
            return self._en_passant
        if move.promotion is not None:
            return self._promote
        if board.is_capture(move):
            return self._capture
        return self._quiet

    def _quiet(self, script: _Script, board: chess.Board, move: chess.Move) -> None:
        piece = script.lift(move.from_square)
        self._carry(script, move, piece)
        script.place(move.to_square, piece)

    def _carry(self, script: _Script, move: chess.Move, piece: chess.Piece) -> None:
        """Bring a lifted piece over, sliding it across the squares between sometimes."""
        between = _path(move.from_square, move.to_square)
        if between and piece.piece_type != chess.KNIGHT and script.chance(self.noise):
            for square in between:
                script.wait(0.05, 0.25)
                script.place(square, piece)
                script.wait(0.05, 0.25)
                script.lift(square)
        script.wait(0.2, 1.0)

    def _capture(self, script: _Script, board: chess.Board, move: chess.Move) -> None:
        order = script.rng.randrange(3)
        if order == 0:  # the captured piece goes first
            script.lift(move.to_square)
            script.wait(0.2, 0.8)
        piece = script.lift(move.from_square)
        if order == 1:  # mover in one hand, then the captured piece off
            script.wait(0.1, 0.5)
            script.lift(move.to_square)
        self._carry(script, move, piece)
        script.place(move.to_square, piece)  # order 2: pushes the captured piece away

    def _castle(self, script: _Script, board: chess.Board, move: chess.Move) -> None:
        order: CastlingOrder = (
            script.rng.choice(CASTLING_ORDERS) if self.castling is None else self.castling
        )
        hops = castling_hops(board, move, order, king_first=script.chance(0.5))
        for hop in hops:
            if hop.lift:
                script.lift(hop.square)
                script.wait(0.2, 0.8)
            else:
                script.place(hop.square, hop.piece)
                script.wait(0.1, 0.5)

    def _en_passant(self, script: _Script, board: chess.Board, move: chess.Move) -> None:
        captured = chess.square(
            chess.square_file(move.to_square), chess.square_rank(move.from_square)
        )
        first = script.chance(0.5)
        if first:
            script.lift(captured)
            script.wait(0.2, 0.8)
        self._quiet(script, board, move)
        if not first:
            script.wait(0.2, 0.8)
            script.lift(captured)

    def _promote(self, script: _Script, board: chess.Board, move: chess.Move) -> None:
        assert move.promotion is not None
        new_piece = chess.Piece(move.promotion, board.turn)
        pawn = script.lift(move.from_square)
        if board.is_capture(move):
            script.wait(0.1, 0.5)
            script.lift(move.to_square)
        script.wait(0.2, 0.8)
        if script.chance(0.5):  # the pawn reaches the last rank first, then is swapped
            script.place(move.to_square, pawn)
            script.wait(0.5, 2.0)
            script.lift(move.to_square)
            script.wait(0.5, 2.0)
        script.place(move.to_square, new_piece)

    # -- noise --------------------------------------------------------------------------

    def _adjust(self, script: _Script, color: chess.Color) -> None:
        """J'adoube: one of the mover's pieces is lifted and put back."""
        own = sorted(chess.SquareSet(script.board.occupied_co[color]))
        square = script.rng.choice(own)
        piece = script.lift(square)
        script.wait(0.1, 0.6)
        script.place(square, piece)
        script.wait(0.3, 1.5)

    def _knock_over(self, script: _Script) -> None:
        """A piece is knocked over, rolls to a free neighbouring square, and is put back."""
        square = script.rng.choice(sorted(script.board.piece_map()))
        piece = script.lift(square)
        free = [near for near in _neighbours(square) if script.board.piece_at(near) is None]
        if free:
            landed = script.rng.choice(free)
            script.wait(0.05, 0.3)
            script.place(landed, piece)
            script.wait(0.3, 1.5)
            script.lift(landed)
        script.wait(0.2, 1.0)
        script.place(square, piece)

    # -- results --------------------------------------------------------------------------

    def _signal(self, script: _Script, result: str) -> None:
        if result not in RESULT_SQUARES:
            raise ValueError(f"no king signal for result {result!r}")
        targets = list(script.rng.choice(RESULT_SQUARES[result]))
        script.rng.shuffle(targets)
        kings = [_king_square(script.board, color) for color in chess.COLORS]
        lifted = [script.lift(square) for square in kings]
        for square in targets:
            if script.board.piece_at(square) is not None:
                script.wait(0.2, 0.8)
                script.lift(square)
        for square, king in zip(targets, lifted, strict=True):
            script.wait(0.3, 1.2)
            script.place(square, king)


def _moves_of(
    game: chess.pgn.Game | Iterable[chess.Move], start: chess.Board | None
) -> tuple[chess.Board, list[chess.Move]]:
    if isinstance(game, chess.pgn.Game):
        board = start.copy() if start is not None else game.board()
        return board, list(game.mainline_moves())
    return (start.copy() if start is not None else chess.Board()), list(game)


def _path(origin: chess.Square, target: chess.Square) -> list[chess.Square]:
    """Squares strictly between two squares on a line, in travel order."""
    squares = list(chess.SquareSet.between(origin, target))
    return sorted(squares, key=lambda square: chess.square_distance(origin, square))


def _neighbours(square: chess.Square) -> list[chess.Square]:
    return [near for near in chess.SQUARES if chess.square_distance(square, near) == 1]


def _king_square(board: chess.BaseBoard, color: chess.Color) -> chess.Square:
    square = board.king(color)
    if square is None:
        raise ValueError(f"no {chess.COLOR_NAMES[color]} king on the board to signal with")
    return square
