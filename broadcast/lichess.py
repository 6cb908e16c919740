"""Push the round's PGN to a lichess broadcast round on every change.

lichess will not poll a venue's laptop, so the daemon pushes: ``POST
/api/broadcast/round/{roundId}/push`` with an OAuth token (``study:write``) and the PGN as
the body, at most 100 games per request; the reply lists each game's tags with its move
count or an error (tournament-rules.md §5). lichess matches games by their tags, not by
their place in the body, so a round of more than 100 boards is pushed as consecutive
slices of 100 games (board order), each slice sent only when one of its games changed.

:class:`RoundPushPlanner` is the pure core: it holds the latest PGN per board, decides
what to send next (at most one request in flight, the newest PGN wins) and when to retry
(capped backoff, at least the server's ``Retry-After``). :class:`LichessPusher` is the
asyncio shell that sends the requests and logs each reply's summary.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from broadcast.messages import BoardState
from broadcast.outgoing import (
    Outcome,
    PostFailed,
    Reply,
    check_url,
    classify_status,
    new_client,
    parse_retry_after,
    post,
)
from broadcast.output import BoardOutput
from drivers.backoff import Backoff, BackoffPolicy

__all__ = [
    "MAX_GAMES_PER_PUSH",
    "LichessPusher",
    "LichessSettings",
    "RoundPush",
    "RoundPushPlanner",
    "push_url_for_round",
    "summarize_reply",
]

log = logging.getLogger(__name__)

#: lichess accepts at most this many games in one push (tournament-rules.md §5).
MAX_GAMES_PER_PUSH = 100


def push_url_for_round(round_id: str, *, base: str = "https://lichess.org") -> str:
    """The push endpoint of the lichess broadcast round ``round_id``."""
    return f"{base.rstrip('/')}/api/broadcast/round/{round_id}/push"


@dataclass(frozen=True, slots=True, kw_only=True)
class LichessSettings:
    """Where and how to push.

    Attributes:
        push_url: ``https://lichess.org/api/broadcast/round/{id}/push``.
        token: a lichess OAuth token with the ``study:write`` scope (never logged).
        section: push only the boards of this section; None pushes every board.
        max_games: games per request, 1..100.
        time_limit: seconds for one whole request.
        backoff_initial / backoff_cap: retry delays after an error, 5xx or 429.
    """

    push_url: str
    token: str
    section: str | None = None
    max_games: int = MAX_GAMES_PER_PUSH
    time_limit: float = 20.0
    backoff_initial: float = 2.0
    backoff_cap: float = 120.0

    def __post_init__(self) -> None:
        check_url(self.push_url)
        if not self.token:
            raise ValueError("a lichess token is needed to push")
        if not 1 <= self.max_games <= MAX_GAMES_PER_PUSH:
            raise ValueError(f"max_games must be within 1..{MAX_GAMES_PER_PUSH}")


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundPush:
    """One request: slice ``part`` (0-based) of the round, ``games`` games in ``body``."""

    part: int
    body: str
    games: int


class RoundPushPlanner:
    """Pure core of the lichess push: what to send next, and when.

    Call :meth:`receive_board` for every snapshot, then :meth:`next_push`; send the push it
    returns and report how it went with :meth:`receive_delivered`, :meth:`receive_refused`
    or :meth:`receive_failed`. While a push is in flight, :meth:`next_push` returns None:
    changes meanwhile are coalesced into the next push.
    """

    def __init__(
        self,
        *,
        section: str | None = None,
        max_games: int = MAX_GAMES_PER_PUSH,
        backoff: Backoff | None = None,
    ) -> None:
        self._section = section
        self._max_games = max_games
        self._backoff = backoff or Backoff(BackoffPolicy(initial=2.0, maximum=120.0))
        self._games: dict[tuple[str, int], str] = {}
        self._sent: dict[int, str] = {}  # part -> last body lichess answered
        self._in_flight: RoundPush | None = None
        self._not_before = float("-inf")

    @property
    def in_flight(self) -> RoundPush | None:
        """The push sent and not answered yet."""
        return self._in_flight

    def receive_board(self, state: BoardState) -> None:
        """Take a board snapshot; then call :meth:`next_push`."""
        if self._section is not None and state.section != self._section:
            return
        key = (state.section, state.board)
        pgn = state.pgn.strip()
        if pgn:
            self._games[key] = pgn
        else:
            self._games.pop(key, None)

    def parts(self) -> list[list[str]]:
        """The round's games as they should be on lichess now, in slices of ``max_games``."""
        games = [self._games[key] for key in sorted(self._games)]
        size = self._max_games
        return [games[i : i + size] for i in range(0, len(games), size)]

    def next_push(self, now: float) -> RoundPush | None:
        """The next request to send (now marked in flight), or None.

        None while a push is in flight, while a retry delay runs (see
        :meth:`next_attempt_at`), or when lichess already has every slice.
        """
        if self._in_flight is not None or now < self._not_before:
            return None
        for part, games in enumerate(self.parts()):
            body = "\n\n".join(games) + "\n"
            if self._sent.get(part) != body:
                self._in_flight = RoundPush(part=part, body=body, games=len(games))
                return self._in_flight
        return None

    def next_attempt_at(self) -> float | None:
        """When a held-back retry becomes due, or None if nothing waits on a delay."""
        if self._in_flight is None and self._not_before > float("-inf"):
            return self._not_before
        return None

    def receive_delivered(self, push: RoundPush) -> None:
        """lichess took ``push`` (2xx); then call :meth:`next_push`."""
        self._finish(push, remember=True)
        self._backoff.reset()

    def receive_refused(self, push: RoundPush) -> None:
        """lichess refused ``push`` for good (4xx other than 429); it is not repeated.

        The slice goes again once one of its games changes.
        """
        self._finish(push, remember=True)

    def receive_failed(self, push: RoundPush, now: float, retry_after: float | None) -> float:
        """``push`` failed (connection, timeout, 5xx, 429); returns the retry delay.

        ``retry_after`` is the server's ``Retry-After`` in seconds, if it sent one.
        """
        self._finish(push, remember=False)
        delay = self._backoff.next_delay(retry_after)
        self._not_before = now + delay
        return delay

    def _finish(self, push: RoundPush, *, remember: bool) -> None:
        if push is not self._in_flight:
            raise RuntimeError("reported a push that is not in flight")
        self._in_flight = None
        self._not_before = float("-inf")
        if remember:
            self._sent[push.part] = push.body


