"""A small asyncio HTTP/1.1 client for POSTing to lichess and to webhooks, plus retry timing.

Only what the outputs need: one ``POST`` per connection (``Connection: close``), over
``http`` or ``https`` (TLS through :mod:`ssl`), a reply read by ``Content-Length``,
``Transfer-Encoding: chunked`` or until the peer closes (RFC 9112 §6.3).

The reply parser is sans-I/O (:class:`ReplyParser`: ``receive_data`` / ``receive_eof`` then
``reply()``); :func:`post` is the asyncio recipe around it, with one overall timeout.

Exceptions::

    HttpError                  any failure of one request; worth a retry
    ├── HttpConnectError       could not connect, or the connection broke
    ├── HttpTimeoutError       no complete reply within the timeout
    └── HttpProtocolError      the peer sent something that is not HTTP/1.1

Our own misuse (a URL that is not http/https) raises :class:`ValueError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import enum
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = [
    "Backoff",
    "HttpConnectError",
    "HttpError",
    "HttpProtocolError",
    "HttpReply",
    "HttpTimeoutError",
    "Outcome",
    "ReplyParser",
    "Target",
    "build_request",
    "classify_status",
    "parse_retry_after",
    "post",
]

USER_AGENT = "dgtcast/0.1"
MAX_HEADER_BYTES = 64 * 1024


class HttpError(Exception):
    """One request failed; the caller may retry it."""


class HttpConnectError(HttpError):
    """The connection could not be opened, or it broke before the reply was complete."""


class HttpTimeoutError(HttpError):
    """No complete reply arrived within the timeout."""


class HttpProtocolError(HttpError):
    """The peer's reply is not valid HTTP/1.1 (or is larger than we accept)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpReply:
    """A complete reply: status, headers (names lower-cased, in order) and body."""

    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or None."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """Where a URL points: scheme, host, port and the request target (path + query)."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def from_url(cls, url: str) -> Target:
        """Split an ``http://`` or ``https://`` URL; anything else is our misuse."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls(scheme=parts.scheme, host=parts.hostname, port=port, path=path)

    @property
    def host_header(self) -> str:
        """The ``Host`` header value: the port only when it is not the scheme's default."""
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


def build_request(target: Target, body: bytes, headers: Mapping[str, str]) -> bytes:
    """The bytes of one ``POST`` with ``body``; ``headers`` add to (or override) ours."""
    fields = {
        "Host": target.host_header,
        "User-Agent": USER_AGENT,
        "Content-Length": str(len(body)),
        "Connection": "close",
    }
    for name, value in headers.items():
        if "\r" in name + value or "\n" in name + value:
            raise ValueError(f"header {name!r} contains a line break")
        fields[name] = value
    head = f"POST {target.path} HTTP/1.1\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in fields.items())
    return (head + "\r\n").encode("latin-1") + body


class _Stage(enum.Enum):
    HEAD = "head"
    BODY = "body"  # Content-Length known
    CHUNK_SIZE = "chunk_size"
    CHUNK_DATA = "chunk_data"
    TRAILER = "trailer"
    UNTIL_EOF = "until_eof"
    DONE = "done"


