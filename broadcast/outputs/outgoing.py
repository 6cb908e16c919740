"""Outgoing HTTP of the outputs (the lichess push, the alert webhook), on httpx.

One ``POST`` with one time limit for the whole exchange, a reply whatever its status,
and the two facts every retrying client needs: how a status is sorted
(:func:`classify_status`) and how long a server asked us to wait
(:func:`parse_retry_after`). Retry timing itself is :class:`base.backoff.Backoff`.

Exceptions::

    PostFailed      connecting failed, the connection broke, or no complete reply came
                    within the time limit; worth a retry
    PostTimedOut    (a PostFailed) no complete reply within the time limit: the server
                    may still be working on the request

The time limit is the only one: the client has no timeouts of its own (httpx's default
would end a request after 5 s without a byte, before a limit of 10 or 20 s).

Addresses are checked at configuration time (:mod:`broadcast.outputs.urls`).
"""

from __future__ import annotations

import asyncio
import email.utils
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # imported by the first client: a daemon without these outputs needs none
    import httpx

__all__ = [
    "USER_AGENT",
    "Outcome",
    "PostFailed",
    "PostTimedOut",
    "Reply",
    "classify_status",
    "new_client",
    "parse_retry_after",
    "post",
]

USER_AGENT = "dgtcast/0.1"


class PostFailed(Exception):
    """One request failed without a complete reply; the caller may retry it."""


class PostTimedOut(PostFailed):
    """No complete reply within the time limit; the server may still be at work on it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """A complete reply: status, reason phrase, ``Retry-After`` if any, and the body."""

    status: int
    reason: str
    retry_after: str | None
    body: bytes


def new_client() -> httpx.AsyncClient:
    """A client for one output (connections are kept alive between its requests).

    Without timeouts of its own: :func:`post`'s time limit covers the whole exchange.
    """
    import httpx

    return httpx.AsyncClient(
        headers={"User-Agent": USER_AGENT}, follow_redirects=False, timeout=None
    )


async def post(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    *,
    headers: Mapping[str, str] | None = None,
    time_limit: float = 10.0,
) -> Reply:
    """POST ``body`` to ``url`` and return the reply, whatever its status.

    Raises:
        PostTimedOut: the whole exchange took longer than ``time_limit`` seconds.
        PostFailed: connecting failed, or the reply broke off.
    """
    import httpx  # loaded by new_client() already

    where = urlsplit(url).netloc
    try:
        async with asyncio.timeout(time_limit):
            response = await client.post(url, content=body, headers=dict(headers or {}))
    except TimeoutError:
        raise PostTimedOut(f"no reply from {where} in {time_limit:g}s") from None
    except httpx.HTTPError as exc:
        raise PostFailed(f"{where}: {type(exc).__name__}: {exc}") from exc
    return Reply(
        status=response.status_code,
        reason=response.reason_phrase,
        retry_after=response.headers.get("retry-after"),
        body=response.content,
    )


class Outcome(enum.Enum):
    """What to do after a reply."""

    DELIVERED = "delivered"  # 2xx
    RETRY = "retry"  # 408, 425, 429, 5xx: the same request may succeed later
    REFUSED = "refused"  # other statuses: repeating the same request will not help


def classify_status(status: int) -> Outcome:
    """Sort a reply status into delivered, retry later, or refused."""
    if 200 <= status < 300:
        return Outcome.DELIVERED
    if status in (408, 425, 429) or status >= 500:
        return Outcome.RETRY
    return Outcome.REFUSED


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delay-seconds or an HTTP date).

    ``now`` is the current wall-clock time (epoch seconds), used for the date form.
    Returns None when the header is absent or unreadable; never negative.
    """
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)
