"""The alerts of the engine's inputs, as drafts: kind, details, the words, the episode (pure).

The :class:`~daemon.arbiter.engine.AlertEngine` decides when an alert is due and raises each
draft once per episode (updating the open alert of the same condition, see
:mod:`daemon.arbiter.book`); here is what each alert says (docs/alerts.md). The checks that
need a board's history (clock settings, late arrival) are in :mod:`daemon.arbiter.watch`.
"""

from __future__ import annotations

from typing import Any

from broadcast.feed.alerts import AlertKind
from daemon.arbiter.watch import AlertDraft
from daemon.game.events import (
    FlagFell,
    GameEnded,
    GapCandidates,
    MovesRecovered,
    OutOfSync,
    ResultSignalled,
)

__all__ = [
    "board_flooding",
    "board_offline",
    "clock_offline",
    "flag_fall",
    "game_over",
    "gap_ambiguous",
    "journal_failed",
    "moves_recovered",
    "out_of_sync",
    "result_contradicts_board",
    "result_signalled",
]

#: ``at`` of the board's current game: part of the episode of every game alert.
Game = float | None


def _condition_since(kind: AlertKind, board: int, at: float, action: str) -> AlertDraft:
    """A board's condition that holds from ``at`` until it clears (one episode each time)."""
    return AlertDraft(
        kind=kind, details={"since": at}, action=action, episode=(kind.value, board, at)
    )


def board_offline(board: int, at: float) -> AlertDraft:
    """The e-board stopped answering."""
    return _condition_since(
        AlertKind.BOARD_OFFLINE,
        board,
        at,
        f"Board {board}: the e-board is not answering. Check its USB cable and"
        " power; moves made meanwhile are recovered when it is back.",
    )


def board_flooding(board: int, at: float) -> AlertDraft:
    """The e-board reports far more sensor changes than hands can make."""
    return _condition_since(
        AlertKind.BOARD_FLOODING,
        board,
        at,
        f"Board {board}: the e-board reports more changes than hands can make (a"
        " faulty board, or a piece or sensor flickering): dgtcast keeps one placement"
        " in ten. Check the pieces and the board; swap it if it goes on.",
    )


def clock_offline(board: int, at: float) -> AlertDraft:
    """No clock answers through the e-board."""
    return _condition_since(
        AlertKind.CLOCK_OFFLINE,
        board,
        at,
        f"Board {board}: no clock answers through the e-board. Check the clock"
        " cable; clock times are not recorded meanwhile.",
    )


def journal_failed(reason: str, at: float) -> AlertDraft:
    """The journal cannot be written (board 0: the whole event)."""
    return AlertDraft(
        kind=AlertKind.JOURNAL_FAILED,
        details={"reason": reason},
        action=f"The journal cannot be written ({reason}). The boards are still read and"
        " served; what they send is held in memory and written as soon as the"
        " disk takes it. Free disk space or fix the disk, and do not stop dgtcast"
        " meanwhile: what is held would be lost.",
        episode=("journal_failed", at),
    )


def moves_recovered(board: int, game: Game, event: MovesRecovered) -> AlertDraft:
    """Plies played while dgtcast could not see the board, recovered (one per recovery)."""
    last = event.from_ply + event.plies - 1
    where = "the board's memory" if event.source == "memory" else "a search of the legal moves"
    return AlertDraft(
        kind=AlertKind.MOVES_RECOVERED,
        details={"from_ply": event.from_ply, "plies": event.plies, "source": event.source},
        action=f"Board {board}: plies {event.from_ply}-{last} were played while dgtcast could"
        f" not see the board; they were recovered from {where}. Check them against the"
        " scoresheets.",
        episode=("moves_recovered", board, game, event.from_ply, event.at),
        scope=(str(event.from_ply),),
    )


def gap_ambiguous(board: int, game: Game, event: GapCandidates) -> AlertDraft:
    """The board is ahead of the record and several move orders lead there."""
    shown = "; ".join(f"{i}) {' '.join(line)}" for i, line in enumerate(event.lines, 1))
    more = "" if event.complete else " (the search stopped early: there may be others)"
    return AlertDraft(
        kind=AlertKind.GAP_AMBIGUOUS,
        details={
            "from_ply": event.from_ply,
            "lines": [list(line) for line in event.lines],
            "complete": event.complete,
        },
        action=f"Board {board}: the board is ahead of the record from ply {event.from_ply} and"
        f" several move orders lead there{more}: {shown}. Choose the line played"
        " (choose_line), or reinstate the position (FIDE 7.5).",
        episode=("gap_ambiguous", board, game, event.at),
    )


def out_of_sync(board: int, game: Game, event: OutOfSync) -> AlertDraft:
    """The pieces match no position of the game (FIDE 7.5)."""
    return AlertDraft(
        kind=AlertKind.OUT_OF_SYNC,
        details={"expected_fen": event.expected_fen, "placement": event.placement},
        action=f"Board {board}: the pieces match no position of the game (an illegal move"
        " or knocked pieces). Reinstate the expected position (FIDE 7.5), or accept"
        " the board's position.",
        episode=("out_of_sync", board, game, event.at),
    )


