"""Past rounds and standings on the broker, for relays: topics and payloads (pure).

A daemon keeps what its own server shows spectators beside the boards, once it is public
(after the public delay, results as ``[server] results`` says), retained, QoS 1::

    <prefix>/section/<key>/round/<n>    one past round of a section: every game as it ended
    <prefix>/section/<key>/standings    the section's standings and pairings

``<key>`` is the section's name percent-encoded into one topic level (``%`` for the one
section of an event without sections); the payload names the section too. A round's
payload is ``{"section": "Open", "round": 3, "at": 1782259000.0, "games": [<board
state>, …]}`` (``at``: when it became public), an empty payload takes a round back (it
is being played, after all). The standings are one section of ``/standings.json``
(docs/viewer.md). A relay (:mod:`broadcast.relay.server`) keeps the latest of each and
answers ``/rounds.json``, ``/round/N.pgn``, a past game and ``/standings.json`` from
memory; after a restart the retained messages give it everything again.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any
from urllib.parse import unquote

from pydantic import BaseModel, ValidationError

from broadcast.feed.archive import ArchivedRound
from broadcast.feed.events import encode_json
from broadcast.feed.inbound import board_state_from_broker
from broadcast.feed.messages import decode_untrusted_json, to_json_dict
from broadcast.feed.signing import AUTH
from broadcast.outputs.mqtt_wire import Topics

__all__ = [
    "SectionMessage",
    "read_section_message",
    "round_payload",
    "round_topic",
    "section_filters",
    "section_key",
    "standings_payload",
    "standings_topic",
]


def section_key(name: str) -> str:
    """The section's topic level (see :meth:`~broadcast.outputs.mqtt.Topics.section`)."""
    return Topics("", "").section(name, "").split("/")[2]


def round_topic(topics: Topics, section: str, number: int) -> str:
    """``<prefix>/section/<key>/round/<n>``."""
    return topics.section(section, f"round/{number}")


def standings_topic(topics: Topics, section: str) -> str:
    """``<prefix>/section/<key>/standings``."""
    return topics.section(section, "standings")


def section_filters(topics: Topics) -> list[str]:
    """The filters a relay subscribes to: every section's rounds and standings."""
    return [topics.section(None, "round/+"), topics.section(None, "standings")]


def round_payload(kept: ArchivedRound) -> bytes:
    """A past round's payload."""
    data = {
        "section": kept.section,
        "round": kept.round,
        "at": kept.at,
        "games": [to_json_dict(state) for state in kept.states],
    }
    return encode_json(data).encode()


def standings_payload(data: dict[str, Any]) -> bytes:
    """A section's standings (one entry of ``/standings.json``'s ``sections``)."""
    return encode_json(data).encode()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SectionMessage:
    """What one message of :func:`section_filters` says.

    Attributes:
        key: the section's topic level (a section known by its key until a payload names it).
        round: the round number (a round's topic), or None (the standings).
        kept: the round, or None when the topic was cleared (a round taken back).
        standings: the section's standings (the standings' topic; None when cleared).
    """

    key: str
    round: int | None = None
    kept: ArchivedRound | None = None
    standings: dict[str, Any] | None = None


class _RoundData(BaseModel):
    section: str
    round: int
    at: float
    games: list[dict[str, Any]]


class _StandingsData(BaseModel):
    section: str
    standings: list[dict[str, Any]]
    pairings: list[dict[str, Any]]


def read_section_message(parts: list[str], payload: bytes) -> SectionMessage | None:
    """Read one message; ``parts`` are the topic's levels after ``<prefix>/section/``.

    Untrusted (any client of the broker may write these topics): validated. None for a
    topic that is none of these.

    Raises:
        ValueError: a payload that is not what its topic says.
    """
    if len(parts) == 3 and parts[1] == "round" and parts[2].isascii() and parts[2].isdigit():
        number = int(parts[2])
        if not payload:
            return SectionMessage(key=parts[0], round=number)
        return SectionMessage(key=parts[0], round=number, kept=_read_round(parts, number, payload))
    if len(parts) == 2 and parts[1] == "standings":
        if not payload:
            return SectionMessage(key=parts[0])
        try:
            data = _StandingsData.model_validate_json(payload)
        except ValidationError as exc:
            raise ValueError(f"not a section's standings ({exc.error_count()} problems)") from None
        _check_key(parts[0], data.section)
        standings = decode_untrusted_json(payload)
        standings.pop(AUTH, None)  # a signature (the event key) is no part of the standings
        return SectionMessage(key=parts[0], standings=standings)
    return None


def _read_round(parts: list[str], number: int, payload: bytes) -> ArchivedRound:
    try:
        data = _RoundData.model_validate_json(payload)
    except ValidationError as exc:
        raise ValueError(f"not a past round ({exc.error_count()} problems)") from None
    _check_key(parts[0], data.section)
    if data.round != number:
        raise ValueError(f"round {data.round} on the topic of round {number}")
    states = tuple(board_state_from_broker(json.dumps(game).encode()) for game in data.games)
    return ArchivedRound(section=data.section, round=data.round, at=data.at, states=states)


def _check_key(key: str, section: str) -> None:
    if section_key(section) != key:
        shown = unquote(key) if key != section_key("") else ""
        raise ValueError(f'section "{section}" on the topic of section "{shown}"')
