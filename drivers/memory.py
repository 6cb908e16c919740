"""What an e-board remembers of its own: every sensed change and lever press (vendor-neutral).

DGT boards keep such a log in their EEPROM (docs/protocol.md §6); a driver turns it into
a :class:`BoardMemory` so the game layer can replay it (:mod:`daemon.game.recovery`).
The log has no times: only the order of the changes and the clock times written at the
lever presses.

* Squares are python-chess squares *as the sensor numbers them*, like
  :class:`~drivers.observations.PlacementObserved` (a rotated board reports
  ``square ^ 63``; the tracker undoes it).
* A press names the physical clock side whose lever went down and that side's time
  after the press (increment included): the ``[%clk]`` of the move it completed.
* A power-up restarts the log with the whole placement standing at that moment; what was
  played while the board had no power is not in it.
* Changes logged before the oldest power-up still held cannot be placed on a known
  board (the buffer is cyclic and overwrote the start): they are left out and counted.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import chess

from drivers.observations import ClockSide

__all__ = [
    "BoardMemory",
    "LoggedChange",
    "LoggedPowerUp",
    "LoggedPress",
    "LoggedStep",
    "MemoryObserved",
    "memory_from_payload",
    "memory_payload",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedChange:
    """One sensor square changed: ``piece`` stands there now (None: emptied)."""

    square: chess.Square
    piece: chess.Piece | None


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedPress:
    """A lever went down on ``side``; that side's clock showed ``seconds`` after it."""

    side: ClockSide
    seconds: int

    def __post_init__(self) -> None:
        if self.seconds < 0:
            raise ValueError("clock times cannot be negative")


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedPowerUp:
    """The board got power with ``placement`` standing on it (sensor coordinates)."""

    placement: chess.BaseBoard


LoggedStep = LoggedChange | LoggedPress | LoggedPowerUp


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardMemory:
    """A board's log, oldest first, from its oldest power-up still held.

    Attributes:
        steps: the changes, presses and power-ups, in the order the board logged them.
        dropped: records left out (before the oldest power-up, or unreadable).
    """

    steps: tuple[LoggedStep, ...]
    dropped: int = 0

    def placements(self) -> Iterator[tuple[int, chess.BaseBoard]]:
        """``(index, placement after steps[index])`` for each step that changed it."""
        board: chess.BaseBoard | None = None
        for index, step in enumerate(self.steps):
            if isinstance(step, LoggedPowerUp):
                board = step.placement.copy()
            elif isinstance(step, LoggedChange) and board is not None:
                if board.piece_at(step.square) == step.piece:
                    continue
                if step.piece is None:
                    board.remove_piece_at(step.square)
                else:
                    board.set_piece_at(step.square, step.piece)
            else:
                continue
            yield index, board.copy()


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryObserved:
    """The board's memory arrived at ``at`` (asked for; about 8 s on a DGT board)."""

    memory: BoardMemory
    at: float


def memory_payload(memory: BoardMemory) -> dict[str, Any]:
    """The log as compact JSON for the journal: ``["c", square, "P"|""]``, ``["p", side,
    seconds]``, ``["u", board FEN]`` per step."""
    steps: list[list[Any]] = []
    for step in memory.steps:
        if isinstance(step, LoggedChange):
            steps.append(["c", step.square, step.piece.symbol() if step.piece else ""])
        elif isinstance(step, LoggedPress):
            steps.append(["p", step.side.value, step.seconds])
        else:
            steps.append(["u", step.placement.board_fen()])
    return {"steps": steps, "dropped": memory.dropped}


def memory_from_payload(payload: Mapping[str, Any]) -> BoardMemory:
    """The inverse of :func:`memory_payload`."""
    return BoardMemory(
        steps=tuple(_step(item) for item in payload["steps"]), dropped=int(payload["dropped"])
    )


def _step(item: Sequence[Any]) -> LoggedStep:
    kind = item[0]
    if kind == "c":
        symbol = str(item[2])
        piece = chess.Piece.from_symbol(symbol) if symbol else None
        return LoggedChange(square=int(item[1]), piece=piece)
    if kind == "p":
        return LoggedPress(side=ClockSide(item[1]), seconds=int(item[2]))
    if kind == "u":
        return LoggedPowerUp(placement=chess.BaseBoard(str(item[1])))
    raise ValueError(f"not a logged step: {item!r}")
