"""``dgtcast demo`` on the shipped configuration: games are broadcast, Ctrl-C stops cleanly."""

from __future__ import annotations

import asyncio
import json
import signal
import urllib.request
from pathlib import Path

import chess.pgn

from daemon.commands.demo import DEMO_CONFIG, GAMES, PLAN, write_demo_config
from daemon.config.model import load_config
from tests.serving import STOP_LIMIT, start_dgtcast, stop_process

ROOT = Path(__file__).resolve().parents[3]


def test_demo_plan_games_are_shipped_and_legal() -> None:
    assert DEMO_CONFIG == ROOT / "config" / "demo.toml"  # a checkout reads config/
    config = load_config(DEMO_CONFIG)
    eboards = {b.number for b in config.boards if b.port is not None}
    assert set(PLAN) <= eboards
    assert any(b.port is None for b in config.boards), "one board without e-board"
    for plan in PLAN.values():
        with (GAMES / plan.pgn).open() as handle:
            game = chess.pgn.read_game(handle)
        assert game is not None
        assert not game.errors


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as reply:
        body: bytes = reply.read()
        return body


def test_the_demo_configuration_is_written_into_its_work_folder(tmp_path: Path) -> None:
    """Ports, journal and PGN folder all move into the folder: demos never share them."""
    config = load_config(write_demo_config(tmp_path))
    ports = [Path(board.port) for board in config.boards if board.port is not None]
    assert ports
    assert all(port.parent == tmp_path / "ports" for port in ports)
    assert config.storage.path.parent == tmp_path / "var"


async def test_demo_broadcasts_moves_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    args = ("demo", "--workdir", str(tmp_path), "--speed", "20", "--http-port", "0")
    started = await start_dgtcast(*args, log=tmp_path / "demo.log")
    demo, base = started.process, f"http://127.0.0.1:{started.port}"
    assert demo.stdout is not None
    try:
        moves = 0
        async with asyncio.timeout(60):
            while moves < 10:
                await asyncio.sleep(0.5)
                status = json.loads(await asyncio.to_thread(_get, f"{base}/status.json"))
                moves = sum(len(board["moves"]) for board in status["boards"])
        page = await asyncio.to_thread(_get, f"{base}/")
        assert b"<html" in page.lower()
    finally:
        demo.send_signal(signal.SIGINT)
        try:
            output = await asyncio.wait_for(demo.stdout.read(), STOP_LIMIT)
            code = await asyncio.wait_for(demo.wait(), STOP_LIMIT)
        finally:
            await stop_process(demo, kill=True)  # none left behind, whatever happened
    assert code == 0, (tmp_path / "demo.log").read_text()
    assert b"demo stopped" in output
