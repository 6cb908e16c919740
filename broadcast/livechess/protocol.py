"""The LiveChess 2 envelope: calls parsed into typed values, answers encoded (pure).

docs/integrations.md, "The websocket API". A client sends
``{"call": NAME, "id": INT, "param": ...}``; the server answers
``{"response": "call"|"feed"|"error", "id": INT, "param": ..., "time": MS}``.
:func:`parse_call` turns one text frame into a :data:`Call` or a :class:`Refusal` (errors
are data: a bad message is answered, never raised); the ``*_text`` functions build the
answers. The ``id`` of every answer is a JSON number (lila #20307).

Calls understood:

* ``eboards``, ``sources``: no parameters.
* ``subscribe``: ``{"feed": "eboardevent", "id": FEED_ID, "param": {"serialnr": S}}``.
* ``unsubscribe``: ``{"id": FEED_ID}``; also as ``call`` method ``unsubscribe``.
* ``call``: ``{"id": FEED_ID, "method": "setup"|"flip", "param": {...}}``. ``setup`` takes
  ``{"fen": FULL_FEN}``; ``flip`` takes ``{"flip": BOOL}``, and the two wrong forms public
  clients send are tolerated: method ``setup`` with ``{"flip": ...}`` (HD) and ``flip``
  with the boolean named ``fen`` (LU).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import chess

from broadcast.feed.events import encode_json
from broadcast.feed.messages import MAX_ID, decode_untrusted_json

__all__ = [
    "EBOARD_FEED",
    "MESSAGE_LIMIT",
    "SERIAL_LIMIT",
    "Call",
    "EboardsCall",
    "Encoded",
    "FlipCall",
    "Refusal",
    "SetupCall",
    "SourcesCall",
    "SubscribeCall",
    "UnsubscribeCall",
    "call_text",
    "error_text",
    "feed_text",
    "parse_call",
]

#: The one feed a LiveChess server offers to these clients.
EBOARD_FEED = "eboardevent"
#: Client messages larger than this are refused (a call is a few hundred bytes).
MESSAGE_LIMIT = 16 * 1024
#: The longest serial number taken (DGT's are 5 to 10 digits).
SERIAL_LIMIT = 32


@dataclass(frozen=True, slots=True, kw_only=True)
class EboardsCall:
    """``eboards``: list every e-board."""

    id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SourcesCall:
    """``sources``: list the ports e-boards are on."""

    id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscribeCall:
    """``subscribe`` to ``eboardevent`` of the board with serial number ``serial``."""

    id: int
    feed_id: int
    serial: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UnsubscribeCall:
    """``unsubscribe`` the feed ``feed_id``."""

    id: int
    feed_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SetupCall:
    """``call``/``setup``: moves of feed ``feed_id`` count from the position ``fen``."""

    id: int
    feed_id: int
    fen: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FlipCall:
    """``call``/``flip``: the board of feed ``feed_id`` is turned (or not)."""

    id: int
    feed_id: int
    flip: bool


Call = EboardsCall | SourcesCall | SubscribeCall | UnsubscribeCall | SetupCall | FlipCall


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """A message that cannot be carried out: answered with an ``error`` response.

    ``id`` is the call's id when it could be read, else None (sent as ``null``).
    """

    id: int | None
    message: str


def _is_int(value: object) -> bool:
    """An id: an integer every JSON reader holds exactly (call ids, feed ids)."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_ID


def _shown(name: object) -> str:
    """A client's name for something, as an answer repeats it (cut short)."""
    text = repr(name)
    return text if len(text) <= 40 else text[:37] + "..."


def _object(value: object) -> dict[str, Any] | None:
    """``value`` as a parameter object: a dict, or {} for absent/null; None otherwise."""
    if value is None:
        return {}
    return value if isinstance(value, dict) else None


def parse_call(message: str | bytes) -> Call | Refusal:
    """One client frame as a call, or the refusal to answer it with."""
    if isinstance(message, bytes):
        return Refusal(id=None, message="send JSON text frames, not binary ones")
    try:
        data = decode_untrusted_json(message)
    except ValueError as exc:
        return Refusal(id=None, message=str(exc))
    if not isinstance(data, dict):
        return Refusal(id=None, message="a call is a JSON object")
    call_id = data.get("id")
    if not isinstance(call_id, int) or not _is_int(call_id):
        return Refusal(id=None, message=f"the call's id must be an integer up to {MAX_ID}")
    name, param = data.get("call"), _object(data.get("param"))
    if not isinstance(name, str):
        return Refusal(id=call_id, message="the call's name (call) must be a string")
    if param is None:
        return Refusal(id=call_id, message="param must be an object or null")
    return _parse_named(name, call_id, param)


