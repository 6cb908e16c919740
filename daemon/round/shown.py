"""A board of the round as the broadcast shows it: its state, its clocks, its result (pure).

What :meth:`~daemon.round.core.RoundCore.board_state` and
:meth:`~daemon.round.core.RoundCore.clock_reading` answer, read off one
:class:`~daemon.round.board_game.BoardGame` and the round's
:class:`~daemon.arbiter.engine.AlertEngine` (the result an arbiter set or confirmed
comes first).
"""

from __future__ import annotations

from broadcast.feed.messages import FORFEITS, PGN_RESULTS, BoardState, ClockReading
from daemon.arbiter.engine import AlertEngine
from daemon.arbiter.results import ResultSource
from daemon.round.board_game import BoardGame, board_status, render_pgn

__all__ = ["board_state", "clock_reading", "shown_result"]


def shown_result(game: BoardGame, engine: AlertEngine, board: int) -> tuple[str, bool]:
    """The board's result (the arbiter's, else the game record's) and whether it is final."""
    result_state = engine.result_of(board)
    result = result_state.result if result_state else game.record.result
    return result, bool(result_state and result_state.confirmed)


def _termination(engine: AlertEngine, board: int) -> str | None:
    """``"time forfeit"`` once an arbiter confirmed a flag fall's result (FIDE 6.9,
    docs/daemon.md, "Game records"), ``"forfeit"`` (``"double forfeit"``) once one
    confirmed a forfeit; None leaves the record's Termination."""
    state = engine.result_of(board)
    if state is None or not state.confirmed:
        return None
    if state.source is ResultSource.FLAG_FALL:
        return "time forfeit"
    return FORFEITS.get(state.result)


def clock_reading(game: BoardGame, engine: AlertEngine, board: int) -> ClockReading | None:
    """The board's clocks as :func:`board_state` shows them (None: no reading yet)."""
    clock = game.clock
    if clock is None:
        return None
    result, _ = shown_result(game, engine, board)
    return ClockReading(
        board=board,
        white_clock=clock.white,
        black_clock=clock.black,
        running=clock.running if result == "*" else None,
        clock_at=clock.at,
    )


def board_state(
    game: BoardGame, engine: AlertEngine, board: int, now: float, *, unheard: bool
) -> BoardState:
    """The board as the broadcast should show it now (``unheard``: its e-board has not
    been heard since the daemon started)."""
    result, final = shown_result(game, engine, board)
    pgn, fen = render_pgn(game, PGN_RESULTS.get(result, result), _termination(engine, board))
    assert game.rendered is not None
    moves = game.rendered.moves
    clock = game.clock
    white_clock = black_clock = None
    running = None
    if clock is not None:
        white_clock, black_clock, running = clock.white, clock.black, clock.running
    return BoardState(
        board=board,
        section=game.section.name,
        round=f"{game.section.event.round}.{board}",
        white=game.config.white,
        black=game.config.black,
        white_elo=game.config.white_elo,
        black_elo=game.config.black_elo,
        pgn=pgn,
        fen=fen,
        moves=moves,
        last_move=moves[-1].uci if moves else None,
        white_clock=white_clock,
        black_clock=black_clock,
        running=running if result == "*" else None,
        clock_at=clock.at if clock else None,
        status=board_status(game, unheard),
        result=result,
        result_final=final,
        updated_at=now,
        serial=game.serial,
        port=game.port,
        variant=game.section.event.variant,
        recovered_plies=game.recovered_plies,
        battery=game.battery.percent if game.battery else None,
        battery_charging=bool(game.battery and game.battery.charging),
    )
