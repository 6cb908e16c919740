"""Messages signed with the event's key: who may command a daemon or speak for it (pure).

With ``[mqtt] event_key`` (the same secret on every daemon and relay of an event:
docs/deployment.md, "The event key"), the messages that decide who acts are signed:

* a relay signs every arbiter command it sends (``<prefix>/daemon/<id>/commands``); a
  daemon carries out only commands signed with its key, so a client of the broker that
  does not know the key cannot act as an arbiter;
* a daemon signs every JSON object it publishes: its announcement of boards
  (``<prefix>/daemon/<id>/boards``), board states, clock readings, evaluations, its
  lists of open and resolved alerts (objects with a key), section rounds and standings,
  and its answers to commands. Relays take those only when signed; they route commands,
  and daemons at start look for clashes, only by signed announcements, so a forged one
  never takes a daemon's boards nor stops it from starting;
* a daemon carries out each signed command once (:class:`broadcast.relay.wire.ReplayGuard`).

The signature is the field ``"auth"`` of the JSON object: HMAC-SHA256 over the topic and
the object's canonical JSON (sorted keys, no spaces, ASCII) without ``"auth"``. The topic
is inside the MAC: a signed command for one daemon is not one for another, nor an
announcement one daemon made one of another's.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Any

from broadcast.feed.messages import decode_untrusted_json

__all__ = ["AUTH", "MIN_KEY", "EventKey", "NotSigned"]

#: The field that carries the signature.
AUTH = "auth"
#: The shortest event key accepted (characters): about 95 bits when random.
MIN_KEY = 16


class NotSigned(ValueError):
    """A message without a valid signature of the event key; ``str()`` says which."""


@dataclass(frozen=True, slots=True)
class EventKey:
    """The event's secret; never shown (``repr`` hides it)."""

    secret: str = field(repr=False)

    def __post_init__(self) -> None:
        if len(self.secret) < MIN_KEY:
            raise ValueError(f"an event key has at least {MIN_KEY} characters")

    def sign(self, topic: str, payload: bytes) -> bytes:
        """``payload`` (a JSON object) with the signature for ``topic`` added."""
        data = json.loads(payload)
        if not isinstance(data, dict):
            raise TypeError("only a JSON object can be signed")
        data.pop(AUTH, None)
        data[AUTH] = self._mac(topic, data)
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()

    def verify(self, topic: str, payload: bytes) -> None:
        """Check the signature of ``payload`` for ``topic``.

        Raises:
            NotSigned: no JSON object, no signature, or not this key's for this topic.
        """
        try:
            data = decode_untrusted_json(payload)
        except ValueError:
            raise NotSigned("not signed: no JSON") from None
        if not isinstance(data, dict) or not isinstance(data.get(AUTH), str):
            raise NotSigned("not signed with the event key")
        given = data.pop(AUTH)
        if not hmac.compare_digest(given.encode(), self._mac(topic, data).encode()):
            raise NotSigned("signed with another key than the event's")

    def _mac(self, topic: str, data: dict[str, Any]) -> str:
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        message = topic.encode() + b"\n" + canonical.encode()
        return hmac.new(self.secret.encode(), message, hashlib.sha256).hexdigest()
