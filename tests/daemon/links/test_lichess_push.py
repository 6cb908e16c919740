"""The daemon's lichess push against a fake lichess on loopback (issue 14, item 5).

One 120-board round (board 1 an emulated e-board with a running clock, boards 2-120
entered by hand) split over two lichess rounds by two ``[[lichess]]`` tables. The fake
lichess first refuses the token: each round gets one request, an arbiter alert carries
lichess's message, and nothing more is sent while the game goes on. The arbiter saves the
configuration with a good token: both rounds get every game, at most one push a second
each. A round that disappears (404) stops again; acknowledging its alert resumes it.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from broadcast.feed.alerts import Alert
from broadcast.feed.commands import AckAlert, ConfirmResult, SetResult
from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.broadcast.conftest import RecordingServer
from tests.broadcast.fake_lichess import BAD, GOOD, FakeLichess, path_of
from tests.daemon.config_file import TomlTable
from tests.daemon.support import BoardSpec, read_game, running_daemon, wait_for, write_config

ROUND_A, ROUND_B = "TestRdAa", "TestRdBb"


def write_round(tmp_path: Path, eboard: str, url: str, token: str) -> Path:
    boards = [BoardSpec(1, eboard)] + [BoardSpec(n, None) for n in range(2, 121)]
    lichess: list[TomlTable] = [
        {"boards": f"{first}-{last}", "rounds": {"2": round_id}, "token": token, "server": url}
        for first, last, round_id in ((1, 60, ROUND_A), (61, 120, ROUND_B))
    ]
    return write_config(tmp_path, boards, arrays={"lichess": lichess})


def refusals(daemon: Daemon) -> list[Alert]:
    return [a for a in daemon.hub.open_alerts() if a.kind == "lichess_refused"]


def latest_games(fake: FakeLichess, round_id: str) -> int:
    """Games in the latest push lichess took (one with the good token)."""
    sent = [r for r in fake.to(round_id) if r.headers.get("authorization") == f"Bearer {GOOD}"]
    return sent[-1].body.decode().count("[Event ") if sent else 0


async def test_a_120_board_round_over_two_lichess_rounds(tmp_path: Path, games_dir: Path) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")
    server = RecordingServer()
    await server.start()
    fake = FakeLichess(server)
    try:
        async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=7) as board:
            config = write_round(tmp_path, str(board.path), server.url(""), BAD)
            async with running_daemon(config) as daemon:
                # A refused token: one request per round, an alert each with lichess's words.
                await wait_for(lambda: len(refusals(daemon)) == 2, 20, "two refusal alerts")
                alerts = refusals(daemon)
                assert {a.details["round_id"] for a in alerts} == {ROUND_A, ROUND_B}
                assert {a.details["message"] for a in alerts} == {"No such token"}
                assert all("No such token" in a.action for a in alerts)
                await wait_for(daemon.sessions[1].online.is_set, 10, "board online")
                await board.play(game, speed=60, plies=12)
                await wait_for(lambda: len(daemon.core.games[1].record.moves) >= 10, 20, "moves")
                assert (len(fake.to(ROUND_A)), len(fake.to(ROUND_B))) == (1, 1)

                # The arbiter saves the configuration with a good token: every game goes.
                write_round(tmp_path, str(board.path), server.url(""), GOOD)
                await wait_for(
                    lambda: (latest_games(fake, ROUND_A), latest_games(fake, ROUND_B)) == (60, 60),
                    20,
                    "both lichess rounds got their 60 games",
                )
                await wait_for(lambda: refusals(daemon) == [], 10, "the refusals resolved")
                fixed = [daemon.hub.alert(a.id) for a in alerts]
                assert {a.history[-1].note for a in fixed if a is not None} == {
                    "the lichess settings were saved again: pushing again"
                }
                await board.play(game, speed=60)  # the rest of the game, clocks running
                await wait_for(lambda: daemon.core.engine.result_of(1) is not None, 20, "mate")
                assert (await daemon.service.execute(ConfirmResult(board=1))).ok  # public now
                await wait_for(
                    lambda: "0-1" in fake.to(ROUND_A)[-1].body.decode().split("\n\n")[1],
                    20,
                    "the final position on lichess",
                )

                # A round that disappeared on lichess stops; acknowledging the alert resumes.
                fake.gone.add(path_of(ROUND_B))
                reply = await daemon.service.execute(SetResult(board=61, result="1-0"))
                assert reply.ok
                assert (await daemon.service.execute(ConfirmResult(board=61))).ok
                await wait_for(lambda: len(refusals(daemon)) == 1, 20, "a 404 alert")
                (gone,) = [a for a in refusals(daemon) if a.details["status"] == 404]
                assert (gone.details["round_id"], gone.details["message"]) == (
                    ROUND_B,
                    "No such round",
                )
                before = len(fake.to(ROUND_B))
                ack = await daemon.service.execute(AckAlert(id=gone.id))
                assert ack.ok
                assert refusals(daemon) == []  # the arbiter's decision: push again
                await wait_for(lambda: len(fake.to(ROUND_B)) > before, 20, "pushed again")
                assert '[Result "1-0"]' in fake.to(ROUND_B)[-1].body.decode()
                assert daemon.lichess is not None
                recent = list(daemon.lichess.pusher.recent)
    finally:
        await server.close()
    # At most one push a second per lichess round, as sent and (with jitter) as received.
    for round_id in (ROUND_A, ROUND_B):
        starts = [at for url, at in recent if url.endswith(path_of(round_id))]
        assert all(b - a >= 1.0 for a, b in itertools.pairwise(starts))
        seen = fake.to(round_id)
        assert len(seen) - 1 <= seen[-1].at - seen[0].at + 1.0
    assert server.max_in_flight == 1
