"""What the daemon hands spectators beside the feed: standings and past rounds.

The standings count a result of the round being played only once the public sees it
final (never before the board does, behind a public delay); the past rounds are
journalled when a section moves on and read back at start, but never the round a
section is still in.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from broadcast.feed.archive import RoundArchive
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from daemon.journal.hold import HeldJournal
from daemon.journal.store import Journal
from daemon.links.pairing import PairingLink
from daemon.links.standings import StandingsRoutes, section_standings, section_tiebreaks
from daemon.pairing.handoff import ResultHandoff, RoundResults
from daemon.pairing.pairings import read_pairings
from daemon.pairing.trf import Tournament
from daemon.shell.archive import ArchiveKeeper
from tests.browser.servers import board_state
from tests.pairing.support import copy_example


def _round4(tmp_path: Path) -> RoundResults:
    trf, pairings_file = copy_example(tmp_path)
    tournament = Tournament.from_trf(trf)
    return RoundResults(tournament, 4, read_pairings(pairings_file, tournament=tournament))


def _points(data: dict[str, object], rank: int) -> object:
    rows = data["standings"]
    assert isinstance(rows, list)
    return next(row["points"] for row in rows if row["start_rank"] == rank)


def test_a_result_counts_once_it_is_public(tmp_path: Path) -> None:
    results = _round4(tmp_path)
    results.receive_result(1, "0-1", source="arbiter", at=1.0)  # in the TRF already
    public: dict[int, BoardState] = {}
    before = section_standings("", results, public.get)
    assert (_points(before, 1), _points(before, 2)) == (2.5, 3)  # board 1: 2 (White) v 1
    assert before["pairings"][0]["result"] == "*"
    assert before["after_round"] == 3

    public[1] = board_state(1, round="4.1", result="0-1", result_final=False)
    provisional = section_standings("", results, public.get)
    assert _points(provisional, 1) == 2.5
    assert provisional["pairings"][0]["result"] == "0-1"
    assert provisional["pairings"][0]["result_final"] is False

    public[1] = board_state(1, round="4.1", result="0-1", result_final=True)
    final = section_standings("", results, public.get)
    assert (_points(final, 1), _points(final, 2)) == (3.5, 3)
    assert final["standings"][0]["name"] == "Okafor, Daniel"
    public[1] = board_state(1, round="3.1", result="1-0", result_final=True)  # an old round
    assert _points(section_standings("", results, public.get), 1) == 2.5


def test_the_round_pairings_list_the_byes(tmp_path: Path) -> None:
    nothing: dict[int, BoardState] = {}
    data = section_standings("Open", _round4(tmp_path), nothing.get)
    byes = [(row["white"]["name"], row["bye"]) for row in data["pairings"] if row["board"] is None]
    assert byes == [("Kowalski, Tomasz", "bye (½)"), ("Abbott, Lachlan", "bye")]
    assert json.dumps(data)  # JSON as it is served


def _keeper(journal: Journal, hub: Hub, archive: RoundArchive) -> ArchiveKeeper:
    return ArchiveKeeper(archive, hub, HeldJournal(journal), wall_clock=lambda: 1000.0)


def test_past_rounds_are_journalled_and_read_back(tmp_path: Path) -> None:
    hub = Hub()
    for number in (1, 2):
        hub.publish_board(board_state(number, ("e4", "e5"), section="Open", round=f"3.{number}"))
    hub.publish_board(board_state(41, ("d4",), section="U12", round="2.41"))
    with Journal(tmp_path / "journal.db") as journal:
        first = RoundArchive()
        keeper = _keeper(journal, hub, first)
        keeper.keep("Open")
        keeper.keep("U12")  # say the daemon stopped before U12 moved on: still round 2
        assert len(first) == 2
    with Journal(tmp_path / "journal.db") as journal:
        again = RoundArchive()
        assert _keeper(journal, Hub(), again).load(journal, {"Open": 4, "U12": 2}) == 1
    (kept,) = again.rounds(until=2000.0)
    assert (kept.section, kept.round, kept.at) == ("Open", 3, 1000.0)
    assert [state.moves for state in kept.states] == [state.moves for state in hub.states()[:2]]
    assert kept.states == tuple(hub.states()[:2])


def test_the_standings_are_computed_once_per_change(tmp_path: Path) -> None:
    trf, pairings_file = copy_example(tmp_path)
    tournament = Tournament.from_trf(trf)
    handoff = ResultHandoff(tournament, 4, read_pairings(pairings_file, tournament=tournament), trf)
    hub = Hub()
    routes = StandingsRoutes({"Open": PairingLink(handoff)}, hub, lambda: ["Open"])
    first = routes.answer("/standings.json", {})
    again = routes.answer("/standings.json", {})
    assert first is not None
    assert again is not None
    assert again.body is first.body  # nothing changed: not computed again
    handoff.receive_result(1, "0-1", source="arbiter", at=1.0)
    hub.publish_board(board_state(1, round="4.1", result="0-1", result_final=True))
    changed = routes.answer("/standings.json", {})
    assert changed is not None
    assert changed.body is not first.body
    (section,) = json.loads(changed.body)["sections"]
    assert section["standings"][0]["name"] == "Okafor, Daniel"
    assert routes.answer("/other.json", {}) is None


def _served(routes: StandingsRoutes) -> dict[str, Any]:
    answer = routes.answer("/standings.json", {})
    assert answer is not None
    data = json.loads(answer.body)
    assert isinstance(data, dict)
    return data


def test_the_tie_breaks_are_the_trf_s_else_the_configuration_s(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    trf, pairings_file = copy_example(tmp_path)
    plain = Tournament.from_trf(trf)

    def routes(tournament: Tournament, configured: list[str]) -> StandingsRoutes:
        pairs = read_pairings(pairings_file, tournament=tournament)
        link = PairingLink(ResultHandoff(tournament, 4, pairs, trf))
        return StandingsRoutes({"Open": link}, Hub(), lambda: ["Open"], lambda _: configured)

    (section,) = _served(routes(plain, []))["sections"]
    assert section["tiebreaks"] == ["BH-C1", "BH", "SB"]
    row = section["standings"][0]
    assert row["tiebreaks"] == [row["buchholz_cut1"], row["buchholz"], row["sonneborn_berger"]]

    (section,) = _served(routes(plain, ["WIN", "BH/M1"]))["sections"]
    assert section["tiebreaks"] == ["WIN", "BH-M1"]

    text = trf.read_bytes().decode().replace("XXR", "202 DE, PS, BPG\r\nXXR", 1)
    assert "202 DE" in text
    with_record = Tournament.from_text(text, source="with202.trf")
    with caplog.at_level(logging.WARNING):
        (section,) = _served(routes(with_record, ["WIN"]))["sections"]
    assert section["tiebreaks"] == ["PS", "BPG"]  # the TRF wins; DE is not computed
    assert len(section["standings"][0]["tiebreaks"]) == 2
    warned = [r.getMessage() for r in caplog.records if r.name == "daemon.links.standings"]
    assert warned == [
        'standings: with202.trf: record 202: tie-break "DE" is not one dgtcast computes'
        " (BH SB PS WIN WON BPG BWG ARO), left out",
        "standings: with202.trf: record 202 names DE PS BPG: [pairing] tiebreaks are not used"
        " (the TRF wins)",
    ]
    text = text.replace("202 DE, PS, BPG", "212 BH SB PTS")
    tiebreaks, problems = section_tiebreaks(Tournament.from_text(text, source="212.trf"))
    assert [t.code for t in tiebreaks] == ["BH", "SB"]
    assert problems == ["212.trf: record 212 ranks by BH first: dgtcast ranks by the points first"]
