"""Why a server cannot listen, in one line (docs/faults.md); the port it listens on.

A busy port, an unknown host or a privileged port is the operator's to fix, not a bug:
the daemon, the demo and the relay print :class:`ListenError` as one line naming the
address and the reason, and exit with code 2.
"""

from __future__ import annotations

import errno
import socket

from websockets.asyncio.server import Server

__all__ = ["ListenError", "listen_error", "listening_port"]

_REASONS = {
    errno.EADDRINUSE: "the port is in use (another dgtcast, or another program, listens there)",
    errno.EACCES: "permission denied (ports below 1024 need privileges)",
    errno.EADDRNOTAVAIL: "no network interface of this machine has this address",
}


class ListenError(Exception):
    """The server cannot listen on its address; ``str()`` is the one-line explanation."""


def listen_error(host: str, port: int, exc: OSError) -> ListenError:
    """The one-line error for ``exc`` raised while binding ``host:port``."""
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(exc, socket.gaierror):
        reason = f"the host name does not resolve ({exc.strerror or exc})"
    else:
        reason = _REASONS.get(exc.errno or 0) or (exc.strerror or str(exc))
    return ListenError(f"cannot listen on {address}: {reason}")


def listening_port(server: Server | None, name: str) -> int:
    """The TCP port ``server`` listens on (its first socket's); before it is started, a
    RuntimeError that names the server (``name``)."""
    if server is None:
        raise RuntimeError(f"{name} is not started")
    port: int = server.sockets[0].getsockname()[1]
    return port
