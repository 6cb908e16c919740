"""Three rounds of a two-section event end each with no open alert (a real daemon, real boards).

Four emulated e-boards on ptys, found by their serial numbers; every game ends in a mate
on the board (``game_over``, a result to confirm). Each round the arbiter confirms every
result through the arbiter channel (a websocket client, as the arbiter page is): the
round then has no open alert, and the channel says so. Between rounds the cables are
pulled (``board_offline`` on every board), the arbiter moves both sections on over the
channel (``next_round``), and the boards are plugged back in another order: back online
is the resolution of ``board_offline``, not a new alert. A restart rebuilds every alert,
with its whole history, from the journal.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from daemon.shell.app import Daemon
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from tests.daemon.config_file import BoardSpec, SectionSpec, write_config
from tests.daemon.playing import next_round_after_cables_out, open_alerts, play_round, plugged
from tests.daemon.support import running_daemon
from tests.pairing.support import starting_line, trf_text, write_pairings
from tests.relay.support import TOKEN, Arbiter

FOOLS_MATE = "1. f3 e5 2. g4 Qh4# 0-1"
SCHOLARS_MATE = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0"
GAMES = {1: FOOLS_MATE, 2: SCHOLARS_MATE, 3: FOOLS_MATE}
SERIALS = {1: "71001", 2: "71002", 11: "71011", 12: "71012"}
SECTIONS = {"open": 1, "u12": 11}  # first board
#: The pairing program's output: round -> pairs (white, black) by starting rank.
PAIRS = {1: [(1, 2), (3, 4)], 2: [(4, 1), (2, 3)], 3: [(1, 3), (2, 4)]}
#: Where each board is plugged in, round by round (the cables come back shuffled).
PLACES = {
    1: {1: "dgt-a", 2: "dgt-b", 11: "dgt-c", 12: "dgt-d"},
    2: {1: "dgt-d", 2: "dgt-c", 11: "dgt-a", 12: "dgt-b"},
    3: {1: "dgt-b", 2: "dgt-a", 11: "dgt-d", 12: "dgt-c"},
}


def _write_event(folder: Path) -> Path:
    sections = []
    for section, first in SECTIONS.items():
        names = [f"{section.title()} Player {rank}" for rank in range(1, 5)]
        players = [starting_line(r, name, 3400000) for r, name in enumerate(names, 1)]
        trf = trf_text("012 Lifecycle Weekend 2026", "XXR 3", *players, ending="\n")
        (folder / f"{section}.trf").write_text(trf)
        write_pairings(folder, section, PAIRS)
        boards = [
            BoardSpec(n, str(folder / "dgt-*"), serial=SERIALS[n]) for n in (first, first + 1)
        ]
        pairing = {"trf": f"{section}.trf", "pairings": f"{section}-r{{round}}.txt"}
        sections.append(SectionSpec(section.upper(), boards, pairing=pairing))
    return write_config(
        folder,
        [],
        name="Lifecycle Weekend 2026",
        site=None,
        round_number=1,
        token=TOKEN,
        journal="weekend.db",
        sections=sections,
        file="weekend.toml",
    )


def _plugged(
    folder: Path, round_number: int
) -> AbstractAsyncContextManager[dict[int, EmulatedBoard]]:
    """The four e-boards, plugged in at the round's places; unplugged on exit."""
    at = {number: folder / place for number, place in PLACES[round_number].items()}
    return plugged(at, SERIALS, ClockSettings.from_text("3+2"), seed=100 * round_number)


async def _confirm_every_result(daemon: Daemon, round_number: int) -> None:
    """Through the arbiter channel, as the page sends it; then nothing is left open."""
    async with Arbiter.connected(daemon.server.port) as arbiter:
        shown = {alert["board"]: alert for alert in arbiter.snapshot["alerts"]}
        assert {(b, a["kind"]) for b, a in shown.items()} == {(b, "game_over") for b in SERIALS}
        for number in SERIALS:
            reply = await arbiter.command({"type": "confirm_result", "board": number})
            assert reply["type"] == "ok", reply
        resolved = await _resolutions(arbiter, len(SERIALS))  # live, as the page sees them
        assert sorted(a["board"] for a in resolved.values()) == sorted(SERIALS), round_number
    assert open_alerts(daemon) == [], f"round {round_number}"
    async with Arbiter.connected(daemon.server.port) as fresh:
        assert fresh.snapshot["alerts"] == []
        last = {a["id"]: a for a in fresh.snapshot["resolved"]}
        for alert in resolved.values():
            step = last[alert["id"]]["history"][-1]
            assert (step["step"], step["by"]) == ("resolved", "arbiter")
            assert step["note"].startswith("an arbiter confirmed the result ")


async def _resolutions(arbiter: Arbiter, count: int) -> dict[int, dict[str, Any]]:
    """Read the channel until ``count`` alerts it showed are resolved."""

    def resolved() -> dict[int, dict[str, Any]]:
        return {i: a for i, a in arbiter.alerts.items() if a["state"] == "resolved"}

    async with asyncio.timeout(10):
        while len(resolved()) < count:
            message = json.loads(await arbiter.ws.recv())
            if message["type"] == "alert":
                arbiter.alerts[message["id"]] = message
    return resolved()


async def test_every_round_ends_with_no_open_alert_once_every_result_is_confirmed(
    tmp_path: Path,
) -> None:
    config = _write_event(tmp_path)
    async with running_daemon(config) as daemon:
        for round_number, text in GAMES.items():
            async with _plugged(tmp_path, round_number) as boards:
                await play_round(daemon, boards, text)  # back online: the offline alerts resolve
                await _confirm_every_result(daemon, round_number)
                alerts = daemon.core.engine.alerts
            if round_number < 3:
                await next_round_after_cables_out(daemon, round_number, SERIALS, within=20)
                offline_only = [(b, "board_offline") for b in sorted(SERIALS)]
                assert sorted(open_alerts(daemon)) == offline_only
    offline = [a for a in alerts if a.kind == "board_offline"]
    assert len(offline) == 8  # each board, after rounds 1 and 2: no pile of repeats
    assert all(a.history[-1].note.startswith("the e-board answers again after") for a in offline)
    assert len([a for a in alerts if a.kind == "game_over"]) == 12
    assert not [a for a in alerts if a.kind not in ("board_offline", "game_over")], alerts
    async with running_daemon(config) as restarted:  # the journal rebuilds the same state
        rebuilt = restarted.core.engine.alerts
        assert rebuilt[: len(alerts)] == alerts  # each with its whole history
        # after them at most the cables pulled at the end of round 3, still out
        assert {a.kind for a in rebuilt[len(alerts) :]} <= {"board_offline"}
        assert {a.kind for a in restarted.hub.open_alerts()} <= {"board_offline"}
