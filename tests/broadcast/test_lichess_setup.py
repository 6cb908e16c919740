"""``dgtcast lichess setup``: a two-section event's broadcasts and rounds on the fake lichess.

The command runs as a process (as an arbiter runs it) against the fake lichess on
loopback; the configuration file gets the ids, and the daemon's configuration reads
them back. Running it again creates nothing.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import pytest

from broadcast.outputs.lichess_setup import ExistingRound, WantedRound, plan_rounds
from daemon.config.lichess_ids import with_lichess_ids
from daemon.config.model import load_config
from tests.broadcast.conftest import RecordingServer
from tests.broadcast.fake_lichess import BAD, GOOD
from tests.broadcast.fake_lichess_api import FakeLichessApi
from tests.daemon.support import running_daemon, wait_for
from tests.pairing.support import player_line, trf_text
from tests.serving import dgtcast

CONFIG = """\
# The weekender: two sections, three rounds each.
[event]
name = "Riverside Weekender"
round = 1
round_start = "2026-07-04T10:00:00+10:00"
time_control = "5400+30"

[[sections]]
name = "Open"
[[sections.boards]]
number = 1
[sections.pairing]
trf = "open.trf"
pairings = "r1.txt"

[[sections]]
name = "Juniors"
[[sections.boards]]
number = 11
[sections.pairing]
trf = "juniors.trf"
pairings = "r1.txt"

[[lichess]]          # the Open's games
section = "Open"
token = "{token}"
server = "{server}"