def out_of_sync_for_good(board: int, game: Game, event: OutOfSync) -> AlertDraft:
    """Out of sync, and the board's memory, read again, does not hold the game as
    recorded: nothing will heal it but the arbiter."""
    return AlertDraft(
        kind=AlertKind.OUT_OF_SYNC,
        details={
            "expected_fen": event.expected_fen,
            "placement": event.placement,
            "memory": "holds nothing of the game as recorded",
        },
        action=f"Board {board}: the pieces match no position of the game, and the board's"
        " memory does not hold the game as recorded (it was overwritten, or another board"
        " is on this port), so dgtcast cannot recover the moves played since. Reinstate the"
        " expected position (FIDE 7.5); rebuild from the board's memory once the right"
        " board is back on its port; or accept the board's position: the record keeps its"
        " moves up to the last agreement, goes on from the board as it stands and says"
        " how many plies it lacks.",
        episode=("out_of_sync", board, game, "memory"),
        update_note="the board's memory does not hold the game as recorded",
    )


def clock_not_mode_23(board: int, game: Game) -> AlertDraft:
    """dgtcast is to add the increments (``dgt_mode = 23``) but the clock refuses its
    settings: it is not in mode 23 (docs/protocol.md §8)."""
    return AlertDraft(
        kind=AlertKind.CLOCK_MISMATCH,
        details={"check": "mode", "expected": 23},
        action=f"Board {board}: the clock refuses dgtcast's settings: it is not in mode 23,"
        " so dgtcast adds no increments and records the times the clock shows. Put the"
        " clock in option 23 and set it (dgtcast clocks set, or the arbiter page), or set"
        " the time control on the clock itself and remove dgt_mode = 23 from the"
        " configuration.",
        episode=("clock_mismatch", board, game, "mode"),
        scope=("mode",),
    )


def result_signalled(board: int, game: Game, event: ResultSignalled) -> AlertDraft:
    """The players signalled a result with the kings (docs/protocol.md §9.1)."""
    return AlertDraft(
        kind=AlertKind.RESULT_SIGNALLED,
        details={"result": event.result},
        action=f"Board {board}: the players put the kings on the centre squares for"
        f" {event.result}. Check the scoresheets and confirm the result.",
        episode=("result_signalled", board, game, event.result),
        update_note=f"the players signalled {event.result}",
    )


def result_contradicts_board(
    board: int, game: Game, result: str, decided: tuple[str, str], at: float
) -> AlertDraft:
    """An arbiter set a result other than the one the board decided (mate, a flag, the
    kings): it waits for a confirmation that it is meant."""
    board_says, how = decided
    return AlertDraft(
        kind=AlertKind.RESULT_CONTRADICTS_BOARD,
        details={"result": result, "board_result": board_says, "board_says": how},
        action=f"Board {board}: {result} was set, but the board says {board_says} ({how})."
        f" Check the board and the scoresheets; confirm {result} if it is meant, or set"
        " the result again.",
        episode=("result_contradicts_board", board, game, at),
        update_note=f"an arbiter set {result}",
    )


def game_over(board: int, game: Game, event: GameEnded) -> AlertDraft:
    """The position on the board ends the game (mate, stalemate, ...)."""
    return AlertDraft(
        kind=AlertKind.GAME_OVER,
        details={"result": event.result, "termination": event.termination},
        action=f"Board {board}: {event.termination} on the board, {event.result}. Check the"
        " position and confirm the result.",
        episode=("game_over", board, game, event.at),
    )


def flag_fall(board: int, game: Game, event: FlagFell, draw_odds: str | None) -> AlertDraft:
    """A flag fell (FIDE 6.9), under draw odds (Armageddon) when the section has them."""
    loser = event.color.capitalize()
    why = (
        f"{loser} loses" if event.result != "1/2-1/2" else "drawn, as the opponent cannot checkmate"
    )
    details: dict[str, Any] = {
        "color": event.color,
        "result": event.result,
        "provisional": event.provisional,
    }
    if draw_odds is not None:
        details["draw_odds"] = draw_odds
        details["winner"] = _winner(event.result, draw_odds)
    return AlertDraft(
        kind=AlertKind.FLAG_FALL,
        details=details,
        action=f"Board {board}: {loser}'s flag fell. Unless the game had already ended,"
        f" {why}: {event.result} (FIDE 6.9).{_draw_odds_rule(event.result, draw_odds)}"
        " Check the clock and the position, then confirm the result.",
        episode=("flag_fall", board, game, event.color),
    )


def _winner(result: str, draw_odds: str) -> str:
    """Who wins the game under draw odds: a draw counts for the colour holding them."""
    if result == "1/2-1/2":
        return draw_odds
    return "white" if result == "1-0" else "black"


def _draw_odds_rule(result: str, draw_odds: str | None) -> str:
    """The sentence an arbiter needs under draw odds (Armageddon), else nothing."""
    if draw_odds is None:
        return ""
    holder = draw_odds.capitalize()
    if result == "1/2-1/2":
        return f" With draw odds for {holder}, this draw counts as {holder}'s win."
    return f" Draw odds for {holder} do not change a decisive result."
