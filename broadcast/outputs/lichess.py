"""The lichess push, pure: which lichess round each game goes to, what to send, and when.

lichess will not poll a venue's laptop, so the daemon pushes: ``POST
/api/broadcast/round/{roundId}/push`` with an OAuth token (``study:write``) and the PGN as
the body; the reply lists each game's tags with its move count or an error
(docs/integrations.md, "What lichess expects"). A lichess round holds at most 100 games,
and lichess matches games by their tags, so a big event is split over several lichess rounds: one
:class:`LichessTarget` per section or board range (``[[lichess]]`` in the configuration),
each naming the lichess round of every event round.

Good conduct, the way lichess's own uploader behaves (docs/integrations.md):

* at most one push in flight, and at most one push a second per lichess round; changes
  meanwhile are coalesced and the next push carries the newest PGN;
* a change of the clock tags only (``WhiteClock``/``BlackClock``, every second while a
  clock runs) waits up to ``clock_interval`` for a move or goes then;
* 429 is honoured (``Retry-After``, else a minute); connection trouble and 5xx back off;
* 401, 403 and 404 stop the pushes to that lichess round until :meth:`LichessRouter.resume`
  (the arbiter fixed the token or the round); nothing is sent to it meanwhile.

:class:`RoundPushPlanner` plans one lichess round; :class:`LichessRouter` routes boards to
the planners. The asyncio shell is :mod:`broadcast.outputs.lichess_push`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from base.backoff import Backoff, BackoffPolicy
from broadcast.feed.messages import BoardState
from broadcast.feed.pgn import public_pgn
from broadcast.outputs.urls import check_url

__all__ = [
    "LICHESS",
    "MAX_GAMES",
    "STOPPING",
    "LichessRouter",
    "LichessTarget",
    "Refusal",
    "RoundPush",
    "RoundPushPlanner",
    "event_round",
    "push_url_for_round",
    "refusal_message",
    "summarize_reply",
]

log = logging.getLogger(__name__)

#: lichess keeps at most this many games in one broadcast round
#: (docs/integrations.md, "What lichess expects").
MAX_GAMES = 100
#: Where lichess is.
LICHESS = "https://lichess.org"
#: Statuses that stop the pushes to a round until the arbiter acts.
STOPPING = frozenset({401, 403, 404})

_CLOCK_TAG = re.compile(r'^\[(?:White|Black)Clock "[^"]*"\]\n', re.MULTILINE)


def push_url_for_round(round_id: str, *, base: str = LICHESS) -> str:
    """The push endpoint of the lichess broadcast round ``round_id``."""
    return f"{base.rstrip('/')}/api/broadcast/round/{round_id}/push"


def event_round(state: BoardState) -> str:
    """The event round of a board state (``"3"`` of ``"3.7"``)."""
    return state.round.split(".", 1)[0]


#: The default retry timing (seconds).
_LICHESS_RETRY = BackoffPolicy(initial=2.0, maximum=120.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class LichessTarget:
    """Where some boards go: one ``[[lichess]]`` table.

    Attributes:
        token: a lichess OAuth token with the ``study:write`` scope (never logged).
        rounds: the lichess round id of each event round (``{"1": "Ab12Cd34"}``).
        push_url: instead of ``rounds``, one push URL for whatever round is played.
        section: only the boards of this section (None: every section).
        boards: only the boards ``first..last`` (None: every board).
        base_url: lichess itself (tests point it to a loopback server).
        time_limit: seconds for one whole request.
        min_interval: seconds between two pushes to one lichess round.
        clock_interval: seconds a change of the clock tags alone may wait.
        retry: the delays between tries after a failure or 5xx.
    """

    token: str
    rounds: Mapping[str, str] = field(default_factory=dict)
    push_url: str | None = None
    section: str | None = None
    boards: tuple[int, int] | None = None
    base_url: str = LICHESS
    time_limit: float = 20.0
    min_interval: float = 1.0
    clock_interval: float = 10.0
    retry: BackoffPolicy = _LICHESS_RETRY

    def __post_init__(self) -> None:
        if not self.token:
            raise ValueError("a lichess token is needed to push")
        if (self.push_url is None) == (not self.rounds):
            raise ValueError("give either push_url or rounds")
        check_url(self.push_url or self.base_url)

    def takes(self, state: BoardState) -> bool:
        """Whether ``state``'s board is one of this target's boards."""
        if self.section is not None and state.section != self.section:
            return False
        return self.boards is None or self.boards[0] <= state.board <= self.boards[1]

    def url_for(self, state: BoardState) -> str | None:
        """The push URL of ``state``'s round; None when no lichess round is named for it."""
        if self.push_url is not None:
            return self.push_url
        round_id = self.rounds.get(event_round(state))
        return None if round_id is None else push_url_for_round(round_id, base=self.base_url)


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundPush:
    """One request: ``games`` games in ``body`` to ``url`` with ``token``, planned at ``at``."""

    url: str
    token: str
    body: str
    games: int
    at: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """lichess refused a round for good (401, 403, 404): pushes to it are stopped."""

    url: str
    status: int
    message: str

    @property
    def round_id(self) -> str:
        """The lichess round id in the URL."""
        return self.url.rstrip("/").split("/")[-2]


