"""The command line's way to the running daemon: its arbiter channel.

``dgtcast round next`` and ``dgtcast result`` talk to the daemon that ``dgtcast run
--config FILE`` started, at ``ws://host:port/ws/arbiter`` of the same file (the
``[server]`` address, or ``--http-port``), signed in with the token that reaches it:
the configured one (or ``DGTCAST_ARBITER_TOKEN``), else, on loopback, the daemon's own
(daemon/config/local_token.py). Nothing is edited and nothing restarts: each command is
the one the arbiter page sends, answered the same way.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidHandshake, WebSocketException

from broadcast.feed.commands import ArbiterCommand, command_to_json
from broadcast.feed.messages import BoardState, board_state_from_json
from daemon.config.local_token import arbiter_token
from daemon.config.model import ARBITER_TOKEN_ENV, Config, is_every_interface
from daemon.shell import runtime

__all__ = ["ArbiterSession", "NotSignedIn", "arbiter_session", "daemon_url", "reach_daemon"]


class NotSignedIn(Exception):
    """The daemon cannot be signed in to: no token yet, or it refused the token."""


def daemon_url(config: Config, http_port: int | None = None) -> str:
    """The daemon's arbiter channel, as this machine reaches it."""
    host = config.server.host
    if is_every_interface(host):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"ws://{host}:{http_port or config.server.port}/ws/arbiter"


@dataclass(slots=True)
class ArbiterSession:
    """One signed-in arbiter connection.

    Attributes:
        boards: every board as the daemon showed it on sign-in, in board order.
    """

    ws: ClientConnection
    boards: tuple[BoardState, ...]
    _refs: int = 0

    async def send(self, command: ArbiterCommand) -> dict[str, Any]:
        """Send ``command``; the daemon's ``ok`` or ``error`` answer to it.

        Raises:
            InvalidHandshake: the daemon closed the channel without an answer.
        """
        self._refs += 1
        ref = f"dgtcast-cli-{self._refs}"
        await self.ws.send(json.dumps({**command_to_json(command), "ref": ref}))
        async for message in self.ws:
            data = json.loads(message)
            if data.get("type") in ("ok", "error") and data.get("ref") in (ref, None):
                return dict(data)
        raise InvalidHandshake("the daemon closed the arbiter channel without an answer")


@asynccontextmanager
async def arbiter_session(
    config: Config, *, http_port: int | None = None
) -> AsyncIterator[ArbiterSession]:
    """Sign in to the daemon that runs ``config``.

    Raises:
        NotSignedIn: no token reaches it (why, in words), or it refused the token.
        OSError, TimeoutError, websockets.exceptions.WebSocketException: no daemon.
    """
    token = arbiter_token(config)
    if token.value is None:
        raise NotSignedIn(
            f"no daemon has run {config.source} yet: on loopback without [server]"
            f" arbiter_token the daemon makes its token at its first start ({token.path})"
        )
    async with connect(daemon_url(config, http_port)) as ws:
        await ws.send(json.dumps({"type": "auth", "token": token.value}))
        first = json.loads(await ws.recv())
        if first.get("type") != "snapshot":
            reason = first.get("reason", "no reason given")
            if token.local:
                raise NotSignedIn(
                    f"the daemon refused the token of {token.path}: {reason} (started with"
                    f" {ARBITER_TOKEN_ENV}? set it here too)"
                )
            raise NotSignedIn(f"the daemon refused the arbiter token: {reason}")
        boards = sorted(
            (board_state_from_json(json.dumps(b)) for b in first.get("boards", [])),
            key=lambda state: state.board,
        )
        yield ArbiterSession(ws=ws, boards=tuple(boards))


def reach_daemon(
    config: Config,
    http_port: int | None,
    timeout: float,
    job: Callable[[ArbiterSession], Awaitable[int]],
) -> int:
    """Run ``job`` signed in to the daemon; its exit code, or 1 (said why) without one."""

    async def signed_in() -> int:
        async with asyncio.timeout(timeout), arbiter_session(config, http_port=http_port) as s:
            return await job(s)

    url = daemon_url(config, http_port)
    try:
        return runtime.run(signed_in())
    except NotSignedIn as exc:
        print(f"dgtcast: {exc}", file=sys.stderr)
    except (OSError, TimeoutError, WebSocketException) as exc:
        print(f"dgtcast: no daemon answers at {url}: {exc or 'no answer in time'}", file=sys.stderr)
    return 1
