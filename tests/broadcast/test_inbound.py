"""Messages from the broker, bounded and checked before use (broadcast/feed/inbound.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from broadcast.feed.inbound import (
    MAX_DEPTH,
    BadMessage,
    board_number,
    board_state_from_broker,
    bounded_time,
    read_json,
)
from broadcast.feed.messages import BoardState, MoveInfo, to_json_dict

STATE = BoardState(
    board=3,
    white="Smith, John",
    moves=(MoveInfo(san="e4", uci="e2e4", clock=5400.0),),
    pgn="1. e4 *",
    fen="rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    updated_at=1782259260.0,
)


def payload(state: BoardState = STATE, **changes: object) -> bytes:
    data = {**to_json_dict(state), **changes}
    return json.dumps({k: v for k, v in data.items() if v is not None}).encode()


def test_a_daemons_state_is_taken_as_it_is() -> None:
    assert board_state_from_broker(payload(), board=3) == STATE


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"[" * 100_000, "malformed JSON"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "nested more than"),
        (payload(fen=None), "no fen"),
        (payload(updated_at=None), "no updated_at"),
        (payload(fen="8/8/8 w - - 0 1"), "no position"),
        (payload(pgn="1. e4 " * 5_000_000), "more than the 1048576"),
        (payload(pgn="1. e4 " * 100_000), "a PGN of 600000 characters"),
        (payload(white="x" * 201), "over 200 characters"),
        (payload(board=10_000), "is not from 1 to 9999"),
        (payload(board=4), "a state of board 4 on board 3's topic"),
        (payload(variant="crazyhouse"), "unknown variant"),
        (payload(white_clock=1e300), "a clock time"),
        (payload(updated_at=float("inf")), "not a finite number"),
        (b'{"board": 3, "fen": "x", "updated_at": "\\ud800"}', "valid Unicode"),
        (payload(board="3"), "not a board state (board"),
    ],
)
def test_a_state_that_is_no_daemons_is_refused_saying_why(data: bytes, why: str) -> None:
    with pytest.raises(BadMessage, match=why.replace("(", r"\(")):
        board_state_from_broker(data, board=None if b"10000" in data else 3)


def test_a_state_of_thousands_of_moves_is_refused() -> None:
    moves = tuple(MoveInfo(san="Nf3", uci="g1f3", clock=None) for _ in range(4001))
    with pytest.raises(BadMessage, match="4001 plies"):
        board_state_from_broker(payload(dataclasses.replace(STATE, moves=moves)))


@pytest.mark.parametrize("text", ["\u0663", "+3", " 3", "0", "10000", "3.0", "", "\uff13"])
def test_a_topics_board_number_is_ascii_digits_from_1_to_9999(text: str) -> None:
    with pytest.raises(BadMessage):
        board_number(text)
    assert board_number("9999") == 9999


def test_json_is_bounded_in_size_and_depth() -> None:
    assert read_json(b'{"a": [[1]]}', "clocks") == {"a": [[1]]}
    with pytest.raises(BadMessage, match="more than the 1024"):
        read_json(b" " * 1025, "clocks")


def test_a_time_ahead_of_the_receiver_counts_as_its_clock() -> None:
    assert bounded_time(9e9, now=100.0) == 100.0
    assert bounded_time(50.0, now=100.0) == 50.0
