"""Setting up a lichess broadcast and its rounds for an event (``dgtcast lichess setup``).

lichess's broadcast API (a token with the ``study:write`` scope; ``study:read`` too to
read back a private broadcast):

* ``POST /broadcast/new`` (form ``name``): a broadcast tournament; the answer's
  ``tour.id`` names it;
* ``GET /api/broadcast/{tourId}``: the tournament and its ``rounds`` (``id``, ``name``);
* ``POST /broadcast/{tourId}/new`` (form ``name``, ``startsAt`` in epoch milliseconds):
  a round; the answer's ``round.id`` is what pushes go to
  (``/api/broadcast/round/{roundId}/push``, :mod:`broadcast.outputs.lichess`).

:func:`plan_rounds` (pure) decides, for each wanted round, to keep the id the
configuration already has (when lichess still has that round), to reuse a round of the
broadcast with the same name, or to create it: running the set-up twice creates nothing
the second time. :class:`LichessBroadcasts` is the HTTP shell.

Exceptions::

    LichessSetupError   lichess refused or could not be reached (one line, with the fix)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx

from broadcast.outputs.outgoing import PostFailed, new_client, post

__all__ = [
    "ExistingRound",
    "LichessBroadcasts",
    "LichessSetupError",
    "RoundStep",
    "WantedRound",
    "plan_rounds",
]

_TIME_LIMIT = 20.0


class LichessSetupError(Exception):
    """lichess refused a request or could not be reached; the message is one line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WantedRound:
    """A round of the event as lichess should have it."""

    number: int
    name: str
    starts_at: int | None = None  # epoch milliseconds


@dataclass(frozen=True, slots=True, kw_only=True)
class ExistingRound:
    """A round the broadcast already has on lichess."""

    id: str
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundStep:
    """What the set-up does for one round: ``keep`` (the configured id), ``reuse`` (a
    round of the same name), or ``create``; ``id`` is None until created."""

    round: WantedRound
    action: str
    id: str | None = None


def plan_rounds(
    wanted: Sequence[WantedRound],
    existing: Sequence[ExistingRound],
    configured: Mapping[int, str],
) -> list[RoundStep]:
    """For each wanted round: keep, reuse or create (see the module docstring).

    Args:
        wanted: the event's rounds.
        existing: the broadcast's rounds on lichess (empty for a new broadcast).
        configured: event round → lichess round id, as the configuration has them.
    """
    ids = {round_.id for round_ in existing}
    by_name = {round_.name: round_.id for round_ in existing}
    steps = []
    for round_ in wanted:
        known = configured.get(round_.number)
        if known is not None and known in ids:
            steps.append(RoundStep(round=round_, action="keep", id=known))
        elif round_.name in by_name:
            steps.append(RoundStep(round=round_, action="reuse", id=by_name[round_.name]))
        else:
            steps.append(RoundStep(round=round_, action="create"))
    return steps


def _json(reply_body: bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(reply_body)
    except ValueError:
        raise LichessSetupError(f"{what}: lichess answered no JSON") from None
    if not isinstance(data, dict):
        raise LichessSetupError(f"{what}: lichess answered no JSON object")
    return data


def _id_in(data: Mapping[str, Any], key: str, what: str) -> str:
    part = data.get(key)
    ident = part.get("id") if isinstance(part, dict) else None
    if not isinstance(ident, str) or not ident:
        raise LichessSetupError(f"{what}: lichess's answer has no {key}.id")
    return ident


class LichessBroadcasts:
    """The broadcast API of one lichess server, with one token."""

    def __init__(self, server: str, token: str, client: httpx.AsyncClient | None = None) -> None:
        self.server = server.rstrip("/")
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        self.client = client or new_client()

    async def aclose(self) -> None:
        """Close the connections."""
        await self.client.aclose()

    async def _post(self, path: str, form: Mapping[str, str], what: str) -> dict[str, Any]:
        try:
            reply = await post(
                self.client,
                self.server + path,
                urlencode(form).encode(),
                headers=self.headers,
                time_limit=_TIME_LIMIT,
            )
        except PostFailed as exc:
            raise LichessSetupError(f"{what}: {exc}") from None
        _check(reply.status, reply.body, what)
        return _json(reply.body, what)

    async def broadcast(self, tour_id: str) -> tuple[str, list[ExistingRound]]:
        """The broadcast's name and rounds.

        Raises:
            LichessSetupError: no such broadcast, a refused token, no answer.
        """
        what = f"broadcast {tour_id}"
        try:
            response = await self.client.get(
                f"{self.server}/api/broadcast/{tour_id}",
                headers={"Authorization": self.headers["Authorization"]},
                timeout=_TIME_LIMIT,
            )
        except httpx.HTTPError as exc:
            raise LichessSetupError(f"{what}: {type(exc).__name__}: {exc}") from None
        _check(response.status_code, response.content, what)
        data = _json(response.content, what)
        tour = data.get("tour")
        name = tour.get("name", "") if isinstance(tour, dict) else ""
        rounds = [
            ExistingRound(id=str(item["id"]), name=str(item.get("name", "")))
            for item in data.get("rounds", [])
            if isinstance(item, dict) and "id" in item
        ]
        return str(name), rounds

    async def create_broadcast(self, name: str) -> str:
        """A new broadcast tournament; its id."""
        data = await self._post("/broadcast/new", {"name": name}, f'creating broadcast "{name}"')
        return _id_in(data, "tour", "creating the broadcast")

    async def create_round(self, tour_id: str, round_: WantedRound) -> str:
        """A new round of the broadcast; its id."""
        form = {"name": round_.name}
        if round_.starts_at is not None:
            form["startsAt"] = str(round_.starts_at)
        what = f'creating round "{round_.name}"'
        data = await self._post(f"/broadcast/{tour_id}/new", form, what)
        return _id_in(data, "round", what)


def _check(status: int, body: bytes, what: str) -> None:
    if 200 <= status < 300:
        return
    detail = body.decode("utf-8", "replace").strip()[:200]
    if status in (401, 403):
        raise LichessSetupError(
            f"{what}: lichess refused the token ({status} {detail}): it needs the study:write"
            " scope (create one at https://lichess.org/account/oauth/token/create)"
        )
    if status == 404:
        raise LichessSetupError(f"{what}: lichess has no such broadcast (404): check the id")
    raise LichessSetupError(f"{what}: lichess answered {status} {detail}")