class ReplyParser:
    """Sans-I/O reader of one HTTP/1.1 reply.

    Feed bytes with :meth:`receive_data` (and :meth:`receive_eof` when the peer closes),
    then call :meth:`reply`, which is None until the reply is complete. Malformed input
    raises :class:`HttpProtocolError`.
    """

    def __init__(self, *, max_body: int = 1 << 20) -> None:
        self._buffer = bytearray()
        self._stage = _Stage.HEAD
        self._max_body = max_body
        self._status = 0
        self._reason = ""
        self._headers: tuple[tuple[str, str], ...] = ()
        self._body = bytearray()
        self._remaining = 0

    def receive_data(self, data: bytes) -> None:
        """Take bytes from the connection; then call :meth:`reply`."""
        self._buffer += data
        while self._stage is not _Stage.DONE and self._step():
            pass

    def receive_eof(self) -> None:
        """The peer closed; a reply delimited by the close is complete now."""
        if self._stage is _Stage.UNTIL_EOF:
            self._stage = _Stage.DONE
        elif self._stage is not _Stage.DONE:
            raise HttpProtocolError(f"connection closed in the reply's {self._stage.value}")

    def reply(self) -> HttpReply | None:
        """The complete reply, or None while more bytes are needed."""
        if self._stage is not _Stage.DONE:
            return None
        return HttpReply(
            status=self._status, reason=self._reason, headers=self._headers, body=bytes(self._body)
        )

    def _step(self) -> bool:
        """Advance one stage if the buffer allows it; False when more bytes are needed."""
        steps = {
            _Stage.HEAD: self._read_head,
            _Stage.BODY: self._read_body,
            _Stage.CHUNK_SIZE: self._read_chunk_size,
            _Stage.CHUNK_DATA: self._read_chunk_data,
            _Stage.TRAILER: self._read_trailer,
            _Stage.UNTIL_EOF: self._read_until_eof,
        }
        return steps[self._stage]()

    def _take_line(self) -> bytes | None:
        end = self._buffer.find(b"\r\n")
        if end < 0:
            if len(self._buffer) > MAX_HEADER_BYTES:
                raise HttpProtocolError("line too long")
            return None
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 2]
        return line

    def _read_head(self) -> bool:
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > MAX_HEADER_BYTES:
                raise HttpProtocolError("reply head too long")
            return False
        lines = bytes(self._buffer[:end]).decode("latin-1").split("\r\n")
        del self._buffer[: end + 4]
        self._status, self._reason = _parse_status_line(lines[0])
        self._headers = tuple(_parse_header(line) for line in lines[1:])
        self._stage = self._body_stage()
        return True

    def _body_stage(self) -> _Stage:
        """How the body is delimited (RFC 9112 §6.3)."""
        if self._status in (204, 304) or 100 <= self._status < 200:
            return _Stage.DONE
        headers = dict(self._headers)
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return _Stage.CHUNK_SIZE
        if "content-length" in headers:
            self._remaining = _parse_length(headers["content-length"])
            self._check_size(self._remaining)
            return _Stage.BODY if self._remaining else _Stage.DONE
        return _Stage.UNTIL_EOF

    def _check_size(self, extra: int) -> None:
        if len(self._body) + extra > self._max_body:
            raise HttpProtocolError(f"reply body larger than {self._max_body} bytes")

    def _read_body(self) -> bool:
        if not self._buffer:
            return False
        taken = self._buffer[: self._remaining]
        self._body += taken
        del self._buffer[: len(taken)]
        self._remaining -= len(taken)
        if self._remaining == 0:
            self._stage = _Stage.DONE
        return True

    def _read_chunk_size(self) -> bool:
        line = self._take_line()
        if line is None:
            return False
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise HttpProtocolError(f"bad chunk size {size_text!r}") from None
        self._check_size(size)
        self._remaining = size
        self._stage = _Stage.CHUNK_DATA if size else _Stage.TRAILER
        return True

    def _read_chunk_data(self) -> bool:
        if len(self._buffer) < self._remaining + 2:
            return False
        if self._buffer[self._remaining : self._remaining + 2] != b"\r\n":
            raise HttpProtocolError("chunk not followed by CRLF")
        self._body += self._buffer[: self._remaining]
        del self._buffer[: self._remaining + 2]
        self._stage = _Stage.CHUNK_SIZE
        return True

    def _read_trailer(self) -> bool:
        line = self._take_line()
        if line is None:
            return False
        if not line:
            self._stage = _Stage.DONE
        return True

    def _read_until_eof(self) -> bool:
        if not self._buffer:
            return False
        self._check_size(len(self._buffer))
        self._body += self._buffer
        self._buffer.clear()
        return False


