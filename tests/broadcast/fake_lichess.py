"""A fake lichess on loopback for the push tests of the daemon and the relay."""

from __future__ import annotations

import json

from tests.broadcast.conftest import Answer, ReceivedRequest, RecordingServer

__all__ = ["BAD", "GOOD", "FakeLichess", "path_of"]

GOOD, BAD = "lip_good_token_1", "lip_bad_token"


def path_of(round_id: str) -> str:
    """The push path of a lichess round."""
    return f"/api/broadcast/round/{round_id}/push"


class FakeLichess:
    """Answers like lichess: 401 for a bad token, 404 for a round marked gone, else 200."""

    def __init__(self, server: RecordingServer) -> None:
        self.server = server
        self.gone: set[str] = set()
        server.answer_for = self.answer

    def answer(self, request: ReceivedRequest) -> Answer:
        if request.headers.get("authorization") != f"Bearer {GOOD}":
            return Answer(status=401, reason="Unauthorized", body=b'{"error":"No such token"}')
        if request.path in self.gone:
            self.gone.discard(request.path)
            return Answer(status=404, reason="Not Found", body=b'{"error":"No such round"}')
        games = request.body.decode().count("[Event ")
        return Answer(body=json.dumps({"games": [{"tags": {}, "moves": 0}] * games}).encode())

    def to(self, round_id: str) -> list[ReceivedRequest]:
        return [r for r in self.server.requests if r.path == path_of(round_id)]
