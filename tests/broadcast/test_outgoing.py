"""Outgoing POSTs on httpx: status classes, Retry-After, and real requests to a loopback server."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from pathlib import Path

import httpx
import pytest

from broadcast.outputs.outgoing import (
    Outcome,
    PostFailed,
    classify_status,
    new_client,
    parse_retry_after,
    post,
)
from broadcast.outputs.urls import check_url
from tests.broadcast.conftest import Answer, RecordingServer
from tests.mosquitto import free_port


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (200, Outcome.DELIVERED),
        (204, Outcome.DELIVERED),
        (301, Outcome.REFUSED),
        (400, Outcome.REFUSED),
        (401, Outcome.REFUSED),
        (404, Outcome.REFUSED),
        (408, Outcome.RETRY),
        (429, Outcome.RETRY),
        (500, Outcome.RETRY),
        (503, Outcome.RETRY),
    ],
)
def test_status_classes(status: int, outcome: Outcome) -> None:
    assert classify_status(status) is outcome


def test_retry_after_forms() -> None:
    now = 1_782_259_200.0  # 2026-06-24 00:00:00 UTC
    assert parse_retry_after("120", now) == 120.0
    assert parse_retry_after("Wed, 24 Jun 2026 00:01:30 GMT", now) == 90.0
    assert parse_retry_after("Tue, 23 Jun 2026 00:00:00 GMT", now) == 0.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None


def test_urls() -> None:
    assert check_url("http://[::1]:8080/x") == "http://[::1]:8080/x"
    for bad in ("ftp://example.org/", "http:///nohost", "example.org"):
        with pytest.raises(ValueError, match="URL"):
            check_url(bad)


async def test_post_reaches_a_real_server(http_server: RecordingServer) -> None:
    http_server.script.append(
        Answer(status=429, reason="Too Many Requests", headers=(("Retry-After", "7"),), body=b"x")
    )
    async with new_client() as client:
        reply = await post(client, http_server.url("/hook?a=b"), b"payload", headers={"X-T": "1"})
    assert (reply.status, reply.reason, reply.retry_after, reply.body) == (
        429,
        "Too Many Requests",
        "7",
        b"x",
    )
    request = http_server.requests[0]
    assert (request.method, request.path) == ("POST", "/hook?a=b")
    assert request.headers["host"] == f"127.0.0.1:{http_server.port}"
    assert request.headers["x-t"] == "1"
    assert request.headers["user-agent"].startswith("dgtcast/")
    assert request.body == b"payload"


async def test_post_reads_a_chunked_reply(http_server: RecordingServer) -> None:
    http_server.script.append(Answer(body=b"a chunked reply body", chunked=True))
    async with new_client() as client:
        reply = await post(client, http_server.url("/"), b"")
    assert reply.body == b"a chunked reply body"


async def test_post_to_a_closed_port_fails() -> None:
    async with new_client() as client:
        with pytest.raises(PostFailed, match="ConnectError"):
            await post(client, f"http://127.0.0.1:{free_port()}/", b"x", time_limit=2.0)


async def test_post_without_a_reply_times_out(http_server: RecordingServer) -> None:
    http_server.gate.clear()
    async with new_client() as client:
        with pytest.raises(PostFailed, match="no reply"):
            await post(client, http_server.url("/"), b"x", time_limit=0.2)


async def test_a_slow_reply_within_the_time_limit_is_read(http_server: RecordingServer) -> None:
    """The time limit is the only one: httpx's own default (5 s without a byte) used to
    end this exchange long before its limit of 7 s."""
    http_server.answer_delay = 5.5
    async with new_client() as client:
        reply = await post(client, http_server.url("/"), b"x", time_limit=7.0)
    assert reply.status == 200


async def test_post_when_the_peer_hangs_up_mid_reply() -> None:
    async def half_reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(half_reply, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with new_client() as client:
            with pytest.raises(PostFailed):
                await post(client, f"http://127.0.0.1:{port}/", b"")
    finally:
        server.close()
        await server.wait_closed()


def _self_signed(folder: Path) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("openssl is needed to make a test certificate")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


async def test_post_over_tls_checks_the_certificate(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    server = RecordingServer()
    await server.start(tls=server_side)
    try:
        server.script.append(Answer(body=b"secure"))
        trusting = ssl.create_default_context(cafile=str(cert))
        async with httpx.AsyncClient(verify=trusting) as client:
            reply = await post(client, server.url("/tls"), b"hello")
        assert (reply.status, reply.body, server.requests[0].body) == (200, b"secure", b"hello")
        async with new_client() as client:  # the system store does not trust our certificate
            with pytest.raises(PostFailed):
                await post(client, server.url("/tls"), b"hello")
    finally:
        await server.close()