class RoundPushPlanner:
    """Pure core of the push to one lichess round: what to send next, and when.

    Call :meth:`receive_board` for every snapshot, then :meth:`next_push`; send the push it
    returns and report how it went with :meth:`receive_delivered`, :meth:`receive_refused`
    or :meth:`receive_failed`. While a push is in flight, :meth:`next_push` returns None:
    changes meanwhile are coalesced into the next push.
    """

    def __init__(self, url: str, target: LichessTarget) -> None:
        self.url = url
        self.target = target
        self._backoff = Backoff(target.retry)
        self._games: dict[tuple[str, int], str] = {}
        self._sent: str | None = None  # the last body lichess answered
        self._in_flight: RoundPush | None = None
        self._last_start = float("-inf")
        self._not_before = float("-inf")
        self.refusal: Refusal | None = None
        self.overflow = 0  # games beyond MAX_GAMES left out of the last body
        self.pushes = 0

    @property
    def in_flight(self) -> RoundPush | None:
        """The push sent and not answered yet."""
        return self._in_flight

    def receive_board(self, state: BoardState) -> None:
        """Take a board snapshot of this round; then call :meth:`next_push`."""
        key = (state.section, state.board)
        pgn = public_pgn(state).strip()
        if pgn:
            self._games[key] = pgn
        else:
            self._games.pop(key, None)

    def body(self) -> tuple[str, int]:
        """The round as lichess should have it now (at most 100 games), and its game count."""
        games = [self._games[key] for key in sorted(self._games)]
        self.overflow = max(0, len(games) - MAX_GAMES)
        kept = games[:MAX_GAMES]
        return "\n\n".join(kept) + "\n", len(kept)

    def due_at(self) -> float | None:
        """When the next push may go (loop time); None when nothing is to send."""
        if self._in_flight is not None or self.refusal is not None or not self._games:
            return None
        body, _ = self.body()
        if body == self._sent:
            return None
        due = max(self._not_before, self._last_start + self.target.min_interval)
        if self._sent is not None and _without_clocks(body) == _without_clocks(self._sent):
            due = max(due, self._last_start + self.target.clock_interval)
        return due

    def next_push(self, now: float) -> RoundPush | None:
        """The push to send now (then marked in flight), or None (see :meth:`due_at`)."""
        due = self.due_at()
        if due is None or now < due:
            return None
        body, games = self.body()
        self._in_flight = RoundPush(
            url=self.url, token=self.target.token, body=body, games=games, at=now
        )
        self._last_start = now
        self.pushes += 1
        return self._in_flight

    def receive_delivered(self, push: RoundPush) -> None:
        """lichess took ``push`` (2xx)."""
        self._finish(push, remember=True)
        self._backoff.reset()

    def receive_refused(self, push: RoundPush, status: int, message: str) -> Refusal | None:
        """lichess refused ``push`` (4xx other than 408, 425, 429).

        401, 403 and 404 stop this round until :meth:`resume` and return the
        :class:`Refusal`; another refusal (400, a PGN lichess cannot read) is not repeated:
        the round goes again once one of its games changes.
        """
        self._finish(push, remember=True)
        if status not in STOPPING:
            return None
        self.refusal = Refusal(url=self.url, status=status, message=message)
        return self.refusal

    def receive_failed(
        self, push: RoundPush, now: float, retry_after: float | None, *, timed_out: bool = False
    ) -> float:
        """``push`` failed (connection, timeout, 5xx, 429); returns the retry delay.

        ``retry_after`` is the server's ``Retry-After`` in seconds, if it sent one: the
        delay is exactly that. After a push that got no reply in time (``timed_out``),
        lichess may still be at work on it: the next one waits at least the time limit
        again, so a lichess slower than the limit (up to twice it) never has two pushes
        to one round at once.
        """
        self._finish(push, remember=False)
        delay = self._backoff.next_delay(retry_after)
        if timed_out:
            delay = max(delay, self.target.time_limit)
        self._not_before = now + delay
        return delay

    def resume(self) -> bool:
        """Push again after a refusal (the arbiter fixed it); True if the round was stopped."""
        stopped, self.refusal = self.refusal is not None, None
        self._sent = None
        return stopped

    def continue_from(self, previous: RoundPushPlanner) -> None:
        """Carry on where ``previous`` (same lichess round, same token) stood.

        What lichess has, the retry delay and a refusal stay; the games and settings are
        this planner's. A push still in flight is reported to ``previous``: at worst its
        body goes once more.
        """
        self._backoff = previous._backoff
        self._sent = previous._sent
        self._last_start, self._not_before = previous._last_start, previous._not_before
        self.refusal, self.pushes = previous.refusal, previous.pushes

    def _finish(self, push: RoundPush, *, remember: bool) -> None:
        if push is not self._in_flight:
            raise RuntimeError("reported a push that is not in flight")
        self._in_flight = None
        self._not_before = float("-inf")
        if remember:
            self._sent = push.body