def _parse_status_line(line: str) -> tuple[int, str]:
    parts = line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise HttpProtocolError(f"bad status line {line[:80]!r}")
    return int(parts[1]), parts[2] if len(parts) == 3 else ""


def _parse_header(line: str) -> tuple[str, str]:
    name, colon, value = line.partition(":")
    if not colon or not name or name != name.strip():
        raise HttpProtocolError(f"bad header line {line[:80]!r}")
    return name.lower(), value.strip()


def _parse_length(text: str) -> int:
    if not text.isdigit():
        raise HttpProtocolError(f"bad Content-Length {text!r}")
    return int(text)


async def post(
    url: str,
    body: bytes,
    *,
    headers: Mapping[str, str] | None = None,
    time_limit: float = 10.0,
    ssl_context: ssl.SSLContext | None = None,
    max_body: int = 1 << 20,
) -> HttpReply:
    """POST ``body`` to ``url`` and return the reply, whatever its status.

    Raises:
        HttpError: connecting failed, the reply was malformed or did not complete
            within ``time_limit`` seconds (the whole exchange).
        ValueError: ``url`` is not http(s), or a header holds a line break.
    """
    target = Target.from_url(url)
    request = build_request(target, body, headers or {})
    try:
        async with asyncio.timeout(time_limit):
            return await _exchange(target, request, ssl_context, max_body)
    except TimeoutError:
        where = f"{target.host}:{target.port}"
        raise HttpTimeoutError(f"no reply from {where} in {time_limit}s") from None
    except (OSError, asyncio.IncompleteReadError) as exc:
        raise HttpConnectError(f"{target.host}:{target.port}: {exc}") from exc


async def _exchange(
    target: Target, request: bytes, ssl_context: ssl.SSLContext | None, max_body: int
) -> HttpReply:
    context = None
    if target.scheme == "https":
        context = ssl_context or ssl.create_default_context()
    reader, writer = await asyncio.open_connection(target.host, target.port, ssl=context)
    try:
        writer.write(request)
        await writer.drain()
        return await _read_reply(reader, ReplyParser(max_body=max_body))
    finally:
        writer.close()
        with contextlib.suppress(OSError):  # the reply counts; a rough close does not spoil it
            await writer.wait_closed()


async def _read_reply(reader: asyncio.StreamReader, parser: ReplyParser) -> HttpReply:
    while (reply := parser.reply()) is None:
        data = await reader.read(65536)
        if data:
            parser.receive_data(data)
        else:
            parser.receive_eof()
    return reply


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


@dataclass(slots=True, kw_only=True)
class Backoff:
    """Capped exponential backoff: ``initial``, then × ``factor`` per failure, at most ``cap``.

    Deterministic (no jitter): each output has a single client, so there is no herd to
    spread. :meth:`next_delay` after a failure, :meth:`reset` after a success. A server's
    ``Retry-After`` is honoured even beyond ``cap``, up to ``retry_after_cap``.
    """

    initial: float = 1.0
    factor: float = 2.0
    cap: float = 60.0
    retry_after_cap: float = 3600.0
    failures: int = 0

    def __post_init__(self) -> None:
        if self.initial <= 0 or self.factor < 1 or self.cap < self.initial:
            raise ValueError("need 0 < initial <= cap and factor >= 1")

    def next_delay(self, at_least: float | None = None) -> float:
        """Count one failure and return the delay before the next attempt.

        ``at_least`` (a server's ``Retry-After``) lengthens the delay to at least that
        many seconds (at most ``retry_after_cap``).
        """
        delay = min(self.cap, self.initial * self.factor ** min(self.failures, 64))
        self.failures += 1
        if at_least is not None:
            delay = max(delay, min(at_least, self.retry_after_cap))
        return delay

    def reset(self) -> None:
        """Forget the failures: the next delay is ``initial`` again."""
        self.failures = 0
