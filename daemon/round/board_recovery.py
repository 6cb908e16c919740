"""Catching a board up from its own memory: a ``recovery`` input (:mod:`daemon.journal.inputs`)
on one board of the round (pure).

While the memory is read the tracker is paused like an offline board (no timer runs on a
placement that is behind); then the board's log is replayed into it
(:mod:`daemon.game.recovery`). A board still ahead of the game once the log is replayed
has the gap searched (:mod:`daemon.game.gap`): one legal line is played, several are
offered to the arbiter (``choose_line``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from daemon.game.events import GameEvent, GapCandidates
from daemon.game.gap import search_gap
from daemon.game.matching import rotated
from daemon.game.recovery import plan_recovery
from daemon.game.tracker import GameTracker
from daemon.journal.inputs import board_from_fen
from daemon.round.board_game import BoardGame, line_sans
from drivers.memory import memory_from_payload
from drivers.observations import ClockSide, LinkObserved, LinkState, PlacementObserved

__all__ = ["fill_gap", "replay_memory"]

#: Positions the gap search visits at most: about a second of one core (it runs on the
#: event loop); a longer search gives up and the board goes out of sync as before.
_GAP_NODES = 40_000


def replay_memory(
    game: BoardGame, tracker: GameTracker, payload: Mapping[str, Any], at: float
) -> None:
    """Pause the tracker while the memory is read; replay the log into it once read."""
    state = str(payload["state"])
    if state == "reading":
        game.catching_up = True
        tracker.receive_link(LinkObserved(state=LinkState.OFFLINE, at=at))
        return
    game.catching_up = False
    tracker.receive_link(LinkObserved(state=LinkState.ONLINE, at=at))
    if state != "read":
        return
    control = game.section.event.time_control
    memory = memory_from_payload(payload["memory"])
    plan = plan_recovery(tracker, memory, at, start_seconds=control.base + control.increment)
    if plan is None:
        return
    for observation in plan.observations:
        if isinstance(observation, PlacementObserved):
            tracker.receive_placement(observation)
        else:
            tracker.receive_clock(observation)


def fill_gap(
    game: BoardGame, tracker: GameTracker, payload: Mapping[str, Any], at: float
) -> list[GameEvent] | None:
    """The legal lines from the game to the placement the board shows once caught up.

    One line is played into the tracker; several are kept on ``game`` for the arbiter and
    offered as the :class:`GapCandidates` returned. None when nothing is searched (the
    memory is still being read, or no placement came with it).
    """
    placement = payload.get("placement")
    if payload["state"] == "reading" or not isinstance(placement, str):
        return None
    running = payload.get("running")
    side = ClockSide(running) if isinstance(running, str) else None
    sensed = board_from_fen(placement)
    if tracker.shows_game(sensed):
        return []
    to_move = None if side is None else tracker.color_at(side)
    real = rotated(sensed) if tracker.rotated else sensed
    game_board = tracker.board
    found = search_gap(game_board, real, to_move=to_move, node_limit=_GAP_NODES)
    if len(found.lines) == 1 and found.complete:
        tracker.play_line(found.lines[0], at)
        return []
    if not found.lines:
        return []
    game.candidates = tuple(tuple(m.uci() for m in line) for line in found.lines)
    lines = tuple(tuple(line_sans(game_board, line)) for line in found.lines)
    return [GapCandidates(from_ply=tracker.ply + 1, lines=lines, complete=found.complete, at=at)]
