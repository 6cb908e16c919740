"""The HTTP side of the broadcast server: PGN, status, static files, with raw requests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from broadcast.feed.hub import Hub
from broadcast.feed.pgn import game_pgn, round_pgn
from broadcast.web.http import CHESSGROUND_ROOT, safe_file
from broadcast.web.server import BroadcastServer
from tests.broadcast.feed_client import RecordingHandler, http_get, state_after

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def server() -> AsyncIterator[BroadcastServer]:
    hub = Hub()
    hub.publish_board(state_after(2, 3, section="A"))
    hub.publish_board(state_after(1, 2, section="B"))
    hub.publish_board(state_after(7, 1, section="A"))
    async with BroadcastServer(hub, RecordingHandler()) as server:
        yield server


async def test_round_pgn(server: BroadcastServer) -> None:
    answer = await http_get(server.port, "/round.pgn")
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/x-chess-pgn; charset=utf-8"
    assert answer.headers["cache-control"] == "no-cache"
    assert answer.headers["access-control-allow-origin"] == "*"
    assert int(answer.headers["content-length"]) == len(answer.body)
    assert answer.body.decode() == round_pgn(server.hub.states())
    rounds = [line for line in answer.body.decode().splitlines() if line.startswith("[Round")]
    # sections by their lowest board (B has board 1), then boards: B1, A2, A7
    assert rounds == ['[Round "3.1"]', '[Round "3.2"]', '[Round "3.7"]']


async def test_board_pgn(server: BroadcastServer) -> None:
    answer = await http_get(server.port, "/board/2.pgn?cache=bust")
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/x-chess-pgn; charset=utf-8"
    state = server.hub.state(2)
    assert state is not None
    assert answer.body.decode() == game_pgn(state)
    for missing in ("/board/99.pgn", "/board/0.pgn", "/board/02.pgn", "/board/x.pgn"):
        assert (await http_get(server.port, missing)).status == 404, missing


async def test_etag_and_304(server: BroadcastServer) -> None:
    first = await http_get(server.port, "/round.pgn")
    etag = first.headers["etag"]
    for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        again = await http_get(server.port, "/round.pgn", f"If-None-Match: {header}")
        assert again.status == 304, header
        assert again.body == b""
        assert again.headers["etag"] == etag
    other = await http_get(server.port, "/round.pgn", 'If-None-Match: "stale"')
    assert other.status == 200
    server.hub.publish_board(state_after(1, 3, section="B"))
    changed = await http_get(server.port, "/round.pgn", f"If-None-Match: {etag}")
    assert changed.status == 200
    assert changed.headers["etag"] != etag


async def test_status_json(server: BroadcastServer) -> None:
    answer = await http_get(server.port, "/status.json")
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/json"
    status = json.loads(answer.body)
    assert set(status) == {"server_time", "delay", "seq", "boards"}
    assert status["seq"] == 3
    assert [b["board"] for b in status["boards"]] == [1, 2, 7]
    assert all("pgn" not in b for b in status["boards"])
    assert status["boards"][0]["moves"][0] == {
        "san": "e4",
        "uci": "e2e4",
        "clock": 5400.0,
        "emt": None,
    }


async def test_static_pages(server: BroadcastServer) -> None:
    index = await http_get(server.port, "/")
    assert index.status == 200
    assert index.headers["content-type"] == "text/html; charset=utf-8"
    assert b"<html" in index.body
    assert (await http_get(server.port, "/index.html")).body == index.body
    arbiter = await http_get(server.port, "/arbiter.html")
    assert arbiter.status == 200
    assert b"/ws/arbiter" in arbiter.body
    etag = index.headers["etag"]
    assert (await http_get(server.port, "/", f"If-None-Match: {etag}")).status == 304


async def test_chessground_from_node_modules(server: BroadcastServer) -> None:
    if not (CHESSGROUND_ROOT / "package.json").is_file():
        pytest.fail("node_modules/chessground is missing (make setup)")
    answer = await http_get(server.port, "/vendor/chessground/package.json")
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/json"
    assert json.loads(answer.body)["name"] == "chessground"


@pytest.mark.parametrize(
    "path",
    [
        "/../pyproject.toml",
        "/../../pyproject.toml",
        "/%2e%2e/pyproject.toml",
        "/%2e%2e/%2e%2e/pyproject.toml",
        "/..%2f..%2fpyproject.toml",
        "/%2E%2E/%2e%2e/main/pyproject.toml",
        "/vendor/chessground/../../pyproject.toml",
        "/vendor/chessground/%2e%2e/%2e%2e/pyproject.toml",
        "/vendor/chessground/..%2f..%2fpyproject.toml",
        "/vendor/chessground/..%5c..%5cpyproject.toml",
        "/vendor/chessground//etc/passwd",
        "/vendor/chessground/%2fetc%2fpasswd",
        "//etc/passwd",
        "/%2fetc/passwd",
        "/./index.html",
        "/index.html%00.txt",
        "/.gitignore",
        "/vendor/chessground/",
        "/vendor/chessground/src",
        "/nope.html",
        "/ws/nope",
    ],
)
async def test_unsafe_or_unknown_paths_are_404(server: BroadcastServer, path: str) -> None:
    answer = await http_get(server.port, path)
    assert answer.status == 404
    assert answer.body == b"not found\n"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "HEAD", "OPTIONS"])
async def test_other_methods_are_405(server: BroadcastServer, method: str) -> None:
    for path in ("/round.pgn", "/ws", "/nope"):
        answer = await http_get(server.port, path, method=method)
        assert answer.status == 405
        assert answer.headers["allow"] == "GET"


async def test_feed_path_without_upgrade_is_426(server: BroadcastServer) -> None:
    answer = await http_get(server.port, "/ws")
    assert answer.status == 426


# --- Static files under a root of our own, with symlinks -----------------------------


@pytest.fixture
def static_root(tmp_path: Path) -> Path:
    root = tmp_path / "static"
    (root / "sub").mkdir(parents=True)
    (root / "index.html").write_text("<html>home</html>")
    (root / "sub" / "app.js").write_text("export {};")
    (root / "inside.js").symlink_to(root / "sub" / "app.js")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (root / "escape.txt").symlink_to(secret)
    (root / "outdir").symlink_to(tmp_path)
    return root


def test_safe_file(static_root: Path) -> None:
    assert safe_file(static_root, "sub/app.js") == static_root / "sub" / "app.js"
    assert safe_file(static_root, "sub%2Fapp.js") is None
    assert safe_file(static_root, "inside.js") == (static_root / "sub" / "app.js")
    for unsafe in ("escape.txt", "outdir/secret.txt", "sub", "../secret.txt", "%ff.js", ""):
        assert safe_file(static_root, unsafe) is None, unsafe
    assert safe_file(static_root / "missing", "index.html") is None


async def test_symlinks_out_of_the_root_are_404(static_root: Path) -> None:
    async with BroadcastServer(
        Hub(), RecordingHandler(), static_root=static_root, vendor_root=static_root / "sub"
    ) as server:
        assert (await http_get(server.port, "/")).body == b"<html>home</html>"
        inside = await http_get(server.port, "/inside.js")
        assert inside.status == 200
        assert inside.headers["content-type"] == "text/javascript; charset=utf-8"
        assert (await http_get(server.port, "/vendor/chessground/app.js")).status == 200
        for path in ("/escape.txt", "/outdir/secret.txt", "/vendor/chessground/../escape.txt"):
            answer = await http_get(server.port, path)
            assert answer.status == 404, path
            assert b"secret" not in answer.body
