"""Messages signed with the event key (broadcast/feed/signing.py)."""

from __future__ import annotations

import json

import pytest

from broadcast.feed.signing import EventKey, NotSigned

KEY = EventKey("sixteen-chars-at-least")
TOPIC = "event/daemon/hall-a/commands"
PAYLOAD = b'{"request": "r1", "command": {"type": "set_result", "board": 3, "result": "1-0"}}'


def test_a_signed_message_verifies_for_its_topic_only() -> None:
    signed = KEY.sign(TOPIC, PAYLOAD)
    KEY.verify(TOPIC, signed)
    assert json.loads(signed)["command"] == json.loads(PAYLOAD)["command"]
    spaced = json.dumps(json.loads(signed), indent=2).encode()  # the same JSON, other bytes
    KEY.verify(TOPIC, spaced)
    with pytest.raises(NotSigned, match="another key"):
        KEY.verify("event/daemon/hall-b/commands", signed)
    with pytest.raises(NotSigned, match="another key"):
        EventKey("another-key-for-sure").verify(TOPIC, signed)


@pytest.mark.parametrize(
    "payload",
    [
        PAYLOAD,
        b"[1, 2]",
        b"not json",
        b'{"auth": 5}',
        b"[" * 100_000,
    ],
)
def test_an_unsigned_message_is_refused(payload: bytes) -> None:
    with pytest.raises(NotSigned):
        KEY.verify(TOPIC, payload)


def test_a_changed_field_breaks_the_signature() -> None:
    data = json.loads(KEY.sign(TOPIC, PAYLOAD))
    data["command"]["result"] = "0-1"
    with pytest.raises(NotSigned, match="another key"):
        KEY.verify(TOPIC, json.dumps(data).encode())


def test_a_key_is_long_and_never_shown() -> None:
    with pytest.raises(ValueError, match="at least 16"):
        EventKey("short")
    assert "sixteen" not in repr(KEY)
