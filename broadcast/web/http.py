"""HTTP routing for the broadcast server: PGN and status endpoints, static files.

:meth:`HttpRoutes.route` maps one request (method, target, headers) to an
:class:`HttpReply`, or to None for the websocket paths, which the server upgrades.

=================================  =========================================
``GET /round.pgn``                 every game of the round, section then board
``GET /board/N.pgn``               one board's game
``GET /status.json``               every board (no PGN), ``seq``, server time
(more routes)                      :attr:`HttpRoutes.extra` (:class:`ExtraRoutes`);
                                   ``/rounds.json``, ``/standings.json``,
                                   ``/prizes.json`` empty without
``GET /``                          ``broadcast/static/index.html``
``GET /arbiter``                   ``broadcast/static/arbiter.html``
``GET /hall``                      ``broadcast/static/hall.html`` (the hall screen)
``GET /vendor/chessground/...``    the npm chessboard (:data:`CHESSGROUND_ROOT`)
``GET /<file>``                    ``broadcast/static/<file>``
=================================  =========================================

Every body carries an ``ETag``; a matching ``If-None-Match`` gets ``304``, and
``Cache-Control: no-cache`` makes caches ask each time. Static paths are decoded before
they are checked: a ``..`` or ``.`` segment (also as ``%2e%2e``), an encoded slash or
backslash, an empty segment, a hidden file or a symlink leading out of the served folder
all answer ``404``, exactly like a missing file. Other methods than GET answer ``405``.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from broadcast.feed.events import encode_json, state_to_json
from broadcast.feed.hub import Hub
from broadcast.feed.pgn import game_pgn, round_pgn

__all__ = [
    "ARBITER_PATH",
    "CHESSGROUND_ROOT",
    "FEED_PATH",
    "JSON_TYPE",
    "PGN_TYPE",
    "STATIC_ROOT",
    "Answer",
    "ExtraRoutes",
    "HttpReply",
    "HttpRoutes",
    "safe_file",
]

FEED_PATH = "/ws"
ARBITER_PATH = "/ws/arbiter"
STATIC_ROOT = Path(__file__).resolve().parent.parent / "static"
#: The viewer's chessboard (npm ``chessground``): inside the package in a wheel (setup.py
#: copies it there), from ``node_modules`` in a checkout.
CHESSGROUND_ROOT = next(
    (
        root
        for root in (
            STATIC_ROOT / "vendor" / "chessground",
            STATIC_ROOT.parent.parent / "node_modules" / "chessground",
        )
        if (root / "package.json").is_file()
    ),
    STATIC_ROOT.parent.parent / "node_modules" / "chessground",
)
_VENDOR_PREFIX = "/vendor/chessground/"
_PAGES = {"/": "/index.html", "/arbiter": "/arbiter.html", "/hall": "/hall.html"}

PGN_TYPE = "application/x-chess-pgn; charset=utf-8"
JSON_TYPE = "application/json"
_TEXT_TYPE = "text/plain; charset=utf-8"
_STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".txt": _TEXT_TYPE,
}
#: Lists another part of the daemon fills (:attr:`HttpRoutes.extra`); a server without
#: them (a test's) answers them empty, so a page asks them alike everywhere.
_SECTIONS_LISTS = ("/rounds.json", "/standings.json", "/prizes.json")
_BOARD_PGN = re.compile(r"/board/([1-9][0-9]{0,5})\.pgn")


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpReply:
    """An HTTP response: status, headers (in order) and body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The first header called ``name`` (any case), or None."""
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


@dataclass(frozen=True, slots=True)
class Answer:
    """What an :class:`ExtraRoutes` answers: a public body (200, with an ETag) or an error."""

    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


class ExtraRoutes(Protocol):
    """More GET routes (past rounds, standings): an :class:`Answer`, or None for a path
    they do not serve. ``query`` is the parsed query string."""

    def answer(self, path: str, query: Mapping[str, list[str]]) -> Answer | None: ...


def _plain(status: int, text: str, *extra: tuple[str, str]) -> HttpReply:
    body = text.encode()
    headers = (
        ("Content-Type", _TEXT_TYPE),
        ("Content-Length", str(len(body))),
        ("Connection", "close"),
        *extra,
    )
    return HttpReply(status=status, headers=headers, body=body)


def _etag_matches(etag: str, if_none_match: str | None) -> bool:
    if if_none_match is None:
        return False
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or etag in tags


def _cached(body: bytes, content_type: str, if_none_match: str | None, public: bool) -> HttpReply:
    """A 200 with an ETag, or a 304 when the client already holds this body."""
    etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
    common = [("ETag", etag), ("Cache-Control", "no-cache"), ("Connection", "close")]
    if public:
        common.append(("Access-Control-Allow-Origin", "*"))
    if _etag_matches(etag, if_none_match):
        return HttpReply(status=304, headers=(*common, ("Content-Length", "0")))
    head = (("Content-Type", content_type), ("Content-Length", str(len(body))), *common)
    return HttpReply(status=200, headers=head, body=body)


def _segments(path: str) -> list[str] | None:
    """Decoded path segments, or None if any could step out of a folder."""
    parts = [unquote(raw, errors="strict") for raw in path.split("/")]
    for part in parts:
        if not part or part.startswith(".") or any(c in part for c in "/\\\x00"):
            return None
    return parts


def safe_file(root: Path, path: str) -> Path | None:
    """The regular file ``path`` names under ``root``, or None if it is missing or unsafe.

    Args:
        root: the served folder.
        path: the URL path below ``root``, still percent-encoded, no leading slash.
    """
    try:
        parts = _segments(path)
        if parts is None:
            return None
        base = root.resolve(strict=True)
        found = base.joinpath(*parts).resolve(strict=True)
    except (OSError, UnicodeDecodeError, RuntimeError):
        return None
    if not found.is_relative_to(base) or not found.is_file():
        return None
    return found


class HttpRoutes:
    """Answers the plain HTTP requests of the broadcast server.

    Args:
        hub: the hub whose boards are public (the delayed one when there is a delay).
        delay: the public delay in seconds, reported in ``status.json``.
        static_root: folder served at ``/``.
        vendor_root: folder served at ``/vendor/chessground/``.
        clock: wall clock for ``server_time`` (epoch seconds).
    """

    def __init__(
        self,
        hub: Hub,
        *,
        delay: float = 0.0,
        static_root: Path = STATIC_ROOT,
        vendor_root: Path = CHESSGROUND_ROOT,
        clock: Callable[[], float] = time.time,
        extra: Sequence[ExtraRoutes] = (),
    ) -> None:
        self.hub = hub
        self.delay = delay
        self._static_root = static_root
        self._vendor_root = vendor_root
        self._clock = clock
        #: Routes the daemon or relay adds (past rounds, standings, prizes), asked in order.
        self.extra: tuple[ExtraRoutes, ...] = tuple(extra)

    def route(self, method: str, target: str, headers: Mapping[str, str]) -> HttpReply | None:
        """The reply to one request; None for a websocket path (the server upgrades it)."""
        parts = urlsplit(target)
        path = parts.path
        if method != "GET":
            return _plain(405, "method not allowed\n", ("Allow", "GET"))
        if path in (FEED_PATH, ARBITER_PATH):
            return None
        etag = headers.get("If-None-Match")
        reply = self._dynamic(path, etag)
        if reply is None:
            reply = self._extra(path, parts.query, etag)
        return reply if reply is not None else self._static(path, etag)

    def _extra(self, path: str, query: str, etag: str | None) -> HttpReply | None:
        parsed = parse_qs(query, keep_blank_values=True)
        for routes in self.extra:
            found = routes.answer(path, parsed)
            if found is None:
                continue
            if found.status != 200:
                return _plain(found.status, found.body.decode())
            return _cached(found.body, found.content_type, etag, public=True)
        if path in _SECTIONS_LISTS:
            return _cached(b'{"sections":[]}', JSON_TYPE, etag, public=True)
        return None

    def _dynamic(self, path: str, etag: str | None) -> HttpReply | None:
        if path == "/round.pgn":
            text = round_pgn(self.hub.states())
            return _cached(text.encode(), PGN_TYPE, etag, public=True)
        if path == "/status.json":
            return _cached(self._status().encode(), JSON_TYPE, etag, public=True)
        match = _BOARD_PGN.fullmatch(path)
        if match is None:
            return None
        state = self.hub.state(int(match.group(1)))
        if state is None:
            return _plain(404, "no such board\n")
        return _cached(game_pgn(state).encode(), PGN_TYPE, etag, public=True)

    def _status(self) -> str:
        boards = [state_to_json(state) for state in self.hub.states()]
        data = {"server_time": self._clock(), "delay": self.delay, "seq": self.hub.seq}
        return encode_json({**data, "boards": boards})

    def _static(self, path: str, etag: str | None) -> HttpReply:
        path = _PAGES.get(path, path)
        if path.startswith(_VENDOR_PREFIX):
            found = safe_file(self._vendor_root, path.removeprefix(_VENDOR_PREFIX))
        else:
            found = safe_file(self._static_root, path.removeprefix("/"))
        if found is None:
            return _plain(404, "not found\n")
        content_type = _STATIC_TYPES.get(found.suffix, "application/octet-stream")
        return _cached(found.read_bytes(), content_type, etag, public=False)
