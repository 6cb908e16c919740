"""``[server] results``: the daemon's public outputs and its arbiters see results apart."""

from __future__ import annotations

from pathlib import Path

from broadcast.feed.commands import ConfirmResult, SetResult
from broadcast.feed.pgn import PROVISIONAL_COMMENT
from tests.broadcast.feed_client import http_get
from tests.daemon.support import BoardSpec, running_daemon, wait_for, write_config


def results_config(tmp_path: Path, results: str | None) -> Path:
    return write_config(tmp_path, [BoardSpec(1, None), BoardSpec(2, None)], results=results)


async def public_pgn(port: int, board: int) -> str:
    answer = await http_get(port, f"/board/{board}.pgn")
    assert answer.status == 200
    return answer.body.decode()


async def test_by_default_the_public_sees_confirmed_results_only(tmp_path: Path) -> None:
    async with running_daemon(results_config(tmp_path, None)) as daemon:
        port = daemon.server.port
        assert (await daemon.service.execute(SetResult(board=2, result="1-0"))).ok
        live = daemon.hub.state(2)
        assert live is not None
        assert (live.result, live.result_final) == ("1-0", False)  # the arbiters see it
        public = daemon.server.public_hub.state(2)
        assert public is not None
        assert public.result == "*"
        assert '[Result "*"]' in await public_pgn(port, 2)
        assert (await daemon.service.execute(ConfirmResult(board=2))).ok
        await wait_for(
            lambda: getattr(daemon.server.public_hub.state(2), "result", "") == "1-0", 10, "final"
        )
        text = await public_pgn(port, 2)
        assert '[Result "1-0"]' in text
        assert PROVISIONAL_COMMENT not in text


async def test_provisional_results_are_shown_marked(tmp_path: Path) -> None:
    async with running_daemon(results_config(tmp_path, "provisional")) as daemon:
        assert (await daemon.service.execute(SetResult(board=1, result="0-1"))).ok
        text = await public_pgn(daemon.server.port, 1)
        assert '[Result "0-1"]' in text
        assert text.rstrip().endswith(f"{PROVISIONAL_COMMENT} 0-1")
