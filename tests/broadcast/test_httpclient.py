"""The HTTP/1.1 POST client: its reply parser, and real requests to a loopback server."""

from __future__ import annotations

import asyncio
import itertools
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broadcast.httpclient import (
    Backoff,
    HttpConnectError,
    HttpProtocolError,
    HttpReply,
    HttpTimeoutError,
    Outcome,
    ReplyParser,
    Target,
    build_request,
    classify_status,
    parse_retry_after,
    post,
)
from tests.broadcast.conftest import Answer, RecordingServer
from tests.mosquitto import free_port

LENGTH_REPLY = (
    b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
    b'X-Twice: a\r\nx-twice: b\r\n\r\n{"ok":true}'
)
CHUNKED_REPLY = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n"
)
EOF_REPLY = b"HTTP/1.1 500 Internal Server Error\r\n\r\nbroken, sorry"


def parse(chunks: list[bytes], *, eof: bool = False) -> HttpReply | None:
    parser = ReplyParser()
    for chunk in chunks:
        parser.receive_data(chunk)
    if eof:
        parser.receive_eof()
    return parser.reply()


def complete(chunks: list[bytes], *, eof: bool = False) -> HttpReply:
    reply = parse(chunks, eof=eof)
    assert reply is not None, "the reply should be complete"
    return reply


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def test_reply_with_content_length_whole() -> None:
    reply = complete([LENGTH_REPLY])
    assert (reply.status, reply.reason, reply.body) == (201, "Created", b'{"ok":true}')
    assert reply.header("content-type") == "application/json"
    assert reply.header("X-TWICE") == "a"


def test_reply_byte_by_byte_is_incomplete_until_the_last_byte() -> None:
    parser = ReplyParser()
    for i in range(len(LENGTH_REPLY)):
        assert parser.reply() is None
        parser.receive_data(LENGTH_REPLY[i : i + 1])
    reply = parser.reply()
    assert reply is not None
    assert reply.body == b'{"ok":true}'


def test_chunked_reply_byte_by_byte() -> None:
    reply = complete([CHUNKED_REPLY[i : i + 1] for i in range(len(CHUNKED_REPLY))])
    assert reply.body == b"hello world"


def test_reply_delimited_by_close() -> None:
    assert parse([EOF_REPLY]) is None
    reply = complete([EOF_REPLY], eof=True)
    assert (reply.status, reply.body) == (500, b"broken, sorry")


def test_bytes_after_a_complete_reply_are_ignored() -> None:
    reply = complete([LENGTH_REPLY + b"junk that is not ours"])
    assert reply.body == b'{"ok":true}'


def test_no_content_status_has_no_body() -> None:
    reply = complete([b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"])
    assert (reply.status, reply.body) == (204, b"")


@settings(max_examples=60, deadline=None)
@given(
    reply=st.sampled_from([LENGTH_REPLY, CHUNKED_REPLY]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
)
def test_any_split_gives_the_same_reply(reply: bytes, cuts: list[int]) -> None:
    assert parse(split_at(reply, cuts)) == parse([reply])


@pytest.mark.parametrize(
    "data",
    [
        b"SMTP/1.0 200 OK\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY",
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n",
    ],
)
def test_malformed_replies_raise_protocol_errors(data: bytes) -> None:
    with pytest.raises(HttpProtocolError):
        ReplyParser(max_body=1000).receive_data(data)


def test_close_in_the_middle_of_a_body_is_a_protocol_error() -> None:
    parser = ReplyParser()
    parser.receive_data(LENGTH_REPLY[:-3])
    with pytest.raises(HttpProtocolError):
        parser.receive_eof()


def test_request_bytes() -> None:
    target = Target.from_url("https://lichess.org/api/broadcast/round/abcd1234/push?x=1")
    data = build_request(target, b"body", {"Authorization": "Bearer t"})
    assert data == (
        b"POST /api/broadcast/round/abcd1234/push?x=1 HTTP/1.1\r\nHost: lichess.org\r\n"
        b"User-Agent: dgtcast/0.1\r\nContent-Length: 4\r\nConnection: close\r\n"
        b"Authorization: Bearer t\r\n\r\nbody"
    )


def test_targets_and_bad_urls() -> None:
    assert Target.from_url("http://[::1]:8080").host_header == "[::1]:8080"
    assert Target.from_url("http://example.org:80/x").host_header == "example.org"
    for bad in ("ftp://example.org/", "http:///nohost", "example.org"):
        with pytest.raises(ValueError, match="URL"):
            Target.from_url(bad)
    with pytest.raises(ValueError, match="line break"):
        build_request(Target.from_url("http://a/"), b"", {"X": "a\r\nInjected: 1"})


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


def test_backoff_doubles_up_to_the_cap_and_honours_retry_after() -> None:
    backoff = Backoff(initial=1.0, cap=5.0, retry_after_cap=100.0)
    assert [backoff.next_delay() for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert backoff.next_delay(at_least=30.0) == 30.0
    assert backoff.next_delay(at_least=1000.0) == 100.0
    backoff.reset()
    assert backoff.next_delay() == 1.0
    with pytest.raises(ValueError, match="initial"):
        Backoff(initial=0.0)


async def test_post_reaches_a_real_server(http_server: RecordingServer) -> None:
    http_server.script.append(Answer(status=202, reason="Accepted", body=b"queued"))
    reply = await post(http_server.url("/hook?a=b"), b"payload", headers={"X-Test": "1"})
    assert (reply.status, reply.body) == (202, b"queued")
    request = http_server.requests[0]
    assert (request.method, request.path, request.version) == ("POST", "/hook?a=b", "HTTP/1.1")
    assert request.headers["host"] == f"127.0.0.1:{http_server.port}"
    assert request.headers["x-test"] == "1"
    assert request.body == b"payload"


async def test_post_reads_a_chunked_reply(http_server: RecordingServer) -> None:
    http_server.script.append(Answer(body=b"a chunked reply body", chunked=True))
    reply = await post(http_server.url("/"), b"")
    assert reply.body == b"a chunked reply body"


async def test_post_to_a_closed_port_is_a_connect_error() -> None:
    with pytest.raises(HttpConnectError):
        await post(f"http://127.0.0.1:{free_port()}/", b"x", time_limit=2.0)


async def test_post_without_a_reply_times_out(http_server: RecordingServer) -> None:
    http_server.gate.clear()
    with pytest.raises(HttpTimeoutError):
        await post(http_server.url("/"), b"x", time_limit=0.2)


async def test_post_when_the_peer_hangs_up_mid_reply() -> None:
    async def half_reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(LENGTH_REPLY[:-4])
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(half_reply, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with pytest.raises(HttpProtocolError):
            await post(f"http://127.0.0.1:{port}/", b"")
    finally:
        server.close()
        await server.wait_closed()


def _self_signed(folder: Path) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a test certificate")
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


async def test_post_over_tls(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    server = RecordingServer()
    await server.start(tls=server_side)
    try:
        server.script.append(Answer(body=b"secure"))
        client_side = ssl.create_default_context(cafile=str(cert))
        reply = await post(server.url("/tls"), b"hello", ssl_context=client_side)
        assert (reply.status, reply.body, server.requests[0].body) == (200, b"secure", b"hello")
        with pytest.raises(HttpConnectError):  # the system store does not trust our certificate
            await post(server.url("/tls"), b"hello")
    finally:
        await server.close()
