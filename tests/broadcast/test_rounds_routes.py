"""Past rounds over HTTP (broadcast/web/rounds.py): archive, public delay, results policy."""

from __future__ import annotations

import dataclasses
import json

from broadcast.feed.archive import RoundArchive
from broadcast.feed.hub import Hub
from broadcast.web.http import HttpRoutes
from broadcast.web.rounds import RoundRoutes
from tests.browser.servers import board_state


def _routes(now: list[float], results: str = "provisional") -> tuple[HttpRoutes, RoundArchive]:
    hub = Hub()
    for number in (1, 2):
        hub.publish_board(board_state(number, ("e4",), section="Open", round=f"4.{number}"))
    archive = RoundArchive()
    old = [
        board_state(
            1,
            ("d4", "d5"),
            section="Open",
            round="3.1",
            result="1-0",
            result_final=True,
            pgn='[Event "Open"]\n[Round "3.1"]\n\n1. d4 d5 1-0\n',
        ),
        board_state(
            2,
            ("c4",),
            section="Open",
            round="3.2",
            result="0-1",
            result_final=False,
            pgn='[Event "Open"]\n[Round "3.2"]\n\n1. c4 0-1\n',
        ),
        board_state(3, (), section="Open", round="3.3", white="", black=""),  # nobody: left out
    ]
    archive.keep("Open", 3, old, at=1000.0)
    http = HttpRoutes(
        hub,
        extra=[RoundRoutes(archive, hub, delay=60.0, results=results, clock=lambda: now[0])],  # type: ignore[arg-type]
    )
    return http, archive


def _get(http: HttpRoutes, path: str) -> tuple[int, str]:
    reply = http.route("GET", path, {})
    assert reply is not None
    return reply.status, reply.body.decode()


def test_a_round_is_public_once_the_delay_has_passed() -> None:
    now = [1030.0]
    http, _ = _routes(now)
    assert json.loads(_get(http, "/rounds.json")[1]) == {"sections": []}
    assert _get(http, "/round/3/1.pgn")[0] == 404
    now[0] = 1061.0
    (section,) = json.loads(_get(http, "/rounds.json")[1])["sections"]
    assert section["section"] == "Open"
    (kept,) = section["rounds"]
    assert kept["round"] == 3
    assert [(g["board"], g["result"], g["plies"]) for g in kept["games"]] == [
        (1, "1-0", 2),
        (2, "0-1", 1),
    ]


def test_round_pgn_game_pgn_and_json() -> None:
    http, _ = _routes([2000.0])
    status, text = _get(http, "/round/3.pgn")
    assert status == 200
    assert text.count("[Event ") == 2
    assert "1. c4 {Provisional result: to be confirmed by the arbiter} 0-1" in text
    assert _get(http, "/round/3/1.pgn")[1] == '[Event "Open"]\n[Round "3.1"]\n\n1. d4 d5 1-0\n'
    status, body = _get(http, "/round/3/1.json?section=Open")
    game = json.loads(body)
    assert [move["san"] for move in game["moves"]] == ["d4", "d5"]
    assert game["result"] == "1-0"
    assert "pgn" in game
    assert _get(http, "/round/3/1.json?section=U12")[0] == 404
    assert _get(http, "/round/9/1.pgn")[0] == 404
    assert _get(http, "/round/99.pgn") == (404, "no such round\n")
    assert _get(http, "/round/3.pgn?section=U12") == (404, "no such round\n")
    live = json.loads(_get(http, "/round/4/2.json")[1])  # the round being played: the hub
    assert [move["san"] for move in live["moves"]] == ["e4"]


def test_results_not_confirmed_stay_hidden_under_confirmed() -> None:
    http, _ = _routes([2000.0], results="confirmed")
    games = json.loads(_get(http, "/rounds.json")[1])["sections"][0]["rounds"][0]["games"]
    assert [(g["board"], g["result"]) for g in games] == [(1, "1-0"), (2, "*")]


def test_a_round_kept_again_replaces_the_old_copy_and_can_be_forgotten() -> None:
    http, archive = _routes([2000.0])
    state = board_state(1, ("e4", "e5"), section="Open", round="3.1", result="1/2-1/2")
    archive.keep("Open", 3, [dataclasses.replace(state, result_final=True)], at=1500.0)
    games = json.loads(_get(http, "/rounds.json")[1])["sections"][0]["rounds"][0]["games"]
    assert [(g["board"], g["result"]) for g in games] == [(1, "1/2-1/2")]
    archive.forget("Open", 3)
    assert json.loads(_get(http, "/rounds.json")[1]) == {"sections": []}


def test_a_server_without_them_answers_the_lists_empty() -> None:
    http = HttpRoutes(Hub())
    assert _get(http, "/rounds.json") == (200, '{"sections":[]}')
    assert _get(http, "/standings.json") == (200, '{"sections":[]}')
    assert _get(http, "/round/3/1.pgn")[0] == 404
