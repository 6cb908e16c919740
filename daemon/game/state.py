"""The game tracker's settings, states and transition table (docs/reconstruction.md).

```
             start position                  hold expired (nothing matched)
  WAITING ─────────────────► PLAYING ──────────────────────────────► OUT_OF_SYNC
     │                        ▲  │  ◄──────────────────────────────────  │  │
     │ accept_position        │  │      a placement matches again,       │  │
     └────────────────────────┘  │      or accept_position               │  │
                                 │ mate, stalemate, kings gesture        │  │ kings gesture
                                 ▼                                       │  │
                               ENDED ◄───────────────────────────────────┘──┘
                                 │ start position: a new game (also from PLAYING after
                                 └──────────────── several plies, and from OUT_OF_SYNC)
```
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from daemon.game.durations import ClockRules
from drivers.observations import ClockSide

__all__ = [
    "TRANSITIONS",
    "InvalidTransition",
    "TrackerSettings",
    "TrackerState",
    "Trigger",
    "next_state",
]


class InvalidTransition(RuntimeError):
    """A bug: the tracker tried a transition its table does not allow."""


class TrackerState(enum.Enum):
    """Where the tracker stands with its game."""

    WAITING = "waiting"  # no game yet: waiting for the start position
    PLAYING = "playing"  # the board matches the game, or is between two matches
    OUT_OF_SYNC = "out_of_sync"  # reported: nothing matched for the hold time
    ENDED = "ended"  # decided on the board (mate, stalemate, kings gesture)


class Trigger(enum.Enum):
    """What moves the tracker from one state to another."""

    START = "start"  # the start position stands (a new game)
    LOSE = "lose"  # the out-of-sync hold expired
    MATCH = "match"  # a placement matched the game again
    ACCEPT = "accept"  # the arbiter accepted the board as it stands
    END = "end"  # mate, stalemate, dead position or the kings gesture
    WITHDRAW = "withdraw"  # the board's memory withdrew the moves that ended the game


_S, _T = TrackerState, Trigger

#: Every allowed (state, trigger) → state. Anything else is a bug.
TRANSITIONS: Final[dict[tuple[TrackerState, Trigger], TrackerState]] = {
    (_S.WAITING, _T.START): _S.PLAYING,
    (_S.WAITING, _T.ACCEPT): _S.PLAYING,
    (_S.PLAYING, _T.START): _S.PLAYING,
    (_S.PLAYING, _T.LOSE): _S.OUT_OF_SYNC,
    (_S.PLAYING, _T.ACCEPT): _S.PLAYING,
    (_S.PLAYING, _T.END): _S.ENDED,
    (_S.OUT_OF_SYNC, _T.MATCH): _S.PLAYING,
    (_S.OUT_OF_SYNC, _T.ACCEPT): _S.PLAYING,
    (_S.OUT_OF_SYNC, _T.START): _S.PLAYING,
    (_S.OUT_OF_SYNC, _T.END): _S.ENDED,
    (_S.ENDED, _T.START): _S.PLAYING,
    (_S.ENDED, _T.WITHDRAW): _S.PLAYING,
}


def next_state(state: TrackerState, trigger: Trigger) -> TrackerState:
    """The state ``trigger`` leads to from ``state``.

    Raises:
        InvalidTransition: the table has no such transition (a bug in the caller).
    """
    try:
        return TRANSITIONS[state, trigger]
    except KeyError:
        raise InvalidTransition(f"{trigger.value} is not allowed in {state.value}") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class TrackerSettings:
    """Timers and choices of the game tracker; times in seconds.

    Attributes:
        settle_time: without a running clock, a move whose placement stood this long
            is complete (the only completion signal there is).
        clock_settle_time: with a running clock but no lever press, the same, longer:
            the press is the normal signal, this only catches a forgotten one.
        out_of_sync_hold: a placement matching nothing this long is reported.
        result_settle_time: the kings gesture must stand this long (docs/protocol.md §9.1).
        centre_king_hold: a king move onto d4, d5, e4 or e5 without a lever press waits
            at least this long: it may be the first half of the kings gesture.
        new_game_after_plies: the start position seen after this many plies is a new
            game; before that it is a takeback.
        white_side: the clock side White sits at; None = learn it from play.
        increment: the time control's increment for ``[%emt]``; None = as the clock adds it.
        clock_rules: each colour's time control, for ``[%emt]`` across period changes
            and under time odds; when given, ``increment`` is not used.
        chess960: the section plays Chess960: any of the 960 start positions starts a
            game, and castling is the Chess960 kind.
    """

    settle_time: float = 1.0
    clock_settle_time: float = 5.0
    out_of_sync_hold: float = 3.0
    result_settle_time: float = 2.0
    centre_king_hold: float = 5.0
    new_game_after_plies: int = 6
    white_side: ClockSide | None = None
    increment: float | None = None
    clock_rules: ClockRules | None = None
    chess960: bool = False

    def __post_init__(self) -> None:
        for name in (
            "settle_time",
            "clock_settle_time",
            "out_of_sync_hold",
            "result_settle_time",
            "centre_king_hold",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} cannot be negative")
        if self.new_game_after_plies < 1:
            raise ValueError("new_game_after_plies must be at least 1")
        if self.increment is not None and self.increment < 0:
            raise ValueError("increment cannot be negative")
