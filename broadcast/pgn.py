"""Round PGN assembly: every board's game as one PGN text, ordered by section then board.

Sections come in the order of their lowest board number (the top boards first).

The daemon puts the full game in :attr:`BoardState.pgn` (tags + main line with
``[%clk]``). A board without a PGN yet (a manual board, a board just announced) gets a
minimal one built from its fields, so that ``round.pgn`` always lists every board of the
round (tournament-rules.md §5: uploaders expect one game per board, ``Round "r.b"``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from broadcast.messages import BoardState, MoveInfo

__all__ = ["format_clock", "game_pgn", "in_round_order", "round_pgn"]

_LINE = 80


def in_round_order(states: Iterable[BoardState]) -> list[BoardState]:
    """Boards by section, then board number; sections in the order of their first board."""
    states = list(states)
    first: dict[str, int] = {}
    for state in states:
        first[state.section] = min(first.get(state.section, state.board), state.board)
    return sorted(states, key=lambda s: (first[s.section], s.section, s.board))


def format_clock(seconds: float) -> str:
    """``h:mm:ss`` as in ``[%clk 1:29:58]``; whole seconds, rounded down, never negative.

    tournament-rules.md §5: ``[%clk]`` is the mover's remaining time after the move.
    """
    total = max(0, math.floor(seconds))
    return f"{total // 3600}:{total // 60 % 60:02d}:{total % 60:02d}"


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _tags(state: BoardState) -> list[tuple[str, str]]:
    round_tag = f"{state.round}.{state.board}" if state.round else "?"
    tags = [
        ("Event", state.section or "?"),
        ("Site", "?"),
        ("Date", "????.??.??"),
        ("Round", round_tag),
        ("White", state.white or "?"),
        ("Black", state.black or "?"),
        ("Result", state.result),
    ]
    if state.white_elo is not None:
        tags.append(("WhiteElo", str(state.white_elo)))
    if state.black_elo is not None:
        tags.append(("BlackElo", str(state.black_elo)))
    return tags


def _move_tokens(moves: Iterable[MoveInfo]) -> list[str]:
    tokens: list[str] = []
    for ply, move in enumerate(moves):
        if ply % 2 == 0:
            tokens.append(f"{ply // 2 + 1}.")
        elif tokens and tokens[-1].endswith("}"):
            tokens.append(f"{ply // 2 + 1}...")
        tokens.append(move.san)
        if move.clock is not None:
            tokens.append(f"{{[%clk {format_clock(move.clock)}]}}")
    return tokens


def _wrap(tokens: list[str]) -> list[str]:
    lines: list[str] = []
    line = ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > _LINE:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    if line:
        lines.append(line)
    return lines


def _built_pgn(state: BoardState) -> str:
    """A minimal PGN from the state's fields; the moves start from the initial position."""
    head = [f'[{name} "{_quote(value)}"]' for name, value in _tags(state)]
    body = _wrap([*_move_tokens(state.moves), state.result])
    return "\n".join([*head, "", *body]) + "\n"


def game_pgn(state: BoardState) -> str:
    """One board's game as PGN text ending in a newline."""
    text = state.pgn.strip()
    return text + "\n" if text else _built_pgn(state)


def round_pgn(states: Iterable[BoardState]) -> str:
    """Every game of the round, by section then board, separated by blank lines."""
    return "\n".join(game_pgn(state) for state in in_round_order(states))
