"""Round PGN assembly: every board's game as one PGN text, ordered by section then board.

Sections come in the order of their lowest board number (the top boards first).

The daemon puts the full game in :attr:`BoardState.pgn` (tags + main line with
``[%clk]``) for every board of the round, manual boards included (uploaders expect one
game per board, ``Round "r.b"``: docs/integrations.md, "What lichess expects").
:func:`format_clock` is the one writer of ``h:mm:ss`` clock times.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from broadcast.feed.messages import PGN_RESULTS, BoardState

__all__ = [
    "clock_tags",
    "format_clock",
    "game_pgn",
    "in_round_order",
    "round_pgn",
    "with_clock_tags",
]


def in_round_order(states: Iterable[BoardState]) -> list[BoardState]:
    """Boards by section, then board number; sections in the order of their first board."""
    states = list(states)
    first: dict[str, int] = {}
    for state in states:
        first[state.section] = min(first.get(state.section, state.board), state.board)
    return sorted(states, key=lambda s: (first[s.section], s.section, s.board))


def format_clock(seconds: float) -> str:
    """``h:mm:ss`` as in ``[%clk 1:29:58]`` and the ``WhiteClock`` tag; never negative.

    Rounded to the nearest whole second, not truncated: a reader (python-chess, lichess)
    takes ``[%clk h:mm:ss]`` as exactly that remaining time (docs/integrations.md, "What
    lichess expects"), so the nearest second is off by at most half a second, where
    truncation is off by up to a whole one, always short. The readings are whole seconds
    (docs/protocol.md §7.2); fractions only come from arithmetic on them, and a 90-minute
    clock computed as 5399.6 s (or 5399.9999) must read ``1:30:00`` as the clock showed, not
    ``1:29:59``. (The viewer's countdown rounds up instead: a display shows 0:00 only once
    the flag has fallen; a record states the time.)
    """
    total = max(0, round(seconds))
    return f"{total // 3600}:{total // 60 % 60:02d}:{total % 60:02d}"


def clock_tags(white: float, black: float) -> str:
    """The ``WhiteClock`` and ``BlackClock`` tag lines of a clock reading."""
    return f'[WhiteClock "{format_clock(white)}"]\n[BlackClock "{format_clock(black)}"]\n'


_CLOCK_TAGS = re.compile(r'^\[WhiteClock "[^"]*"\]\n\[BlackClock "[^"]*"\]\n', re.MULTILINE)


def with_clock_tags(pgn: str, white: float, black: float) -> str:
    """``pgn`` with its clock tags set to this reading (unchanged when it has none)."""
    return _CLOCK_TAGS.sub(lambda _: clock_tags(white, black), pgn, count=1)


#: The comment a provisional result gets in public PGN, just before the result.
PROVISIONAL_COMMENT = "{Provisional result: to be confirmed by the arbiter}"


def public_pgn(state: BoardState) -> str:
    """``state.pgn``, with :data:`PROVISIONAL_COMMENT` before a result not confirmed yet.

    The public PGN outputs (``/round.pgn``, ``/board/N.pgn``, lichess, the PGN folder)
    write this text (docs/broadcast.md, ``results``).
    """
    pgn, result = state.pgn, PGN_RESULTS.get(state.result, state.result)
    body = pgn.rstrip()
    if result == "*" or state.result_final or not body.endswith(result):
        return pgn
    head = body[: -len(result)]
    if head and not head[-1].isspace():
        return pgn  # the text does not end in the result token
    if head.rstrip().endswith(PROVISIONAL_COMMENT):
        return pgn
    return f"{head}{PROVISIONAL_COMMENT} {result}{pgn[len(body) :]}"


def game_pgn(state: BoardState) -> str:
    """One board's public game as PGN text ending in a newline ("" while it has none)."""
    text = public_pgn(state).strip()
    return text + "\n" if text else ""


def round_pgn(states: Iterable[BoardState]) -> str:
    """Every game of the round, by section then board, separated by blank lines."""
    return "\n".join(text for state in in_round_order(states) if (text := game_pgn(state)))
