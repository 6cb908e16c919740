"""Evaluations on the public feed: only with their position, in the ring and the snapshot."""

from __future__ import annotations

import json

import chess

from broadcast.feed.evaluations import EvaluationGate
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState, Evaluation, evaluation_from_json, to_json_dict
from broadcast.web.server import snapshot_text


def at(board: int, *sans: str) -> BoardState:
    position = chess.Board()
    for san in sans:
        position.push_san(san)
    return BoardState(board=board, fen=position.fen(), updated_at=len(sans))


def evaluation(state: BoardState, cp: int = 25) -> Evaluation:
    return Evaluation(board=state.board, fen=state.fen, cp=cp, depth=10, line=("Nf3",))


def eval_events(hub: Hub) -> list[dict[str, object]]:
    messages = hub.messages_since(0) or []
    return [json.loads(m.text) for m in messages if m.event.TYPE == "eval"]


def test_an_evaluation_of_the_public_position_is_published_at_once() -> None:
    public = Hub()
    gate = EvaluationGate(public)
    gate.start()
    public.publish_board(at(1, "e4"))
    gate.receive(evaluation(at(1, "e4")))
    (event,) = eval_events(public)
    assert event["board"] == 1
    assert event["evaluation"] == to_json_dict(evaluation(at(1, "e4")))
    assert public.evaluations() == [evaluation(at(1, "e4"))]


def test_an_evaluation_waits_until_its_position_is_public() -> None:
    public = Hub()
    gate = EvaluationGate(public)
    gate.start()
    public.publish_board(at(1, "e4"))
    ahead = evaluation(at(1, "e4", "e5"))
    gate.receive(ahead)  # a relay behind a longer delay: e5 is not public here yet
    assert eval_events(public) == []
    public.publish_board(at(1, "e4", "e5"))
    assert [e["evaluation"] for e in eval_events(public)] == [to_json_dict(ahead)]


def test_no_evaluation_passes_at_once_and_a_repeat_adds_nothing() -> None:
    public = Hub()
    gate = EvaluationGate(public)
    gate.start()
    public.publish_board(at(1, "e4"))
    gate.receive(Evaluation(board=1))
    gate.receive(Evaluation(board=1))
    assert [e["evaluation"] for e in eval_events(public)] == [to_json_dict(Evaluation(board=1))]
    gate.close()


def test_a_new_spectator_gets_the_latest_evaluation_of_each_board() -> None:
    public = Hub()
    assert '"evaluations"' not in snapshot_text(public, delay=0, server_time=0)
    public.publish_board(at(1, "e4"))
    public.publish_board(at(2, "d4"))
    public.publish_evaluation(evaluation(at(1, "e4"), cp=10))
    public.publish_evaluation(evaluation(at(1, "e4"), cp=20))
    public.publish_evaluation(Evaluation(board=2))
    snapshot = json.loads(snapshot_text(public, delay=0, server_time=0))
    assert snapshot["seq"] == public.seq
    assert snapshot["evaluations"] == [
        to_json_dict(evaluation(at(1, "e4"), cp=20)),
        to_json_dict(Evaluation(board=2)),
    ]


def test_the_wire_form_round_trips_and_refuses_garbage() -> None:
    sent = Evaluation(board=3, fen=at(3, "e4").fen, mate=-2, depth=22, line=("Qh4#",))
    assert evaluation_from_json(json.dumps(to_json_dict(sent))) == sent
    for bad in ('{"board": 0}', '{"board": "1"}', '{"board": 1, "cp": 1.5}', "[]", "x"):
        try:
            evaluation_from_json(bad)
        except ValueError:
            continue
        raise AssertionError(f"accepted {bad}")
