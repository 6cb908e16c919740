"""``results = "confirmed" | "provisional"``: what the public outputs show of a result."""

from __future__ import annotations

import dataclasses

from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from broadcast.feed.pgn import PROVISIONAL_COMMENT, game_pgn, public_pgn
from broadcast.feed.public_results import PublicResults, public_state
from broadcast.outputs.mqtt import MqttOutbox
from broadcast.outputs.mqtt_wire import Topics

PGN = '[Event "Club Open"]\n[Round "3.1"]\n[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n'
MATED = BoardState(board=1, round="3.1", pgn=PGN, result="0-1", updated_at=10.0)
CONFIRMED = dataclasses.replace(MATED, result_final=True, updated_at=20.0)


def test_confirmed_hides_a_provisional_result_everywhere_in_the_state() -> None:
    hidden = public_state(MATED, "confirmed")
    assert hidden.result == "*"
    assert hidden.pgn == PGN.replace('"0-1"', '"*"').replace("Qh4# 0-1", "Qh4# *")
    assert public_state(CONFIRMED, "confirmed") is CONFIRMED
    assert public_state(MATED, "provisional") is MATED


def test_provisional_results_are_marked_in_public_pgn() -> None:
    marked = public_pgn(MATED)
    assert marked.endswith(f"2. g4 Qh4# {PROVISIONAL_COMMENT} 0-1\n")
    assert '[Result "0-1"]' in marked
    assert public_pgn(dataclasses.replace(MATED, pgn=marked)) == marked  # once only
    assert public_pgn(CONFIRMED) == PGN
    assert game_pgn(MATED) == marked


def test_the_public_hub_follows_the_live_one_with_confirmed_results() -> None:
    live = Hub()
    live.publish_board(MATED)
    public = PublicResults(live, "confirmed")
    public.start()
    shown = public.public.state(1)
    assert shown is not None
    assert shown.result == "*"
    live.publish_board(CONFIRMED)
    shown = public.public.state(1)
    assert shown is not None
    assert (shown.result, shown.result_final) == ("0-1", True)
    public.close()
    live.publish_board(dataclasses.replace(CONFIRMED, result="1/2-1/2"))
    assert public.public.state(1) == shown  # no longer following


def test_mqtt_results_topic_under_each_policy() -> None:
    topics = Topics("venue", "hall")
    for policy, expected in (("confirmed", [True]), ("provisional", [False, True])):
        outbox = MqttOutbox(topics, results=policy)  # type: ignore[arg-type]
        for state in (MATED, CONFIRMED):
            outbox.receive_board(state)
        sent = []
        while (message := outbox.next_message()) is not None:
            if message.topic == topics.results:
                sent.append(message.payload)
            outbox.receive_delivered(message)
        assert [b'"final":true' in p for p in sent] == expected, policy


def test_a_withdrawn_provisional_result_is_cleared_from_the_retained_topic() -> None:
    topics = Topics("venue", "hall")
    outbox = MqttOutbox(topics, results="provisional")
    outbox.receive_board(MATED)
    outbox.receive_board(dataclasses.replace(MATED, result="*", updated_at=30.0))
    retained = {}
    while (message := outbox.next_message()) is not None:
        if message.retain:
            retained[message.topic] = message.payload
        outbox.receive_delivered(message)
    assert retained[topics.board(1, "result")] == b""


def test_a_provisional_forfeit_is_hidden_and_marked_by_its_pgn_result() -> None:
    """The PGN of a forfeit has its winner's result (issue 33, item 2), not ``-+``."""
    pgn = '[Event "Club Open"]\n[Round "3.2"]\n[Result "0-1"]\n\n0-1\n'
    forfeit = BoardState(board=2, round="3.2", pgn=pgn, result="-+", updated_at=10.0)
    hidden = public_state(forfeit, "confirmed")
    assert (hidden.result, hidden.pgn) == ("*", pgn.replace("0-1", "*"))
    assert public_pgn(forfeit).endswith(f"{PROVISIONAL_COMMENT} 0-1\n")
