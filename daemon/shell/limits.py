"""Operating-system limits at start: open files, and a quiet accept loop (issue 17.4).

* The soft limit on open files is raised to the hard one (many systems start programs
  at 1,024 while allowing far more): every spectator holds one descriptor.
* The broadcast server keeps its connections below that limit with a margin for the
  serial ports, the journal and outgoing clients (:func:`connection_limits`).
* Should accepting a connection fail all the same (descriptors used up elsewhere),
  asyncio reports each failed accept with a traceback; :func:`quiet_accept_errors`
  turns that into one WARNING line every ``every`` seconds with a count, so a flood
  cannot fill the disk with logs, and drops asyncio's retries of such accepts that run
  after the server closed (a traceback each, on Python 3.11).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from typing import Any

from broadcast.web.connection_limits import ConnectionLimits

__all__ = ["connection_limits", "quiet_accept_errors", "raise_open_file_limit"]

log = logging.getLogger(__name__)

#: Descriptors kept free of connections: serial ports, journal, MQTT, lichess, files.
RESERVED_DESCRIPTORS = 64


def raise_open_file_limit() -> int | None:
    """Raise the soft limit on open files to the hard limit; return the soft limit now.

    None where the platform has no such limit (Windows).
    """
    if sys.platform == "win32":  # no such limit: Windows counts handles, not descriptors
        return None
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = max(soft, 1 << 20)
    if soft == resource.RLIM_INFINITY or soft >= hard:
        return None if soft == resource.RLIM_INFINITY else soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as exc:
        log.warning("= could not raise the open-file limit from %d to %d: %s", soft, hard, exc)
        return soft
    log.info("= open-file limit raised from %d to %d", soft, hard)
    return hard


def connection_limits(open_files: int | None, per_client: int) -> ConnectionLimits:
    """Limits for the broadcast server under an open-file limit.

    Args:
        open_files: the process's soft limit (None: no limit known).
        per_client: ``[server] max_connections_per_client`` (0: no limit per client);
            it is also kept to a quarter of the total, so that one client cannot take
            every place.
    """
    total = None if open_files is None else max(16, open_files - RESERVED_DESCRIPTORS)
    if per_client == 0:  # no limit per client (a benchmark's crowd, a venue behind NAT)
        return ConnectionLimits(per_client=None, total=total)
    share = per_client if total is None else min(per_client, max(4, total // 4))
    return ConnectionLimits(per_client=share, total=total)


def quiet_accept_errors(loop: asyncio.AbstractEventLoop, *, every: float = 10.0) -> None:
    """Report failed accepts (descriptors used up) in one line every ``every`` seconds."""
    previous = loop.get_exception_handler()
    if getattr(previous, "quiets_accept_errors", False):
        return
    state = {"count": 0, "at": -1e18}

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if _retry_of_a_closed_server(context):
            log.debug("= a failed accept's retry after the server closed: nothing to do")
            return
        if not str(context.get("message", "")).startswith("socket.accept() out of system"):
            if previous is None:
                loop.default_exception_handler(context)
            else:
                previous(loop, context)
            return
        state["count"] += 1
        now = time.monotonic()
        if now - state["at"] >= every:
            log.warning(
                "= cannot accept connections: %s (%d times since the last line)",
                context.get("exception"),
                state["count"],
            )
            state["count"], state["at"] = 0, now

    handle.quiets_accept_errors = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handle)


def _retry_of_a_closed_server(context: dict[str, Any]) -> bool:
    """Whether ``context`` reports asyncio retrying to accept on a server closed since: after
    a failed accept it tries again a second later (``_start_serving``), and on Python 3.11
    that retry, run after the server closed (the daemon stopping), raises on the closed
    socket's descriptor (-1). Harmless: the server is gone."""
    exception = context.get("exception")
    return (
        isinstance(exception, ValueError)
        and "Invalid file descriptor: -1" in str(exception)
        and "_start_serving" in str(context.get("message", ""))
    )
