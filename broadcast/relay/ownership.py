"""The start-up ownership check: which live daemons claim this daemon's boards or sections.

At start, :func:`check_ownership` reads the other daemons' retained announcements
(``<prefix>/daemon/<id>/boards`` and ``…/status``): a board or section that a live
daemon owns is a clash. With an event key only signed announcements count, and a clash is
a second daemon of the event given the same boards: the daemon refuses to start. Without
one, a clash may be forged by anyone who can write to the broker: the daemon starts, keeps
its boards and raises an alert (docs/deployment.md, "Board ownership at start").
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import aiomqtt

from broadcast.feed.inbound import LIMITS
from broadcast.feed.signing import EventKey, NotSigned
from broadcast.outputs.mqtt_client import (
    MqttSettings,
    client_log,
    connected,
    new_client,
    raise_if_cancelled,
)
from broadcast.outputs.mqtt_wire import Ownership, Topics

__all__ = ["StartClaims", "check_ownership", "find_clashes"]

log = logging.getLogger(__name__)
_client_log = client_log("broadcast.relay.remote.client")


def _ranges(numbers: list[int]) -> str:
    parts: list[str] = []
    for _, run in itertools.groupby(enumerate(numbers), lambda pair: pair[1] - pair[0]):
        values = [n for _, n in run]
        parts.append(str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}")
    return ", ".join(parts)


def _clash_line(noun: str, listing: str, count: int, other: str) -> str:
    nouns, verb = (noun, "belongs") if count == 1 else (noun + "s", "belong")
    return (
        f'mqtt: {nouns} {listing} already {verb} to daemon "{other}", online on the broker:'
        f" give each daemon its own {noun}s"
    )


def find_clashes(
    own: Ownership, claims: Iterable[Ownership], online: Mapping[str, bool]
) -> list[str]:
    """One line per live daemon that already owns some of ``own``'s boards or sections.

    A daemon that is offline is no clash: its boards may be taken over (a spare PC).
    """
    lines = []
    for other in sorted(claims, key=lambda o: o.daemon_id):
        if other.daemon_id == own.daemon_id or not online.get(other.daemon_id, False):
            continue
        boards = sorted(set(own.boards) & set(other.boards))
        sections = sorted((set(own.sections) & set(other.sections)) - {""})
        if boards:
            lines.append(_clash_line("board", _ranges(boards), len(boards), other.daemon_id))
        if sections:
            names = ", ".join(f'"{s}"' for s in sections)
            lines.append(_clash_line("section", names, len(sections), other.daemon_id))
    return lines


@dataclass(frozen=True, slots=True)
class StartClaims:
    """What the broker says about this daemon's boards at start.

    Attributes:
        clashes: one line per live daemon that claims some of its boards or sections
            (only signed claims with an event key).
        same_id: a line when a daemon with this daemon's id is online (statuses are not
            signed: this may be forged even with a key).
        signed: whether the claims were checked with an event key.
    """

    clashes: tuple[str, ...] = ()
    same_id: str | None = None
    signed: bool = False

    @property
    def lines(self) -> list[str]:
        """Every problem, one line each (empty: none)."""
        return [*([self.same_id] if self.same_id else []), *self.clashes]

    @property
    def refusing(self) -> list[str]:
        """The problems that stop the daemon: clashes of signed claims, which only a
        daemon of the event can make; nothing forged stops a daemon from starting."""
        return list(self.clashes) if self.signed else []


@dataclass
class _ClaimsSeen:
    claims: dict[str, Ownership] = field(default_factory=dict)
    online: dict[str, bool] = field(default_factory=dict)
    probed: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    key: EventKey | None = None
    forged: list[str] = field(default_factory=list)  # daemons whose claim is not signed

    def receive(self, topic: str, payload: bytes, probe: str) -> None:
        parts = topic.split("/")
        if topic == probe:
            self.probed = True
        elif parts[-1] == "boards" and len(payload) <= LIMITS["boards"]:
            if not self._is_signed(topic, payload):
                self.forged.append(parts[-2])
            elif (claim := Ownership.from_payload(payload)) is not None:
                self.claims[parts[-2]] = claim
        elif parts[-1] == "status":
            self.online[parts[-2]] = payload == b"online"
        self.changed.set()

    def _is_signed(self, topic: str, payload: bytes) -> bool:
        """Whether a claim counts: signed with the event key, or no key is set."""
        if self.key is None or not payload:
            return True
        try:
            self.key.verify(topic, payload)
        except NotSigned:
            return False
        return True

    async def wait(self, condition: Callable[[], bool]) -> None:
        while not condition():
            self.changed.clear()
            await self.changed.wait()


async def check_ownership(
    settings: MqttSettings, own: Ownership, *, grace: float | None = None
) -> StartClaims | None:
    """Problems with claiming ``own`` on the broker; None when unreachable.

    Reads every retained announcement and status. When a daemon with our own id is still
    online (our previous run before a crash, not yet noticed by the broker), waits up to
    ``grace`` seconds (default 1.5 × keepalive, the broker's limit) for it to go.
    """
    grace = 1.5 * settings.keepalive if grace is None else grace
    seen = _ClaimsSeen(key=settings.event_key)
    try:
        async with asyncio.timeout(2 * settings.time_limit + grace):
            await _read_claims(settings, seen, grace)
    except (aiomqtt.MqttError, TimeoutError) as exc:
        log.warning("= mqtt: could not check board ownership (%s); starting anyway", exc)
        return None
    for daemon_id in sorted(set(seen.forged))[:20]:
        log.warning(
            '= mqtt: the announcement of boards of daemon "%s" is not signed with the event'
            " key: ignored (forged, or that daemon has another [mqtt] event_key)",
            daemon_id[:80],
        )
    clashes = find_clashes(own, seen.claims.values(), seen.online)
    same_id = None
    if seen.online.get(own.daemon_id, False):
        same_id = (
            f'mqtt.daemon_id: "{own.daemon_id}" is online on the broker already'
            " (another daemon with the same id?): give each daemon its own mqtt.daemon_id"
        )
    return StartClaims(tuple(clashes), same_id, signed=settings.event_key is not None)


async def _read_claims(settings: MqttSettings, seen: _ClaimsSeen, grace: float) -> None:
    topics = Topics(settings.prefix, settings.daemon_id)
    probe = topics.daemon(f"probe-{secrets.token_hex(4)}")
    identifier = f"dgtcast-{settings.daemon_id}-check-{secrets.token_hex(3)}"
    checker = new_client(settings, identifier, logger=_client_log)
    async with connected(checker) as client:
        pattern = [(topics.daemon(leaf, "+"), 1) for leaf in ("boards", "status")]
        await client.subscribe([*pattern, (probe, 1)])
        raise_if_cancelled()
        reader = asyncio.ensure_future(_read_into(client, seen, probe))
        try:
            await client.publish(probe, b"probe", qos=1)  # comes back after the retained ones
            raise_if_cancelled()
            await seen.wait(lambda: seen.probed)
            if seen.online.get(settings.daemon_id, False):
                log.warning("= mqtt: %s still online; waiting %.0fs", settings.daemon_id, grace)
                async with asyncio.timeout(grace):
                    await seen.wait(lambda: not seen.online.get(settings.daemon_id, False))
        except TimeoutError:
            pass  # still online after the grace: reported as a clash
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await reader


async def _read_into(client: aiomqtt.Client, seen: _ClaimsSeen, probe: str) -> None:
    async for message in client.messages:
        payload = message.payload if isinstance(message.payload, bytes) else b""
        seen.receive(message.topic.value, payload, probe)
