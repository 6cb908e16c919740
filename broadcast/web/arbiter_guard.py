"""Who may talk to the arbiter channel, and how fast a wrong token may be tried again.

Three checks (docs/faults.md, "Hostile clients"):

* ``Origin``: a browser page may open ``/ws/arbiter`` only from the daemon's own pages
  (the origin the ``Host`` header names) or an origin of ``[server] allowed_origins``.
  Clients that are not browsers send no ``Origin`` and are let through to the token.
* ``Host``: a host *name* must be ``localhost``, this machine's name (also with
  ``.local``), the configured host or the host of an allowed origin; IP addresses are
  always fine. A page of another site whose name was
  made to resolve to this machine (DNS rebinding) would otherwise count as our own.
* Wrong tokens (:class:`TokenThrottle`): a right token is let in at once; the answers
  to wrong ones are held, longer with each one from the same client, within bounds, and
  logged at most one line every ``log_every`` seconds in all.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from base.backoff import Backoff, BackoffPolicy
from broadcast.web.log_limit import LogLimit

__all__ = ["OriginPolicy", "TokenThrottle", "client_key"]

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
    backoff: Backoff  # its failures are the wrong tokens in a row
    next_answer: float = 0.0
    held: int = 0


def client_key(address: str) -> str:
    """The key under which wrong tokens from ``address`` are counted.

    Every loopback address (``127.0.0.0/8``, ``::1``) is one key, as is each IPv6
    ``/64`` (one household or server): rotating the source address over them multiplies
    neither the holds nor the log lines. Other IPv4 addresses count alone.
    """
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network(f"{ip}/64", strict=False))
    return str(ip)


class TokenThrottle:
    """Slows down and logs wrong arbiter tokens, without ever holding a right one back.

    Every token is checked as soon as it arrives (in constant time): a right token is
    let in at once, whatever others guessed from the same address. A wrong one (or any
    other first message than an ``auth``) is counted for its client's key
    (:func:`client_key`) and its answer held: the first at once, then each one
    ``first_delay`` seconds after the previous, doubling with each further wrong one up
    to ``max_delay``. A right token clears the record. Holds are bounded: at most
    ``max_held_per_client`` per key and ``max_held`` in all; beyond, the answer goes at
    once. A hold ends early when its connection closes (a client gone, the daemon
    stopping). Wrong tokens are logged at WARNING, at most one line every
    ``log_every`` seconds in all, with the counts since the last line.

    The token itself is what keeps guessers out: ``dgtcast run`` asks for at least 12
    random characters (about 70 bits); the throttle keeps guessing from costing the
    daemon anything, or the arbiter their seat.
    """

    def __init__(
        self,
        *,
        first_delay: float = 1.0,
        max_delay: float = 30.0,
        log_every: float = 10.0,
        max_held_per_client: int = 8,
        max_held: int = 256,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.first_delay = first_delay
        #: Each wrong token's delay: doubling from ``first_delay``, at most ``max_delay``.
        self._policy = BackoffPolicy(initial=min(first_delay, max_delay), maximum=max_delay)
        self.max_delay = max_delay
        self.max_held_per_client = max_held_per_client
        self.max_held = max_held
        self._clock = clock
        self._clients: dict[str, _Client] = {}
        self._held = 0
        self._log = LogLimit(log_every, clock)
        self._unlogged_keys: set[str] = set()

    @property
    def held(self) -> int:
        """Answers to wrong tokens being held now."""
        return self._held

    def failures(self, address: str) -> int:
        """Wrong tokens in a row from ``address``'s key."""
        client = self._clients.get(client_key(address))
        return 0 if client is None else client.backoff.failures

    def succeeded(self, address: str) -> None:
        """A right token from ``address``: its key's record is cleared."""
        self._clients.pop(client_key(address), None)

    async def failed(self, address: str, closed: Callable[[], Awaitable[object]]) -> None:
        """A wrong token from ``address``: wait until its answer may go.

        Ends early when ``closed()`` (the connection's end) completes.
        """
        key = client_key(address)
        client = self._client(key)
        now = self._clock()
        delay = client.backoff.next_delay()
        full = client.held >= self.max_held_per_client or self._held >= self.max_held
        hold = 0.0 if full else max(0.0, client.next_answer - now)
        client.next_answer = now + hold + delay
        self._note(address, key, client, hold)
        if hold <= 0:
            return
        client.held += 1
        self._held += 1
        try:
            await _until_either(asyncio.sleep(hold), closed())
        finally:
            client.held -= 1
            self._held -= 1

    def _note(self, address: str, key: str, client: _Client, hold: float) -> None:
        self._unlogged_keys.add(key)
        count = self._log.due()
        if count is None:
            if len(self._unlogged_keys) > _MAX_CLIENTS:
                self._unlogged_keys.clear()
            return
        logger.warning(
            "wrong arbiter token from %s (%d since the last line, from %d client(s);"
            " %d in a row from it); its answer waits %.0f s",
            address,
            count,
            len(self._unlogged_keys),
            client.backoff.failures,
            hold,
        )
        self._unlogged_keys.clear()

    def _client(self, key: str) -> _Client:
        client = self._clients.get(key)
        if client is None:
            if len(self._clients) >= _MAX_CLIENTS:
                self._forget()
            client = self._clients[key] = _Client(Backoff(self._policy))
        return client

    def _forget(self) -> None:
        """Drop records whose holds are over, then the oldest (bounded memory)."""
        now = self._clock()
        for key, client in list(self._clients.items()):
            if not client.held and client.next_answer <= now:
                del self._clients[key]
        while len(self._clients) >= _MAX_CLIENTS:
            del self._clients[next(iter(self._clients))]


#: Client keys remembered at most (records whose holds are over go first).
_MAX_CLIENTS = 10_000


async def _until_either(first: Awaitable[object], second: Awaitable[object]) -> None:
    """Wait until either completes; cancel the other."""
    tasks = {asyncio.ensure_future(first), asyncio.ensure_future(second)}
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
