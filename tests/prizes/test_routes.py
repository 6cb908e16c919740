"""``/prizes.json``: the race as spectators may see it, from a running daemon too.

Round 4 of ``config/tournament-example.trf`` with ``config/prizes.toml``'s prize list,
before any game of round 4 ends. The round's byes count at once: Abbott's pairing bye
(1 point, now 2) and Kowalski's half-point bye. Worked by hand:

* conditional lists: Open 1 Lindqvist (3) $500, 2 Okafor (2.5) $350, 3-6 Brennan,
  Moreau, Abbott, Haddad on 2: (300 + 225) / 4 = $131.25 each; U2100 1-2 Abbott,
  Haddad $165 each; Rating group 1: Abbott $100; Under 18 1-2 Brennan, Abbott $75 each;
* Brennan (met first in the Open's tie by countback) keeps the Open, leaves Under 18;
  Abbott keeps U2100 ($165 over $150, $131.25, $100) and leaves the rest; the Open's
  3-5 becomes Brennan, Moreau, Haddad at $175; Haddad keeps the Open ($175 > $165) and
  leaves U2100, where Abbott is now alone at $200; Reyes keeps Rating group 1 ($100)
  over U2100's shared 2nd, which goes to O'Connell ($130);
* pooling: Haddad's leaving U2100 pays Abbott (same score) $200, more than Haddad's
  $175: the four on 2 pool 3 × 175 + 200 = $725, $181.25 each; Reyes's leaving U2100
  pays O'Connell $130 > $100: both $115.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from broadcast.feed.hub import Hub
from daemon.config.model import load_config
from daemon.links.pairing import PairingLink
from daemon.links.prizes import PrizeRoutes
from daemon.pairing.handoff import ResultHandoff
from daemon.pairing.pairings import read_pairings
from daemon.pairing.trf import Tournament
from tests.browser.servers import board_state
from tests.daemon.support import running_daemon
from tests.pairing.support import copy_example
from tests.shared_data import ROOT


def _config(folder: Path, ratings: str | None = None) -> Path:
    copy_example(folder)
    text = (ROOT / "config" / "prizes.toml").read_text(encoding="utf-8")
    text = text.replace('"tournament-example.trf"', '"tournament.trf"')
    text = text.replace('"round4-pairings.txt"', '"round4.txt"')
    text = text.replace('port = "/dev/ttyACM0"\n', "").replace('port = "/dev/ttyACM1"\n', "")
    if ratings is not None:
        (folder / "ratings.csv").write_text(ratings, encoding="utf-8")
        extra = 'ratings = "ratings.csv"\nrating_systems = ["ACF"]\n'
        text = text.replace("[prizes]\n", "[prizes]\n" + extra)
    path = folder / "prizes.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _routes(folder: Path, ratings: str | None = None) -> tuple[PrizeRoutes, ResultHandoff, Hub]:
    config = load_config(_config(folder, ratings), env={})
    trf = folder / "tournament.trf"
    tournament = Tournament.from_trf(trf)
    pairings = read_pairings(folder / "round4.txt", tournament=tournament)
    handoff = ResultHandoff(tournament, 4, pairings, trf)
    hub = Hub()
    routes = PrizeRoutes({"": PairingLink(handoff)}, hub, lambda: [""], config.prizes)
    return routes, handoff, hub


def _served(routes: PrizeRoutes) -> dict[str, Any]:
    answer = routes.answer("/prizes.json", {})
    assert answer is not None
    assert answer.status == 200
    (section,) = json.loads(answer.body)["sections"]
    assert isinstance(section, dict)
    return section


def _cash(section: dict[str, Any]) -> dict[str, float]:
    return {award["name"]: award["amount"] for award in section["cash"]}


def test_the_race_counts_a_result_once_spectators_see_it(tmp_path: Path) -> None:
    routes, handoff, hub = _routes(tmp_path)
    before = _served(routes)
    assert _cash(before)["Lindqvist, Maja"] == 500
    assert _cash(before) == {
        "Lindqvist, Maja": 500, "Okafor, Daniel": 350, "Moreau, Claire": 181.25,
        "Haddad, Samir": 181.25, "Abbott, Lachlan": 181.25, "Brennan, Oscar": 181.25,
        "O'Connell, Fiona": 115, "Reyes, Carmen": 115, "Nguyen, Minh": 75,
        "Ferreira, Beatriz": 75,
    }  # fmt: skip
    assert before["groups"][0]["race"][2] == {
        "places": "3-6",
        "points": 2,
        "share": 131.25,
        "players": [
            {"start_rank": 13, "name": "Brennan, Oscar", "rating": None},
            {"start_rank": 4, "name": "Moreau, Claire", "rating": 2150},
            {"start_rank": 11, "name": "Abbott, Lachlan", "rating": 1765},
            {"start_rank": 6, "name": "Haddad, Samir", "rating": 2041},
        ],
    }
    # Board 1 of round 4 is Lindqvist (white) against Okafor: 0-1 puts Okafor on 3.5.
    handoff.receive_result(1, "0-1", source="arbiter", at=1.0)
    assert _served(routes) == before, "confirmed, but not public yet"
    hub.publish_board(board_state(1, round="4.1", result="0-1", result_final=True))
    after = _served(routes)
    assert after["cash"][0]["name"] == "Okafor, Daniel"
    assert after["cash"][0]["amount"] == 500
    assert routes.answer("/standings.json", {}) is None


@pytest.mark.error_log(r"prizes: .*ratings.csv:2: ACF 'x' is not a rating")
def test_a_ratings_file_that_cannot_be_used_answers_its_problems(tmp_path: Path) -> None:
    routes, _, _ = _routes(tmp_path, ratings='name,ACF\n"Okafor, Daniel",x\n')
    section = _served(routes)
    assert section == {
        "section": "",
        "problems": [f"{tmp_path / 'ratings.csv'}:2: ACF 'x' is not a rating like 1650?"],
    }


async def test_the_daemon_serves_the_race(tmp_path: Path) -> None:
    async with (
        running_daemon(_config(tmp_path)) as daemon,
        httpx.AsyncClient(base_url=daemon.address) as client,
    ):
        reply = await client.get("/prizes.json")
    assert reply.status_code == 200
    (section,) = reply.json()["sections"]
    assert section["after_round"] == 4
    assert [g["name"] for g in section["groups"]] == [
        "Open", "U2100", "Rating group 1", "Under 18", "Girls"
    ]  # fmt: skip
    assert _cash(section)["Haddad, Samir"] == 181.25
