"""Which results the public sees: ``results = "confirmed"`` or ``"provisional"``.

A result proposed by the board (a flag fall, the kings on the centre squares, a mate the
arbiter has not confirmed yet) is provisional until an arbiter confirms it. The public
outputs that follow the public hub (the viewer, ``/round.pgn``, lichess, the PGN folder)
show it according to the event's setting (``[server] results``, docs/broadcast.md):

* ``"confirmed"`` (default): the game stays ``*`` in public until the result is final;
* ``"provisional"``: the result is shown, marked where the format allows: the viewer
  marks it (``result_final`` is false), the PGN gets a comment before the result,
  ``{Provisional result: to be confirmed by the arbiter}``.

The arbiter channel (and MQTT's live board topics) always see results as they are.
:func:`public_state` is the pure rule; :class:`PublicResults` feeds a public hub with it
when there is no public delay (with one, :class:`~broadcast.feed.delay.PublicDelay` applies
it on release); under ``"provisional"`` without a delay the public hub is the live one.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Literal

from broadcast.feed.hub import Hub
from broadcast.feed.messages import PGN_RESULTS, BoardState, ClockReading

__all__ = ["PublicResults", "ResultsPolicy", "public_state"]

#: The ``results`` setting.
ResultsPolicy = Literal["confirmed", "provisional"]

_RESULT_TAG = re.compile(r'^\[Result "[^"]*"\]$', re.MULTILINE)


def public_state(state: BoardState, results: ResultsPolicy) -> BoardState:
    """``state`` as the public hub should hold it under ``results``.

    Under ``"confirmed"`` a provisional result becomes ``*`` (the ``Result`` tag and the
    result at the end of the moves too); under ``"provisional"`` the state is unchanged
    (the PGN outputs mark it: :func:`broadcast.feed.pgn.public_pgn`).
    """
    if results == "provisional" or state.result == "*" or state.result_final:
        return state
    pgn, result = state.pgn, PGN_RESULTS.get(state.result, state.result)
    body = pgn.rstrip()
    head = body[: -len(result)]
    if body.endswith(result) and (not head or head[-1].isspace()):
        pgn = head + "*" + pgn[len(body) :]
    pgn = _RESULT_TAG.sub('[Result "*"]', pgn, count=1)
    return dataclasses.replace(state, result="*", pgn=pgn)


class PublicResults:
    """Feeds ``public`` with every live state under a results policy (no public delay).

    Args:
        live: the hub the daemon publishes to.
        results: the policy.
        public: the hub to feed (a new one by default).
    """

    def __init__(self, live: Hub, results: ResultsPolicy, *, public: Hub | None = None) -> None:
        self.live = live
        self.results = results
        self.public = public if public is not None else Hub()
        self._remove_listener: Callable[[], None] | None = None

    def start(self) -> None:
        """Publish the live boards and follow every change."""
        if self._remove_listener is not None:
            return
        for state in self.live.states():
            self._receive(state)
        self._remove_listener = self.live.add_listener(self._receive, self._receive_clock)

    def close(self) -> None:
        """Stop following."""
        if self._remove_listener is not None:
            self._remove_listener()
            self._remove_listener = None

    def _receive(self, state: BoardState) -> None:
        self.public.publish_board(public_state(state, self.results))

    def _receive_clock(self, reading: ClockReading, now: float) -> None:
        """A reading changes no result: passed on as it is."""
        if not self.public.publish_clock(reading, now):
            state = self.live.state(reading.board)
            if state is not None:
                self._receive(state)
