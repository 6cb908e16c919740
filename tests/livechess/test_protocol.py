"""The LiveChess envelope (pure): every frame is a call or a refusal, never an exception."""

from __future__ import annotations

import json
from typing import Any

import chess
from hypothesis import given
from hypothesis import strategies as st

from broadcast.feed.messages import MAX_ID, NOT_UNICODE
from broadcast.livechess.protocol import (
    FlipCall,
    Refusal,
    SetupCall,
    SubscribeCall,
    UnsubscribeCall,
    call_text,
    error_text,
    feed_text,
    parse_call,
)

_TEXT = st.characters(max_codepoint=0xD7FF)  # below the surrogates, refused below
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(_TEXT, max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(_TEXT, max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
_NAMES = st.sampled_from(["eboards", "sources", "subscribe", "unsubscribe", "call", "x"])


@given(st.text(max_size=200) | st.binary(max_size=200))
def test_any_frame_parses_to_a_call_or_a_refusal(frame: str | bytes) -> None:
    parse_call(frame)


@given(_NAMES, st.integers(-MAX_ID, MAX_ID), _JSON)
def test_any_call_shaped_object_parses_to_a_call_or_a_refusal(
    name: str, call_id: int, param: Any
) -> None:
    parsed = parse_call(json.dumps({"call": name, "id": call_id, "param": param}))
    assert parsed.id == call_id  # the id is read back whenever it is an integer in range


@given(_NAMES, st.integers(MAX_ID + 1) | st.integers(max_value=-MAX_ID - 1))
def test_ids_out_of_range_are_refused(name: str, call_id: int) -> None:
    parsed = parse_call(json.dumps({"call": name, "id": call_id}))
    assert parsed == Refusal(id=None, message=f"the call's id must be an integer up to {MAX_ID}")


@given(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF))
def test_lone_surrogates_are_refused_wherever_they_are(text: str) -> None:
    for data in ({"call": text, "id": 1}, {"call": "eboards", "id": 1, text: 1}):
        parsed = parse_call(json.dumps(data))
        assert parsed == Refusal(id=None, message=NOT_UNICODE)


def test_the_forms_public_clients_send() -> None:
    subscribe = {"feed": "eboardevent", "id": 7, "param": {"serialnr": 7425}}
    assert parse_call(json.dumps({"call": "subscribe", "id": 42, "param": subscribe})) == (
        SubscribeCall(id=42, feed_id=7, serial="7425")
    )
    unsubscribe = {"call": "unsubscribe", "id": 3, "param": {"id": 7}}
    assert parse_call(json.dumps(unsubscribe)) == UnsubscribeCall(id=3, feed_id=7)
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    setup = {"call": "call", "id": 4, "param": {"id": 7, "method": "setup", "param": {"fen": fen}}}
    assert parse_call(json.dumps(setup)) == SetupCall(id=4, feed_id=7, fen=chess.Board(fen).fen())
    for method, args in (
        ("flip", {"flip": True}),
        ("setup", {"flip": True}),
        ("flip", {"fen": True}),
    ):
        flip = {"call": "call", "id": 5, "param": {"id": 7, "method": method, "param": args}}
        assert parse_call(json.dumps(flip)) == FlipCall(id=5, feed_id=7, flip=True)


def test_answers_carry_numeric_ids_and_the_server_time() -> None:
    assert json.loads(call_text(3, None, 1587948082875)) == {
        "response": "call",
        "id": 3,
        "param": None,
        "time": 1587948082875,
    }
    assert json.loads(feed_text(7, '{"san":[]}', 5))["param"] == {"san": []}
    error = json.loads(error_text(Refusal(id=None, message="malformed JSON"), 5))
    assert error == {
        "response": "error",
        "id": None,
        "param": {"message": "malformed JSON", "stacktrace": ""},
        "time": 5,
    }
