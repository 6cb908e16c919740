"""Past rounds and standings for relays: what a daemon publishes, and what a relay keeps.

The daemon's side publishes a past round once it is public (after the public delay,
provisional results hidden under ``results = "confirmed"``), each section's standings when
they change, and clears the round each section is playing; the relay's side keeps them
and answers from memory, refusing payloads that are not what their topics say.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from broadcast.feed.archive import RoundArchive
from broadcast.feed.hub import Hub
from broadcast.outputs.mqtt import Topics
from broadcast.outputs.mqtt_rounds import round_payload, section_key
from broadcast.relay.server import RelayView
from daemon.links.pairing import PairingLink
from daemon.links.section_topics import SectionTopics
from daemon.links.standings import StandingsRoutes
from daemon.pairing.handoff import ResultHandoff
from daemon.pairing.pairings import read_pairings
from daemon.pairing.trf import Tournament
from tests.browser.servers import board_state
from tests.pairing.support import copy_example

TOPICS = Topics("event", "hall-a")


class Published(dict[str, bytes]):
    """The retained topics as the publisher was told them (the latest payload each)."""

    def publish(self, topic: str, payload: bytes) -> None:
        self[topic] = payload


def _no_standings() -> StandingsRoutes:
    return StandingsRoutes({}, Hub(), lambda: [])


def test_a_past_round_is_published_once_public_as_the_public_sees_it() -> None:
    archive = RoundArchive()
    published = Published()
    now = [1000.0]
    topics = SectionTopics(
        published.publish,
        TOPICS,
        archive,
        _no_standings(),
        lambda: {"Open": 4},
        delay=60.0,
        results="confirmed",
        clock=lambda: now[0],
    )
    topics.update()
    assert published == {"event/section/Open/round/4": b""}  # the round being played
    provisional = board_state(1, ("e4",), round="3.1", result="1-0", result_final=False)
    final = board_state(2, ("d4",), round="3.2", result="0-1", result_final=True)
    archive.keep("Open", 3, [provisional, final], at=1000.0)
    published.clear()
    topics.update()
    assert published == {}  # behind the public delay: not yet
    now[0] = 1060.0
    topics.update()
    view = RelayView(Hub(), "event")
    for topic, payload in published.items():
        view.receive_message(topic, payload)
    (kept,) = view.rounds.archive.rounds(until=math.inf)
    assert (kept.section, kept.round, kept.at) == ("Open", 3, 1060.0)
    assert [(s.board, s.result, s.moves) for s in kept.states] == [
        (1, "*", provisional.moves),  # a provisional result is no public result
        (2, "0-1", final.moves),
    ]
    published.clear()
    topics.update()
    assert published == {}  # nothing changed: nothing sent again


def test_the_standings_are_published_when_they_change(tmp_path: Path) -> None:
    trf, pairings_file = copy_example(tmp_path)
    tournament = Tournament.from_trf(trf)
    handoff = ResultHandoff(tournament, 4, read_pairings(pairings_file, tournament=tournament), trf)
    hub = Hub()
    routes = StandingsRoutes({"": PairingLink(handoff)}, hub, lambda: [""])
    published = Published()
    topics = SectionTopics(published.publish, TOPICS, RoundArchive(), routes, lambda: {"": 4})
    topics.update()
    first = published.pop("event/section/%/standings")
    answer = routes.answer("/standings.json", {})
    assert answer is not None
    assert json.loads(answer.body)["sections"] == [json.loads(first)]
    topics.update()
    assert "event/section/%/standings" not in published
    handoff.receive_result(1, "0-1", source="arbiter", at=1.0)
    hub.publish_board(board_state(1, section="", round="4.1", result="0-1", result_final=True))
    topics.update()
    changed = json.loads(published["event/section/%/standings"])
    assert changed != json.loads(first)
    assert changed["pairings"][0]["result"] == "0-1"


def test_a_relay_keeps_rounds_and_standings_and_answers_from_memory() -> None:
    view = RelayView(Hub(), "event")
    archive = RoundArchive()
    archive.keep("U12 / B", 2, [board_state(41, ("e4",), section="U12 / B", round="2.41")], 5.0)
    (kept,) = archive.rounds(until=10.0)
    key = section_key("U12 / B")
    assert "/" not in key
    view.receive_message(f"event/section/{key}/round/2", round_payload(kept))
    for name, board in (("U12 / B", 41), ("Open", 1)):
        standings = {"section": name, "standings": [], "pairings": [{"board": board}]}
        topic = f"event/section/{section_key(name)}/standings"
        view.receive_message(topic, json.dumps(standings).encode())
    routes = view.rounds.routes(Hub(), "confirmed")
    answer = routes[1].answer("/standings.json", {})
    assert answer is not None
    assert [s["section"] for s in json.loads(answer.body)["sections"]] == ["Open", "U12 / B"]
    listed = routes[0].answer("/rounds.json", {})
    assert listed is not None
    (section,) = json.loads(listed.body)["sections"]
    assert (section["section"], section["rounds"][0]["round"]) == ("U12 / B", 2)
    game = routes[0].answer("/round/2/41.json", {"section": ["U12 / B"]})
    assert game is not None
    assert json.loads(game.body)["moves"][0]["san"] == "e4"
    view.receive_message(f"event/section/{key}/round/2", b"")  # taken back
    assert view.rounds.archive.rounds(until=math.inf) == []
    view.receive_message(f"event/section/{section_key('Open')}/standings", b"")
    answer = routes[1].answer("/standings.json", {})
    assert answer is not None
    assert [s["section"] for s in json.loads(answer.body)["sections"]] == ["U12 / B"]
    assert view.ignored == 0


def test_payloads_that_are_not_what_their_topics_say_change_nothing() -> None:
    view = RelayView(Hub(), "event")
    archive = RoundArchive()
    archive.keep("Open", 3, [board_state(1, ("e4",))], 5.0)
    (kept,) = archive.rounds(until=10.0)
    payload = round_payload(kept)
    view.receive_message("event/section/Open/round/4", payload)  # round 3 on round 4's topic
    view.receive_message("event/section/U12/round/3", payload)  # another section's
    view.receive_message("event/section/Open/round/3", b"{not json")
    view.receive_message("event/section/Open/standings", b'{"section": "Open"}')
    view.receive_message(
        "event/section/Open/standings", b'{"section": "U12", "standings": [], "pairings": []}'
    )
    assert view.ignored == 5
    assert view.rounds.archive.rounds(until=math.inf) == []
    answer = view.rounds.answer("/standings.json", {})
    assert answer is not None
    assert json.loads(answer.body) == {"sections": []}
