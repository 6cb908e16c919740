"""Who may talk to the arbiter channel, and how fast a wrong token may be tried again.

Three checks (docs/faults.md, "Hostile clients"):

* ``Origin``: a browser page may open ``/ws/arbiter`` only from the daemon's own pages
  (the origin the ``Host`` header names) or an origin of ``[server] allowed_origins``.
  Clients that are not browsers send no ``Origin`` and are let through to the token.
* ``Host``: a host *name* must be ``localhost``, this machine's name (also with
  ``.local``), the configured host or the host of an allowed origin; IP addresses are
  always fine. A page of another site whose name was
  made to resolve to this machine (DNS rebinding) would otherwise count as our own.
* Wrong tokens: each client address gets one guess at a time; after a wrong one it waits
  ``first_delay`` seconds, doubling with each further wrong one up to ``max_delay``,
  before its next guess is even looked at. A right token clears its record. Wrong
  tokens are logged at WARNING, at most one line per address every ``log_every``
  seconds (with the count since the last line).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["OriginPolicy", "TokenThrottle"]

logger = logging.getLogger(__name__)


def _host_name(host_header: str) -> str:
    """The name or address in a ``Host`` header, lower case, without port or brackets."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class OriginPolicy:
    """The ``Origin`` and ``Host`` checks of ``/ws/arbiter``.

    Args:
        server_host: the host the server listens on (``[server] host``).
        allowed_origins: further origins whose pages may connect, like
            ``"https://arbiter.example.org"``.
    """

    server_host: str
    allowed_origins: tuple[str, ...] = ()

    def problem(self, host: str | None, origin: str | None) -> str | None:
        """Why a handshake with these headers is refused, or None when it may go on."""
        if host is None:
            return "a Host header is required"
        name = _host_name(host)
        machine = socket.gethostname().lower()
        allowed_names = {"localhost", machine, f"{machine}.local", self.server_host.lower()}
        allowed_names |= {(urlsplit(o).hostname or "") for o in self.allowed_origins}
        if not _is_address(name) and name not in allowed_names:
            return f"unexpected Host {host!r}"
        if origin is None:
            return None
        own = {f"http://{host.lower()}", f"https://{host.lower()}"}
        if origin.lower() in own or origin.lower() in self._allowed():
            return None
        return f"pages from {origin!r} may not use the arbiter channel"

    def _allowed(self) -> set[str]:
        return {o.lower().rstrip("/") for o in self.allowed_origins}


@dataclass(slots=True)
class _Client:
    failures: int = 0
    next_guess: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    unlogged: int = 0
    logged_at: float = -1e18


class TokenThrottle:
    """Slows down and logs wrong arbiter tokens, per client address.

    Use ``async with throttle.turn(address):`` around reading and checking one token,
    then call :meth:`failed` or :meth:`succeeded` inside it.
    """

    def __init__(
        self,
        *,
        first_delay: float = 1.0,
        max_delay: float = 30.0,
        log_every: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.log_every = log_every
        self._clock = clock
        self._clients: dict[str, _Client] = {}

    def failures(self, address: str) -> int:
        """Wrong tokens in a row from ``address``."""
        client = self._clients.get(address)
        return 0 if client is None else client.failures

    def turn(self, address: str) -> _Turn:
        """Wait for this address's turn to have a token checked."""
        return _Turn(self, address)

    def failed(self, address: str) -> None:
        """A wrong token from ``address``: its next guess waits longer."""
        client = self._client(address)
        client.failures += 1
        delay = min(self.max_delay, self.first_delay * 2 ** (client.failures - 1))
        now = self._clock()
        client.next_guess = now + delay
        client.unlogged += 1
        if now - client.logged_at >= self.log_every:
            logger.warning(
                "wrong arbiter token from %s (%d since the last line, %d in a row);"
                " its next try waits %.0f s",
                address,
                client.unlogged,
                client.failures,
                delay,
            )
            client.unlogged, client.logged_at = 0, now

    def succeeded(self, address: str) -> None:
        """A right token from ``address``: its record is cleared."""
        client = self._client(address)
        client.failures, client.next_guess, client.unlogged = 0, 0.0, 0

    def _client(self, address: str) -> _Client:
        client = self._clients.get(address)
        if client is None:
            if len(self._clients) >= _MAX_CLIENTS:
                self._forget_waited()
            client = self._clients[address] = _Client()
        return client

    def _forget_waited(self) -> None:
        """Drop the records of addresses whose wait is over (bounded memory)."""
        now = self._clock()
        for address, client in list(self._clients.items()):
            if not client.lock.locked() and client.next_guess <= now:
                del self._clients[address]

    def _release(self, address: str) -> None:
        client = self._clients.get(address)
        if client is None:
            return
        client.lock.release()
        if not client.failures and not client.lock.locked():
            del self._clients[address]


#: Addresses remembered at most (older records whose wait is over go first).
_MAX_CLIENTS = 10_000


class _Turn:
    def __init__(self, throttle: TokenThrottle, address: str) -> None:
        self._throttle, self._address = throttle, address

    async def __aenter__(self) -> None:
        client = self._throttle._client(self._address)
        await client.lock.acquire()
        wait = client.next_guess - self._throttle._clock()
        if wait > 0:
            try:
                await asyncio.sleep(wait)
            except BaseException:
                self._throttle._release(self._address)
                raise

    async def __aexit__(self, *exc_info: object) -> None:
        self._throttle._release(self._address)
