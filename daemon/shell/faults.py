"""Faults stay where they happen: one board's session or one output, never the daemon.

A bug (an exception nobody expected) in one board's session, in the clock commands it
sends, in the round's timers or in one output (lichess push, MQTT, the PGN folder, the
webhook, LiveChess) must not end the daemon: every other board goes on. The shell
catches it where it happens and hands it to :class:`Faults`, which

* writes the traceback to the log **once** (ERROR; repeats of the same error in the
  same place are counted, with one WARNING line at the 2nd, 4th, 8th, ... time),
* raises **one** ``internal_error`` alert per place and error, naming the board (0: an
  output or the round's timers) and the error (docs/alerts.md), not journalled: it is
  about this process, not the round;

and :func:`keep_running` starts the failed part again from its state after a pause
(docs/faults.md, "A bug in one board or one output").
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from base.backoff import Backoff, BackoffPolicy
from broadcast.feed.alerts import AlertKind
from broadcast.outputs.output_alerts import OutputAlerts

__all__ = ["Faults", "error_text", "keep_running"]

log = logging.getLogger(__name__)


def error_text(exc: BaseException) -> str:
    """``ValueError: move numbers start at 1``: the first leaf of an exception group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Faults:
    """Reports the faults the daemon survives (log once, one alert each).

    Args:
        alerts: where the ``internal_error`` alerts go (the service's output alerts).
    """

    def __init__(self, alerts: OutputAlerts) -> None:
        self._alerts = alerts
        #: How often each fault was reported: (where, board, error text) -> count.
        self.counts: dict[tuple[str, int, str], int] = {}

    def report(self, where: str, board: int, exc: BaseException, *, then: str) -> None:
        """``exc`` happened in ``where`` (of ``board``; 0: not a board); ``then`` says
        what the daemon does about it (``"the session goes on"``)."""
        text = error_text(exc)
        key = (where, board, text)
        count = self.counts[key] = self.counts.get(key, 0) + 1
        if count > 1:
            if count & (count - 1) == 0:  # 2, 4, 8, ...: a bug that repeats, not a flood
                log.warning("= %s failed again (%s, %d times); %s", where, text, count, then)
            return
        log.error("= %s failed (%s); %s", where, text, then, exc_info=exc)
        whose = f"Board {board}" if board else "The daemon"
        action = (
            f"{whose}: an internal error in {where} ({text}); {then}, every other board"
            " goes on. The traceback is in the log: please report it. Check the board's"
            " game and clock."
            if board
            else f"{whose}: an internal error in {where} ({text}); {then}, the boards go on."
            " The traceback is in the log: please report it."
        )
        details = {"where": where, "error": text}
        self._alerts.raise_alert(AlertKind.INTERNAL_ERROR, details, action, board=board)


async def keep_running(
    where: str,
    board: int,
    job: Callable[[], Coroutine[Any, Any, None]],
    faults: Faults,
    *,
    backoff: BackoffPolicy | None = None,
) -> None:
    """Run ``job()`` until it returns or is cancelled; after a fault, report it and run
    it again (from the state its objects kept) after a growing pause."""
    pauses = Backoff(backoff or BackoffPolicy(initial=0.5, maximum=30.0))
    while True:
        try:
            await job()
            return
        except Exception as exc:  # a bug: it stays in this part of the daemon
            delay = pauses.next_delay()
            faults.report(where, board, exc, then=f"restarted in {delay:.1f} s")
        await asyncio.sleep(delay)
