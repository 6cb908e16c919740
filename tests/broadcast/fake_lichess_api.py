"""The fake lichess of the push tests, with the broadcast API ``dgtcast lichess setup``
uses: ``POST /broadcast/new``, ``POST /broadcast/{tourId}/new``, ``GET
/api/broadcast/{tourId}``; the push answers as :class:`FakeLichess` does."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from tests.broadcast.conftest import Answer, ReceivedRequest, RecordingServer
from tests.broadcast.fake_lichess import GOOD, FakeLichess

__all__ = ["FakeLichessApi", "FakeTour"]

_NEW_ROUND = re.compile(r"/broadcast/([A-Za-z0-9]{8})/new")
_TOUR = re.compile(r"/api/broadcast/([A-Za-z0-9]{8})")


@dataclass
class FakeTour:
    """A broadcast as the fake keeps it."""

    id: str
    name: str
    rounds: list[dict[str, object]] = field(default_factory=list)

    def json(self) -> dict[str, object]:
        return {"tour": {"id": self.id, "name": self.name, "slug": "x"}, "rounds": self.rounds}


def _json(data: object) -> Answer:
    return Answer(headers=(("Content-Type", "application/json"),), body=json.dumps(data).encode())


class FakeLichessApi(FakeLichess):
    """Keeps broadcasts and their rounds; 401 without the good token."""

    def __init__(self, server: RecordingServer) -> None:
        super().__init__(server)
        self.tours: dict[str, FakeTour] = {}
        self._made = 0
        server.answer_for = self.answer_api

    def _id(self, prefix: str) -> str:
        self._made += 1
        return f"{prefix}{self._made:05d}"

    def answer_api(self, request: ReceivedRequest) -> Answer:
        if request.headers.get("authorization") != f"Bearer {GOOD}":
            return Answer(status=401, reason="Unauthorized", body=b'{"error":"No such token"}')
        form = {k: v[0] for k, v in parse_qs(request.body.decode()).items()}
        if request.method == "POST" and request.path == "/broadcast/new":
            tour = FakeTour(id=self._id("tou"), name=form["name"])
            self.tours[tour.id] = tour
            return _json(tour.json())
        if request.method == "POST" and (match := _NEW_ROUND.fullmatch(request.path)):
            found = self.tours.get(match.group(1))
            if found is None:
                return Answer(status=404, reason="Not Found", body=b'{"error":"Not found"}')
            made: dict[str, object] = {"id": self._id("rnd"), "name": form["name"]}
            if "startsAt" in form:
                made["startsAt"] = int(form["startsAt"])
            found.rounds.append(made)
            return _json({"round": made, "tour": found.json()["tour"]})
        if request.method == "GET" and (match := _TOUR.fullmatch(request.path)):
            known = self.tours.get(match.group(1))
            if known is None:
                return Answer(status=404, reason="Not Found", body=b'{"error":"Not found"}')
            return _json(known.json())
        return self.answer(request)