def summarize_reply(body: bytes) -> tuple[str, list[str]]:
    """Read lichess's push reply: a one-line summary and one line per game error.

    The reply is ``{"games": [{"tags": {...}, "moves": n} | {"tags": {...}, "error": "..."}]}``.
    """
    try:
        games = json.loads(body)["games"]
        if not isinstance(games, list):
            raise TypeError("games is not a list")
    except (ValueError, KeyError, TypeError):
        return f"unreadable reply {body[:200]!r}", []
    moves = sum(int(g.get("moves", 0)) for g in games if isinstance(g, dict))
    errors = [_game_error(g) for g in games if isinstance(g, dict) and "error" in g]
    ok = len(games) - len(errors)
    return f"{len(games)} games: {ok} ok ({moves} plies), {len(errors)} with errors", errors


def _game_error(game: dict[str, object]) -> str:
    tags = game.get("tags")
    tags = tags if isinstance(tags, dict) else {}
    who = f"{tags.get('White', '?')} - {tags.get('Black', '?')} (round {tags.get('Round', '?')})"
    return f"{who}: {game['error']}"


class LichessPusher(BoardOutput):
    """Pushes the round PGN to lichess on every change; run :meth:`run` as a task.

    :meth:`publish_board` never blocks: it records the snapshot and wakes the task.
    """

    def __init__(
        self,
        settings: LichessSettings,
        *,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._settings = settings
        backoff = Backoff(
            BackoffPolicy(initial=settings.backoff_initial, maximum=settings.backoff_cap)
        )
        self._planner = RoundPushPlanner(
            section=settings.section, max_games=settings.max_games, backoff=backoff
        )
        self._wall_clock = wall_clock
        self._wake = asyncio.Event()

    @property
    def planner(self) -> RoundPushPlanner:
        """The pure core (read-only use: what lichess has, what is pending)."""
        return self._planner

    def publish_board(self, state: BoardState) -> None:
        """A board changed: push the round again soon."""
        self._planner.receive_board(state)
        self._wake.set()

    async def run(self) -> None:
        """Push until cancelled; errors are logged and retried, never raised."""
        loop = asyncio.get_running_loop()
        async with new_client() as client:
            while True:
                self._wake.clear()
                push = self._planner.next_push(loop.time())
                if push is None:
                    await self._wait(self._planner.next_attempt_at())
                else:
                    await self._send(client, push)

    async def _wait(self, until: float | None) -> None:
        """Sleep until woken by a change, or until ``until`` (loop time)."""
        delay = None if until is None else until - asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(delay):
                await self._wake.wait()
        except TimeoutError:
            pass

    async def _send(self, client: httpx.AsyncClient, push: RoundPush) -> None:
        url = self._settings.push_url
        body = push.body.encode()
        log.info("> POST %s part %d: %d games, %d bytes", url, push.part, push.games, len(body))
        headers = {
            "Authorization": f"Bearer {self._settings.token}",
            "Content-Type": "text/plain; charset=utf-8",
            "Accept": "application/json",
        }
        try:
            reply = await post(
                client, url, body, headers=headers, time_limit=self._settings.time_limit
            )
        except PostFailed as exc:
            self._retry_later(push, f"failed: {exc}", None)
            return
        self._receive_reply(push, reply)

    def _receive_reply(self, push: RoundPush, reply: Reply) -> None:
        outcome = classify_status(reply.status)
        if outcome is Outcome.RETRY:
            retry_after = parse_retry_after(reply.retry_after, self._wall_clock())
            self._retry_later(push, f"{reply.status} {reply.reason}", retry_after)
            return
        summary, errors = summarize_reply(reply.body)
        if outcome is Outcome.DELIVERED:
            self._planner.receive_delivered(push)
            log.info("< lichess %d: %s", reply.status, summary)
            for error in errors:
                log.warning("< lichess game error: %s", error)
        else:
            self._planner.receive_refused(push)
            log.error(
                "< lichess refused the push (%d %s): %s; sent again after the next change",
                reply.status,
                reply.reason,
                reply.body[:300].decode("utf-8", "replace"),
            )

    def _retry_later(self, push: RoundPush, why: str, retry_after: float | None) -> None:
        now = asyncio.get_running_loop().time()
        delay = self._planner.receive_failed(push, now, retry_after)
        log.warning("< lichess push %s; retry in %.1fs", why, delay)
