"""Past rounds and standings for relays: what a daemon publishes, and what a relay keeps.

A real daemon and a real relay, each ``dgtcast`` in its own process, answer every
round's and the standings' addresses alike, also after either restarts. The daemon's
side publishes a past round once it is public (after the public delay,
provisional results hidden under ``results = "confirmed"``), each section's standings when
they change, and clears the round each section is playing; the relay's side keeps them
and answers from memory, refusing payloads that are not what their topics say.
"""

from __future__ import annotations

import asyncio
import json
import math
import shutil
from pathlib import Path

from broadcast.feed.archive import RoundArchive
from broadcast.feed.hub import Hub
from broadcast.outputs.mqtt_rounds import round_payload, section_key
from broadcast.outputs.mqtt_wire import Topics
from broadcast.relay.server import RelayView
from daemon.links.pairing import PairingLink
from daemon.links.section_topics import SectionTopics
from daemon.links.standings import StandingsRoutes
from daemon.pairing.handoff import ResultHandoff
from daemon.pairing.pairings import read_pairings
from daemon.pairing.trf import Tournament
from tests.broadcast.feed_client import http_get
from tests.browser.servers import board_state
from tests.mosquitto import Mosquitto
from tests.pairing.support import copy_example
from tests.relay.support import TOKEN, Arbiter, mqtt_table, relay_file
from tests.serving import start_dgtcast, stop_process
from tests.shared_data import ROOT

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


# -- a real daemon and a real relay, each ``dgtcast`` in its own process ------------------------

#: Round 4's results of config/round4-pairings.txt, boards 1-5.
RESULTS = ((1, "0-1"), (2, "1-0"), (3, "1/2-1/2"), (4, "1-0"), (5, "0-1"))
#: Round 5 of config/tournament-example.trf: nobody meets an earlier opponent; 5 gets the bye.
ROUND5 = "7\n1 10\n2 6\n3 4\n8 7\n9 12\n11 13\n5 0\n"
#: What the relay must answer exactly as the daemon does.
PATHS = (
    "/rounds.json",
    "/round/4.pgn",
    "/round/4/1.pgn",
    "/round/4/3.json",
    "/standings.json",
    "/round/99.pgn",
    "/round/99/1.pgn",
)


def event_files(folder: Path, broker: Mosquitto) -> Path:
    """The example event in round 4 (manual boards), its TRF naming WIN, BH-C1, SB (202)."""
    folder.mkdir(parents=True)
    trf = (ROOT / "config" / "tournament-example.trf").read_bytes()
    assert b"222 5400+30\r\n" in trf
    (folder / "open.trf").write_bytes(
        trf.replace(b"222 5400+30\r\n", b"222 5400+30\r\n202 WIN BH/C1 SB\r\n")
    )
    shutil.copy(ROOT / "config" / "round4-pairings.txt", folder / "round4.txt")
    (folder / "round5.txt").write_text(ROUND5)
    path = folder / "open.toml"
    path.write_text(
        '[event]\nname = "Riverside Autumn Open 2026"\nround = 4\ntime_control = "5400+30"\n\n'
        f'[server]\nhost = "127.0.0.1"\nport = 8080\narbiter_token = "{TOKEN}"\n\n'
        '[storage]\npath = "journal.db"\n\n'
        '[pairing]\ntrf = "open.trf"\npairings = "round{round}.txt"\n\n'
        "[[boards]]\nnumber = 1\n" + mqtt_table(broker, "hall-a")
    )
    return path


async def answers(port: int) -> dict[str, bytes]:
    found = {}
    for path in PATHS:
        answer = await http_get(port, path)
        found[path] = (
            answer.body if answer.status == 200 else b"HTTP %d: %b" % (answer.status, answer.body)
        )
    return found


async def until_the_same(daemon: int, relay: int, what: str) -> dict[str, bytes]:
    """Wait until the relay answers every path of PATHS as the daemon does."""
    async with asyncio.timeout(30):
        while True:
            expected, got = await answers(daemon), await answers(relay)
            if expected == got:
                return got
            await asyncio.sleep(0.2)
    raise AssertionError(what)  # pragma: no cover


async def test_a_relay_serves_every_round_and_the_standings_after_restarts(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    config = event_files(tmp_path / "hall-a", mosquitto)
    relay_config = relay_file(tmp_path / "r1", mosquitto, "r1")
    run = ("run", "--config", str(config), "--http-port", "0", "--log-level", "WARNING")
    relay_args = ("relay", "--config", str(relay_config), "--http-port", "0")
    daemon = await start_dgtcast(*run, log=tmp_path / "daemon.log")
    relay = await start_dgtcast(*relay_args, log=tmp_path / "relay.log")
    try:
        async with Arbiter.connected(daemon.port) as arbiter:
            for board, result in RESULTS:
                reply = await arbiter.command(
                    {"type": "set_result", "board": board, "result": result}
                )
                assert reply["type"] == "ok", reply
                reply = await arbiter.command({"type": "confirm_result", "board": board})
                assert reply["type"] == "ok", reply
            shown = await until_the_same(daemon.port, relay.port, "round 4's results")
            standings = json.loads(shown["/standings.json"])["sections"][0]
            assert standings["tiebreaks"] == ["WIN", "BH-C1", "SB"]
            assert standings["complete"] is True
            reply = await arbiter.command({"type": "next_round", "section": "", "force": False})
            assert reply["type"] == "ok", reply
        shown = await until_the_same(daemon.port, relay.port, "round 4 archived")
        (section,) = json.loads(shown["/rounds.json"])["sections"]
        assert [r["round"] for r in section["rounds"]] == [4]
        assert [g["result"] for g in section["rounds"][0]["games"]][:5] == [
            "0-1",
            "1-0",
            "1/2-1/2",
            "1-0",
            "0-1",
        ]
        assert json.loads(shown["/round/4/3.json"])["result"] == "1/2-1/2"
        assert b'[Result "0-1"]' in shown["/round/4/1.pgn"]
        assert json.loads(shown["/standings.json"])["sections"][0]["round"] == 5
        assert shown["/round/99.pgn"] == b"HTTP 404: no such round\n"  # the relay's too
        assert shown["/round/99/1.pgn"] == b"HTTP 404: no such game\n"

        await stop_process(relay.process, kill=True)  # the relay dies and comes back
        relay = await start_dgtcast(*relay_args, log=tmp_path / "relay-2.log")
        assert await until_the_same(daemon.port, relay.port, "after the relay's restart") == shown

        await stop_process(daemon.process)  # the daemon stops and comes back
        daemon = await start_dgtcast(*run, log=tmp_path / "daemon-2.log")
        assert await until_the_same(daemon.port, relay.port, "after the daemon's restart") == shown
    finally:
        for started in (relay, daemon):
            await stop_process(started.process)


def test_a_section_s_topic_level_is_its_name_percent_encoded() -> None:
    assert TOPICS.section("U12 / B", "standings") == "event/section/U12%20%2F%20B/standings"
    assert TOPICS.section("+", "standings") == "event/section/%2B/standings"  # no wildcard
    assert TOPICS.section("#", "standings") == "event/section/%23/standings"
    assert TOPICS.section("", "standings") == "event/section/%/standings"
    assert TOPICS.section(None, "round/+") == "event/section/+/round/+"
    assert len({section_key(name) for name in ("", "%", "%25", "+", "a b", "a%20b")}) == 6