def _without_clocks(body: str) -> str:
    return _CLOCK_TAG.sub("", body)


class LichessRouter:
    """Routes board snapshots to the lichess round of their target and event round.

    A board whose round changes goes on in the next lichess round; the previous lichess
    round keeps its last games. :meth:`next_push` picks the round whose push is due first.
    """

    def __init__(self, targets: Iterable[LichessTarget]) -> None:
        self.targets = tuple(targets)
        self.planners: dict[str, RoundPushPlanner] = {}
        self.unmapped: set[tuple[str, str]] = set()  # (section, event round) without a round

    def receive_board(self, state: BoardState) -> None:
        """Take a board snapshot."""
        for target in self.targets:
            if not target.takes(state) or not state.pgn.strip():
                continue
            url = target.url_for(state)
            if url is None:
                self._note_unmapped(state)
                continue
            planner = self.planners.get(url)
            if planner is None or planner.target.token != target.token:
                planner = self.planners[url] = RoundPushPlanner(url, target)
            planner.receive_board(state)

    def next_due(self) -> float | None:
        """When the next push is due (loop time), None when nothing waits."""
        times = [p.due_at() for p in self.planners.values()]
        return min((t for t in times if t is not None), default=None)

    def next_push(self, now: float) -> tuple[RoundPushPlanner, RoundPush] | None:
        """The push due first, if one is due at ``now``, with its planner (to report to)."""
        due = sorted(
            (at, url) for url, p in self.planners.items() if (at := p.due_at()) is not None
        )
        for at, url in due:
            planner = self.planners[url]
            push = planner.next_push(now) if at <= now else None
            if push is not None:
                return planner, push
        return None

    def continue_from(self, previous: LichessRouter) -> None:
        """Carry on from ``previous`` (the targets changed): see
        :meth:`RoundPushPlanner.continue_from`; a new token or round starts afresh."""
        for url, planner in self.planners.items():
            before = previous.planners.get(url)
            if before is not None and before.target.token == planner.target.token:
                planner.continue_from(before)

    def refusals(self) -> list[Refusal]:
        """The lichess rounds stopped by a refusal."""
        return [p.refusal for p in self.planners.values() if p.refusal is not None]

    def resume(self, round_id: str | None = None) -> list[str]:
        """Resume the stopped rounds (all, or the one with ``round_id``); their URLs."""
        return [
            url
            for url, planner in self.planners.items()
            if planner.refusal is not None
            and (round_id is None or planner.refusal.round_id == round_id)
            and planner.resume()
        ]

    def _note_unmapped(self, state: BoardState) -> None:
        key = (state.section, event_round(state))
        if key not in self.unmapped:
            self.unmapped.add(key)
            where = f'section "{key[0]}" ' if key[0] else ""
            log.warning(
                "= lichess: no lichess round for %sround %s: add it to rounds in [[lichess]];"
                " its games are not pushed",
                where,
                key[1],
            )


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


def refusal_message(body: bytes) -> str:
    """lichess's reason for a refusal: ``{"error": "..."}``, else the body's start."""
    try:
        data = json.loads(body)
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            return str(data["error"])
    except ValueError:
        pass
    return body[:300].decode("utf-8", "replace").strip()
