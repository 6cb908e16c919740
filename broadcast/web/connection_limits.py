"""How many connections a server holds, and the one policy every port the daemon opens
follows (:class:`ConnectionPolicy`).

Each connection holds a file descriptor. At the common limit of 1,024, one client
opening 1,100 slow connections used to exhaust them: every accept then failed, and
spectators and arbiters waited as long as the flood lasted (issue 17.4). With limits,
the server aborts a connection beyond them right after accepting it, so the process
never runs out of descriptors and other clients are still served
(docs/faults.md, "File descriptors").

The broadcast server, the LiveChess API and the relay all serve with one
:class:`ConnectionPolicy`: the same limits (a daemon's ports share one count, so two
ports do not double what one address may hold), the same time to finish a handshake
and to close, the same write buffer and the same keep-alive pings.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import ServerConnection

from broadcast.web.request_check import GetOnlyConnection

__all__ = ["ConnectionLimits", "ConnectionPolicy", "capped_connection"]

logger = logging.getLogger(__name__)


class ConnectionLimits:
    """Counts open connections; says whether one more may stay.

    Args:
        per_client: connections one client address may hold (None: no limit).
        total: connections in all (None: no limit).
        log_every: at most one WARNING line about refused connections this often.
    """

    def __init__(
        self, *, per_client: int | None, total: int | None, log_every: float = 10.0
    ) -> None:
        self.per_client = per_client
        self.total = total
        self.log_every = log_every
        self.refused = 0
        self._open: Counter[str] = Counter()
        self._count = 0
        self._unlogged = 0
        self._logged_at = -1e18

    @property
    def open_connections(self) -> int:
        """Connections counted now."""
        return self._count

    def admit(self, address: str) -> bool:
        """Count a new connection from ``address``; False (not counted) past a limit."""
        if self.total is not None and self._count >= self.total:
            self._refuse(address, f"{self._count} connections open in all")
            return False
        if self.per_client is not None and self._open[address] >= self.per_client:
            self._refuse(address, f"{self._open[address]} connections open from it")
            return False
        self._open[address] += 1
        self._count += 1
        return True

    def release(self, address: str) -> None:
        """A counted connection closed."""
        self._count -= 1
        self._open[address] -= 1
        if self._open[address] <= 0:
            del self._open[address]

    def _refuse(self, address: str, why: str) -> None:
        self.refused += 1
        self._unlogged += 1
        now = time.monotonic()
        if now - self._logged_at >= self.log_every:
            logger.warning(
                "= connection from %s closed at once: %s (%d refused since the last line)",
                address,
                why,
                self._unlogged,
            )
            self._unlogged, self._logged_at = 0, now


def capped_connection(limits: ConnectionLimits) -> type[ServerConnection]:
    """A :class:`ServerConnection` class that aborts connections beyond ``limits`` (and
    answers any method but GET itself: :class:`GetOnlyConnection`)."""

    class CappedConnection(GetOnlyConnection):
        _counted_as: str | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            peer = transport.get_extra_info("peername")
            address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
            if limits.admit(address):
                self._counted_as = address
            else:
                assert isinstance(transport, asyncio.Transport)
                transport.abort()  # frees the descriptor now

        def connection_lost(self, exc: Exception | None) -> None:
            if self._counted_as is not None:
                limits.release(self._counted_as)
                self._counted_as = None
            super().connection_lost(exc)

    return CappedConnection


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionPolicy:
    """What every listening port of the daemon holds its clients to.

    Attributes:
        limits: connections per client address and in all (None: no limits); one
            instance for every port of a process.
        open_timeout: seconds a client has to send its HTTP request or finish the
            websocket handshake.
        close_timeout: seconds a closing handshake may take before the connection is
            dropped (a client that stopped reading cannot hold a shutdown).
        ping_interval / ping_timeout: keep-alive pings; a client that answers none
            within ``ping_timeout`` is dropped.
        write_limit: bytes buffered per connection before its sender waits.
        backlog: listen backlog (many clients may connect at once).
    """

    limits: ConnectionLimits | None = None
    open_timeout: float = 5.0
    close_timeout: float = 2.0
    ping_interval: float = 20.0
    ping_timeout: float = 20.0
    write_limit: int = 32 * 1024
    backlog: int = 1024

    def serve_options(self, max_size: int) -> dict[str, Any]:
        """Keyword arguments of ``websockets.asyncio.server.serve`` for frames of at most
        ``max_size`` bytes."""
        return {
            "compression": None,
            "max_size": max_size,
            "write_limit": self.write_limit,
            "backlog": self.backlog,
            "open_timeout": self.open_timeout,
            "close_timeout": self.close_timeout,
            "ping_interval": self.ping_interval,
            "ping_timeout": self.ping_timeout,
            "create_connection": (
                GetOnlyConnection if self.limits is None else capped_connection(self.limits)
            ),
        }
