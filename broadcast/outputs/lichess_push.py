"""The lichess push, the asyncio shell around :class:`broadcast.outputs.lichess.LichessRouter`.

:class:`LichessPusher` follows the public (delayed) boards, sends one push at a time
(httpx) and logs each reply in one line. A refusal (401, 403, 404) stops the pushes to
that lichess round and is handed to ``on_refusal`` (the daemon raises an arbiter alert
with lichess's message); :meth:`LichessPusher.resume` and
:meth:`LichessPusher.replace_targets` start it again once the arbiter fixed the token or
the round (docs/integrations.md).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from broadcast.feed.messages import BoardState
from broadcast.outputs.lichess import (
    LichessRouter,
    LichessTarget,
    Refusal,
    RoundPush,
    RoundPushPlanner,
    refusal_message,
    summarize_reply,
)
from broadcast.outputs.outgoing import (
    Outcome,
    PostFailed,
    PostTimedOut,
    Reply,
    classify_status,
    new_client,
    parse_retry_after,
    post,
)
from broadcast.outputs.output import BoardOutput, WorkLoop

if TYPE_CHECKING:  # the client is made by broadcast/outputs/outgoing.py
    import httpx

__all__ = ["TOO_MANY_REQUESTS_WAIT", "LichessPusher"]

log = logging.getLogger(__name__)

#: lichess asks API clients to wait a full minute after a 429 that names no delay.
TOO_MANY_REQUESTS_WAIT = 60.0


class LichessPusher(BoardOutput):
    """Pushes the boards to their lichess rounds; run :meth:`run` as a task.

    Args:
        targets: where the boards go (one per ``[[lichess]]`` table).
        on_refusal: called with each refusal that stopped a lichess round.
        wall_clock: for ``Retry-After`` dates.
    """

    def __init__(
        self,
        targets: Iterable[LichessTarget],
        *,
        on_refusal: Callable[[Refusal], None] | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.router = LichessRouter(targets)
        self.on_refusal = on_refusal
        self._wall_clock = wall_clock
        self._latest: dict[tuple[str, int], BoardState] = {}
        #: (lichess round URL, loop time) of the latest pushes sent, oldest first.
        self.recent: collections.deque[tuple[str, float]] = collections.deque(maxlen=256)
        self._work = WorkLoop()

    def publish_board(self, state: BoardState) -> None:
        """A board changed: push its round again soon."""
        self._latest[(state.section, state.board)] = state
        self.router.receive_board(state)
        self._work.wake()

    def resume(self, round_id: str | None = None) -> list[str]:
        """Push again to the stopped lichess rounds (or the one of ``round_id``)."""
        resumed = self.router.resume(round_id)
        for url in resumed:
            log.info("= lichess: pushing to %s again", url)
        self._work.wake()
        return resumed

    def replace_targets(self, targets: Iterable[LichessTarget]) -> None:
        """New ``[[lichess]]`` tables (a changed configuration): route every board again.

        Lichess rounds whose URL and token stay keep what lichess has (and a refusal);
        a new token or a new round id starts afresh.
        """
        router = LichessRouter(targets)
        for state in self._latest.values():
            router.receive_board(state)
        router.continue_from(self.router)
        self.router = router
        self._work.wake()

    async def run(self) -> None:
        """Push until cancelled; errors are logged and retried, never raised."""
        loop = asyncio.get_running_loop()
        async with new_client() as client:

            async def step() -> bool:
                due = self.router.next_push(loop.time())
                if due is None:
                    return False
                await self._send(client, *due)
                return True

            # the router is replaced when the configuration changes: ask the current one
            await self._work.run(step, deadline=lambda: self.router.next_due())

    async def _send(
        self, client: httpx.AsyncClient, planner: RoundPushPlanner, push: RoundPush
    ) -> None:
        body = push.body.encode()
        self.recent.append((push.url, push.at))
        log.info("> POST %s: %d games, %d bytes", push.url, push.games, len(body))
        if planner.overflow:
            log.warning(
                "= lichess round %s: %d games beyond %d are left out; split the boards over"
                " several lichess rounds ([[lichess]] boards = ...)",
                push.url,
                planner.overflow,
                push.games,
            )
        headers = {
            "Authorization": f"Bearer {push.token}",
            "Content-Type": "text/plain; charset=utf-8",
            "Accept": "application/json",
        }
        try:
            reply = await post(
                client, push.url, body, headers=headers, time_limit=planner.target.time_limit
            )
        except PostFailed as exc:
            timed_out = isinstance(exc, PostTimedOut)
            self._retry_later(planner, push, f"failed: {exc}", None, timed_out=timed_out)
            return
        self._receive_reply(planner, push, reply)

    def _receive_reply(self, planner: RoundPushPlanner, push: RoundPush, reply: Reply) -> None:
        outcome = classify_status(reply.status)
        if outcome is Outcome.RETRY:
            retry_after = parse_retry_after(reply.retry_after, self._wall_clock())
            if reply.status == 429 and retry_after is None:
                retry_after = TOO_MANY_REQUESTS_WAIT
            self._retry_later(planner, push, f"{reply.status} {reply.reason}", retry_after)
            return
        if outcome is Outcome.DELIVERED:
            planner.receive_delivered(push)
            summary, errors = summarize_reply(reply.body)
            log.info("< lichess %d: %s", reply.status, summary)
            for error in errors:
                log.warning("< lichess game error: %s", error)
            return
        message = refusal_message(reply.body)
        refusal = planner.receive_refused(push, reply.status, message)
        if refusal is None:
            log.warning(
                "< lichess refused the push (%d %s): %s; sent again after the next change",
                reply.status,
                reply.reason,
                message,
            )
            return
        log.warning(
            "< lichess refused round %s (%d %s): %s; pushes to it stop until the arbiter"
            " fixes the token or the round",
            refusal.round_id,
            reply.status,
            reply.reason,
            message,
        )
        if self.on_refusal is not None:
            self.on_refusal(refusal)

    def _retry_later(
        self,
        planner: RoundPushPlanner,
        push: RoundPush,
        why: str,
        retry_after: float | None,
        *,
        timed_out: bool = False,
    ) -> None:
        now = asyncio.get_running_loop().time()
        delay = planner.receive_failed(push, now, retry_after, timed_out=timed_out)
        log.warning("< lichess push %s; retry in %.1fs", why, delay)
