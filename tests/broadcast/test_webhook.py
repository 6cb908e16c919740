"""The alert webhook, against a local HTTP server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from base.backoff import BackoffPolicy
from broadcast.feed.alerts import Alert, AlertKind, alert_from_json
from broadcast.feed.hub import Hub
from broadcast.outputs.webhook import AlertWebhook, WebhookSettings, alert_body
from tests.broadcast.conftest import Answer, RecordingServer
from tests.mosquitto import free_port


def alert(alert_id: int, **changes: Any) -> Alert:
    base = Alert(
        id=alert_id,
        kind=AlertKind.FLAG_FALL,
        board=3,
        at=1_782_259_300.0,
        details={"side": "white", "result": "0-1"},
        action="Confirm 0-1 unless Black cannot mate (FIDE 6.9)",
    )
    return replace(base, **changes)


def settings_for(url: str, **changes: Any) -> WebhookSettings:
    base = WebhookSettings(url=url, retry=BackoffPolicy(initial=0.01, maximum=0.05), max_attempts=3)
    return replace(base, **changes)


@contextlib.asynccontextmanager
async def delivering(webhook: AlertWebhook) -> AsyncIterator[AlertWebhook]:
    task = asyncio.create_task(webhook.run())
    try:
        yield webhook
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def ids(server: RecordingServer) -> list[int]:
    return [json.loads(r.body)["id"] for r in server.requests]


def test_the_body_is_the_alert_as_json() -> None:
    assert json.loads(alert_body(alert(7))) == {
        "type": "alert",
        "id": 7,
        "kind": "flag_fall",
        "board": 3,
        "at": 1_782_259_300.0,
        "details": {"side": "white", "result": "0-1"},
        "action": "Confirm 0-1 unless Black cannot mate (FIDE 6.9)",
        "state": "open",
        "acknowledged": False,
        "history": [],
    }
    resolved = alert(7).resolve(1_782_259_400.0, "an arbiter confirmed the result 0-1", "arbiter")
    assert alert_from_json(alert_body(resolved)) == resolved  # the one wire form, both ways


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="URL"):
        WebhookSettings(url="mailto:arbiter@example.org")
    with pytest.raises(ValueError, match="line breaks"):
        WebhookSettings(url="http://h/", headers={"X": "1\r\nY: 2"})
    with pytest.raises(ValueError, match="max_attempts"):
        WebhookSettings(url="http://h/", max_attempts=0)


async def test_an_alert_is_posted_as_json(http_server: RecordingServer) -> None:
    settings = settings_for(http_server.url("/hooks/arbiter"), headers={"Authorization": "K 1"})
    async with delivering(AlertWebhook(settings)) as webhook:
        webhook.publish_alert(alert(1))
        webhook.publish_alert(alert(2, kind="late_arrival"))
        await http_server.wait_for_requests(2)
    first = http_server.requests[0]
    assert (first.method, first.path) == ("POST", "/hooks/arbiter")
    assert first.headers["content-type"] == "application/json"
    assert first.headers["authorization"] == "K 1"
    assert first.body == alert_body(alert(1))
    assert ids(http_server) == [1, 2]


async def test_errors_are_retried_until_delivered(http_server: RecordingServer) -> None:
    http_server.script.extend(
        [
            Answer(status=500, reason="Internal Server Error"),
            Answer(status=503, reason="Service Unavailable", headers=(("Retry-After", "0"),)),
        ]
    )
    async with delivering(AlertWebhook(settings_for(http_server.url("/")))) as webhook:
        webhook.publish_alert(alert(1))
        await http_server.wait_for_requests(3)
        webhook.publish_alert(alert(2))
        async with asyncio.timeout(10):
            await webhook.wait_idle()
    assert ids(http_server) == [1, 1, 1, 2]
    assert (webhook.delivered, webhook.given_up) == (2, 0)


async def test_attempts_are_bounded_and_the_next_alert_still_goes(
    http_server: RecordingServer, caplog: pytest.LogCaptureFixture
) -> None:
    http_server.script.extend([Answer(status=502, reason="Bad Gateway")] * 3)
    async with delivering(AlertWebhook(settings_for(http_server.url("/")))) as webhook:
        webhook.publish_alert(alert(1))
        webhook.publish_alert(alert(2))
        await http_server.wait_for_requests(4)
    assert ids(http_server) == [1, 1, 1, 2]
    assert webhook.given_up == 1
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert errors == ["= webhook gave up alert 1 (flag_fall, board 3)"]
    caplog.clear()  # the error was expected


async def test_a_refusal_is_not_retried(
    http_server: RecordingServer, caplog: pytest.LogCaptureFixture
) -> None:
    http_server.script.append(Answer(status=404, reason="Not Found"))
    async with delivering(AlertWebhook(settings_for(http_server.url("/")))) as webhook:
        webhook.publish_alert(alert(1))
        webhook.publish_alert(alert(2))
        await http_server.wait_for_requests(2)
    assert ids(http_server) == [1, 2]
    assert webhook.given_up == 1
    caplog.clear()  # the error was expected


async def test_an_absent_receiver_never_blocks_the_daemon(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = settings_for(f"http://127.0.0.1:{free_port()}/", max_attempts=2, max_pending=5)
    async with delivering(AlertWebhook(settings)) as webhook:
        for alert_id in range(1, 21):
            webhook.publish_alert(alert(alert_id))  # returns at once: nothing awaits
        assert (webhook.pending, webhook.dropped) == (5, 15)
        async with asyncio.timeout(10):
            await webhook.wait_idle()
    assert (webhook.given_up, webhook.delivered) == (5, 0)
    connect_failures = [r for r in caplog.records if "ConnectError" in r.getMessage()]
    assert len(connect_failures) == 5 * 2
    caplog.clear()  # errors were expected


async def test_a_hanging_receiver_keeps_the_queue_bounded(
    http_server: RecordingServer, caplog: pytest.LogCaptureFixture
) -> None:
    http_server.gate.clear()
    settings = settings_for(http_server.url("/"), max_pending=10, time_limit=5.0)
    async with delivering(AlertWebhook(settings)) as webhook:
        webhook.publish_alert(alert(0))
        await http_server.wait_for_requests(1)
        for alert_id in range(1, 101):
            webhook.publish_alert(alert(alert_id))
        assert (webhook.pending, webhook.dropped) == (10, 90)
        http_server.gate.set()
        await http_server.wait_for_requests(11)
    assert ids(http_server) == [0, *range(91, 101)]
    assert len([r for r in caplog.records if "queue full" in r.getMessage()]) == 90
    caplog.clear()  # the drops were expected


async def test_following_the_hub_sends_each_version_once(http_server: RecordingServer) -> None:
    hub = Hub()
    webhook = AlertWebhook(settings_for(http_server.url("/")))
    hub.publish_alert(alert(1))  # open before following starts: sent too
    task = asyncio.create_task(webhook.serve(hub))
    try:
        await http_server.wait_for_requests(1)
        first = alert(1).resolve(1_782_259_400.0, "the e-board answers again")
        hub.publish_alert(first)  # the resolution: a new version
        await http_server.wait_for_requests(2)
        hub.publish_alert(first)  # the same version again: not sent
        hub.publish_alert(alert(2))
        await http_server.wait_for_requests(3)
        hub.publish_alert(alert(3))
        await http_server.wait_for_requests(4)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert ids(http_server) == [1, 1, 2, 3]
    states = [json.loads(r.body)["state"] for r in http_server.requests]
    assert states == ["open", "resolved", "open", "open"]