[[lichess]]
section = "Juniors"
server = "{server}"  # the token comes from the environment
"""


def _files(folder: Path, server: str, token: str = GOOD) -> Path:
    players = [player_line(r, f"Player, {r}", "0.0") for r in (1, 2)]
    for name in ("open.trf", "juniors.trf"):
        (folder / name).write_text(trf_text("XXR 3", *players))
    (folder / "r1.txt").write_text("1\n1 2\n")
    path = folder / "event.toml"
    path.write_text(CONFIG.replace("{token}", token).replace("{server}", server))
    return path


async def _setup(config: Path, *extra: str, token: str = GOOD) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *dgtcast("lichess", "setup", "--config", str(config), *extra),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"DGTCAST_LICHESS_TOKEN": token, "PATH": "/usr/bin:/bin"},
    )
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_a_two_section_event_is_set_up_once(tmp_path: Path) -> None:
    server = RecordingServer()
    await server.start()
    fake = FakeLichessApi(server)
    try:
        config = _files(tmp_path, server.url(""))
        code, out, err = await _setup(config)
        assert (code, err) == (0, ""), out
        open_, juniors = fake.tours.values()
        assert open_.name == "Riverside Weekender - Open"
        assert juniors.name == "Riverside Weekender - Juniors"
        assert [r["name"] for r in open_.rounds] == ["Round 1", "Round 2", "Round 3"]
        start = dt.datetime(2026, 7, 4, 10, tzinfo=dt.timezone(dt.timedelta(hours=10)))
        assert open_.rounds[0]["startsAt"] == int(start.timestamp() * 1000)
        assert "startsAt" not in open_.rounds[1]
        loaded = load_config(config, env={"DGTCAST_LICHESS_TOKEN": GOOD})
        assert [(t.section, t.broadcast, t.rounds) for t in loaded.lichess] == [
            ("Open", open_.id, {str(n): str(r["id"]) for n, r in enumerate(open_.rounds, 1)}),
            ("Juniors", juniors.id,
             {str(n): str(r["id"]) for n, r in enumerate(juniors.rounds, 1)}),
        ]  # fmt: skip
        text = config.read_text()
        assert text.startswith("# The weekender")
        assert "[[lichess]]          # the Open's games" in text
        posts = len([r for r in server.requests if r.method == "POST"])
        assert posts == 2 + 6

        code, out, err = await _setup(config)
        assert (code, err) == (0, ""), out
        assert len([r for r in server.requests if r.method == "POST"]) == posts
        assert config.read_text() == text
        assert out.count("(kept)") == 2 + 6
    finally:
        await server.close()


async def test_the_daemon_pushes_to_the_rounds_it_set_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = RecordingServer()
    await server.start()
    fake = FakeLichessApi(server)
    try:
        config = _files(tmp_path, server.url(""))
        assert (await _setup(config))[0] == 0
        open_, juniors = fake.tours.values()
        monkeypatch.setenv("DGTCAST_LICHESS_TOKEN", GOOD)
        async with running_daemon(config):
            for tour in (open_, juniors):

                def pushed_to(first: str = str(tour.rounds[0]["id"])) -> bool:
                    return bool(fake.to(first))

                await wait_for(pushed_to, 10, f"a push to {tour.name}")
        pushed = {r.path for r in server.requests if r.path.endswith("/push")}
        assert pushed == {
            f"/api/broadcast/round/{open_.rounds[0]['id']}/push",
            f"/api/broadcast/round/{juniors.rounds[0]['id']}/push",
        }
    finally:
        await server.close()


async def test_a_round_deleted_on_lichess_is_created_again(tmp_path: Path) -> None:
    server = RecordingServer()
    await server.start()
    fake = FakeLichessApi(server)
    try:
        config = _files(tmp_path, server.url(""))
        assert (await _setup(config, "--rounds", "2"))[0] == 0
        open_ = next(iter(fake.tours.values()))
        gone = open_.rounds.pop(1)
        code, out, _ = await _setup(config, "--rounds", "2")
        assert code == 0
        assert f"Round 2: {open_.rounds[-1]['id']} (created)" in out
        assert str(gone["id"]) not in config.read_text()
    finally:
        await server.close()


async def test_a_refused_token_is_one_line_and_exit_1(tmp_path: Path) -> None:
    server = RecordingServer()
    await server.start()
    FakeLichessApi(server)
    try:
        config = _files(tmp_path, server.url(""), token=BAD)
        code, _, err = await _setup(config, token=BAD)
        assert code == 1
        assert err.startswith('dgtcast: creating broadcast "Riverside Weekender - Open":'
                              " lichess refused the token (401")  # fmt: skip
        assert err.count("\n") == 1
    finally:
        await server.close()


def test_rounds_are_kept_reused_or_created() -> None:
    wanted = [WantedRound(number=n, name=f"Round {n}") for n in (1, 2, 3)]
    existing = [
        ExistingRound(id="aaaaaaa1", name="Round 1"),
        ExistingRound(id="bbbbbbb2", name="Round 2"),
    ]
    steps = plan_rounds(wanted, existing, {1: "aaaaaaa1", 2: "zzzzzzz9"})
    assert [(s.action, s.id) for s in steps] == [
        ("keep", "aaaaaaa1"),
        ("reuse", "bbbbbbb2"),  # the configured id is gone; the round of that name is not
        ("create", None),
    ]


def test_ids_are_written_into_the_tables_and_nothing_else() -> None:
    text = (
        '[event]\nname = "X"\n\n[[lichess]]  # first\nsection = "A"\n'
        'rounds = { 1 = "old00001" }  # keep me?\n\n[[lichess]]\nsection = "B"\n'
    )
    new = with_lichess_ids(
        text, {0: ("tour0001", {1: "rnd00001", 2: "rnd00002"}), 1: ("tour0002", {1: "rnd00003"})},
        source="e.toml",
    )  # fmt: skip
    assert new == (
        '[event]\nname = "X"\n\n[[lichess]]  # first\nbroadcast = "tour0001"\n'
        'section = "A"\nrounds = { 1 = "rnd00001", 2 = "rnd00002" }\n\n[[lichess]]\n'
        'rounds = { 1 = "rnd00003" }\nbroadcast = "tour0002"\nsection = "B"\n'
    )


def test_rounds_as_a_sub_table_cannot_be_rewritten() -> None:
    text = '[lichess]\nsection = "A"\n[lichess.rounds]\n1 = "old00001"\n'
    with pytest.raises(ValueError, match="write each table's rounds on one line"):
        with_lichess_ids(text, {0: ("tour0001", {1: "rnd00001"})}, source="e.toml")