def _parse_named(name: str, call_id: int, param: dict[str, Any]) -> Call | Refusal:
    match name:
        case "eboards":
            return EboardsCall(id=call_id)
        case "sources":
            return SourcesCall(id=call_id)
        case "subscribe":
            return _parse_subscribe(call_id, param)
        case "unsubscribe":
            return _parse_unsubscribe(call_id, param)
        case "call":
            return _parse_method(call_id, param)
        case _:
            return Refusal(id=call_id, message=f"unknown call {_shown(name)}")


def _feed_id(param: dict[str, Any]) -> int | None:
    feed_id = param.get("id")
    return feed_id if _is_int(feed_id) else None


def _no_feed_id(call_id: int) -> Refusal:
    return Refusal(id=call_id, message="param.id (the feed id) must be an integer")


def _parse_unsubscribe(call_id: int, param: dict[str, Any]) -> Call | Refusal:
    feed_id = _feed_id(param)
    if feed_id is None:
        return _no_feed_id(call_id)
    return UnsubscribeCall(id=call_id, feed_id=feed_id)


def _parse_subscribe(call_id: int, param: dict[str, Any]) -> Call | Refusal:
    feed = param.get("feed")
    if feed != EBOARD_FEED:
        return Refusal(id=call_id, message=f"unknown feed {_shown(feed)}: only {EBOARD_FEED!r}")
    feed_id = _feed_id(param)
    if feed_id is None:
        return _no_feed_id(call_id)
    feed_param = _object(param.get("param"))
    serial = None if feed_param is None else feed_param.get("serialnr")
    if _is_int(serial):
        serial = str(serial)
    if not isinstance(serial, str) or not 0 < len(serial) <= SERIAL_LIMIT:
        return Refusal(id=call_id, message="param.param.serialnr must be a serial number")
    return SubscribeCall(id=call_id, feed_id=feed_id, serial=serial)


def _parse_method(call_id: int, param: dict[str, Any]) -> Call | Refusal:
    method, args = param.get("method"), _object(param.get("param"))
    if args is None:
        return Refusal(id=call_id, message="param.param must be an object")
    feed_id = _feed_id(param)
    if feed_id is None:
        return _no_feed_id(call_id)
    if method == "unsubscribe":
        return UnsubscribeCall(id=call_id, feed_id=feed_id)
    if method == "flip" or (method == "setup" and "flip" in args and "fen" not in args):
        flip = args.get("flip", args.get("fen"))
        if not isinstance(flip, bool):
            return Refusal(id=call_id, message='flip takes {"flip": true|false}')
        return FlipCall(id=call_id, feed_id=feed_id, flip=flip)
    if method == "setup":
        fen = args.get("fen")
        if not isinstance(fen, str):
            return Refusal(id=call_id, message='setup takes {"fen": FEN}')
        try:
            board = chess.Board(fen)
        except ValueError as exc:
            return Refusal(id=call_id, message=f"invalid FEN: {exc}")
        return SetupCall(id=call_id, feed_id=feed_id, fen=board.fen())
    return Refusal(id=call_id, message=f"unknown method {_shown(method)}: setup or flip")


def _envelope(response: str, answer_id: int | None, param_text: str, now_ms: int) -> str:
    ident = "null" if answer_id is None else str(answer_id)
    return f'{{"response":"{response}","id":{ident},"param":{param_text},"time":{now_ms}}}'


@dataclass(frozen=True, slots=True)
class Encoded:
    """A ``param`` already encoded as JSON text (shared by every client that asks)."""

    text: str


def call_text(call_id: int, param: Any, now_ms: int) -> str:
    """``{"response": "call", ...}``: the answer to call ``call_id``."""
    text = param.text if isinstance(param, Encoded) else encode_json(param)
    return _envelope("call", call_id, text, now_ms)


def feed_text(feed_id: int, param_text: str, now_ms: int) -> str:
    """``{"response": "feed", ...}`` around a feed event already encoded once."""
    return _envelope("feed", feed_id, param_text, now_ms)


def error_text(refusal: Refusal, now_ms: int) -> str:
    """``{"response": "error", ...}`` with ``{"message", "stacktrace"}`` (LU)."""
    param = encode_json({"message": refusal.message, "stacktrace": ""})
    return _envelope("error", refusal.id, param, now_ms)
