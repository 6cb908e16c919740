"""What a request must be before a server of dgtcast reads it: GET, each header once.

Every port dgtcast listens on (the broadcast server, a relay's, the LiveChess API) is a
websockets server, and two kinds of request used to reach it badly:

* **another method than GET.** websockets' parser drops a request with a body (a form's
  ``POST``) without an answer, and the LiveChess API answered ``HEAD`` and ``POST`` as if
  they were ``GET``. :class:`GetOnlyConnection` reads the method first: any other gets
  ``405 Method Not Allowed`` with ``Allow: GET`` (docs/broadcast.md), a ``HEAD`` without
  the body, and the request goes no further.
* **a header the server reads, sent twice** (two ``If-None-Match``, two ``Host`` or
  ``Origin``): ``Headers.get`` raises ``MultipleValuesError``, which websockets answered
  with ``500`` and an ERROR traceback for each request (17.9 MB of log in 15 s from one
  client). :func:`repeated_header` names it, and the server answers ``400`` and logs one
  line every 10 s at most (:class:`~broadcast.web.log_limit.LogLimit`).

Pure but for :class:`GetOnlyConnection`, the asyncio protocol that applies the first rule.
"""

from __future__ import annotations

import asyncio

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers

__all__ = [
    "SINGLE_HEADERS",
    "GetOnlyConnection",
    "method_of",
    "not_allowed",
    "repeated_header",
]

#: The headers dgtcast's servers read (besides websockets' own, which websockets checks):
#: each names one value, so a request that sends one twice is malformed (RFC 9110 §5.3;
#: RFC 9112 §3.2 asks for ``400`` on two ``Host`` headers).
SINGLE_HEADERS = ("Host", "Origin", "If-None-Match")
#: Bytes read before the method must have ended (the longest method is ``OPTIONS``).
_METHOD_LIMIT = 16
_BODY = b"method not allowed\n"


def repeated_header(headers: Headers) -> str | None:
    """The first of :data:`SINGLE_HEADERS` that ``headers`` holds more than once."""
    return next((name for name in SINGLE_HEADERS if len(headers.get_all(name)) > 1), None)


def method_of(head: bytes) -> str | None:
    """The method of a request that starts with ``head``; None while it may go on.

    Raises:
        ValueError: no method ends within the first 16 bytes (not HTTP).
    """
    method, space, _ = head.partition(b" ")
    if not space:
        if len(head) >= _METHOD_LIMIT:
            raise ValueError("no HTTP method")
        return None
    return method.decode("latin-1")


def not_allowed(method: str) -> bytes:
    """The whole ``405`` answer to ``method``: ``Allow: GET``; no body for ``HEAD``."""
    head = (
        "HTTP/1.1 405 Method Not Allowed\r\n"
        "Allow: GET\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(_BODY)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    return head if method == "HEAD" else head + _BODY


class GetOnlyConnection(ServerConnection):
    """A websockets server connection that answers any method but GET itself (405).

    The method is read before websockets parses anything; a GET goes on unchanged. After
    a 405 the rest of the request is read and dropped until the client closes (closing
    with unread bytes would reset the connection and lose the answer), or until the
    server's handshake time runs out.
    """

    _head: bytes | None = b""  # None once the request went on, or was answered
    _answered = False

    def data_received(self, data: bytes) -> None:
        if self._answered:
            return
        if self._head is None:
            super().data_received(data)
            return
        head = self._head + data
        try:
            method = method_of(head)
        except ValueError:
            method = "GET"  # not HTTP: websockets' parser refuses it as before
        if method is None:
            self._head = head
            return
        self._head = None
        if method == "GET":
            super().data_received(head)
            return
        self._answer(method)

    def eof_received(self) -> None:
        if self._answered:  # the client read the answer and closed its side
            self.transport.close()
            return
        super().eof_received()

    def _answer(self, method: str) -> None:
        self._answered = True
        transport = self.transport
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(not_allowed(method[:_METHOD_LIMIT]))
        if transport.can_write_eof():
            transport.write_eof()
        else:
            transport.close()
