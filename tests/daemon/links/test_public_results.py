"""``[server] results``: the daemon's public outputs and its arbiters see results apart."""

from __future__ import annotations

from broadcast.feed.commands import ConfirmResult, SetResult
from broadcast.feed.pgn import PROVISIONAL_COMMENT
from tests.broadcast.feed_client import http_get
from tests.daemon.conftest import Serve
from tests.daemon.support import BoardSpec, wait_for

BOARDS = (BoardSpec(1, None), BoardSpec(2, None))


async def public_pgn(port: int, board: int) -> str:
    answer = await http_get(port, f"/board/{board}.pgn")
    assert answer.status == 200
    return answer.body.decode()


async def test_by_default_the_public_sees_confirmed_results_only(serve: Serve) -> None:
    async with serve(*BOARDS) as daemon:
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


async def test_provisional_results_are_shown_marked(serve: Serve) -> None:
    async with serve(*BOARDS, results="provisional") as daemon:
        assert (await daemon.service.execute(SetResult(board=1, result="0-1"))).ok
        text = await public_pgn(daemon.server.port, 1)
        assert '[Result "0-1"]' in text
        assert text.rstrip().endswith(f"{PROVISIONAL_COMMENT} 0-1")
