"""Which web pages may use the LiveChess API (pure).

The API changes nothing in the event, but a page that can open it in a visitor's
browser reads the boards and can make the daemon work for it. Browsers name the page
in ``Origin``; clients that are not browsers (tools, the lichess Broadcaster, scripts)
send none and are served. A browser page is served when it comes from:

* ``https://lichess.org`` (its DGT page, the reason the API exists);
* this machine: ``localhost``, ``127.0.0.0/8`` or ``[::1]``, any scheme and port (an
  overlay served locally);
* an origin of ``[livechess] allowed_origins``.

Any other page (``https://evil.example``; ``null``, a local file or a sandboxed frame)
is refused before the websocket
handshake or the HTTP answer, with 403.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = ["LICHESS_ORIGIN", "origin_problem"]

#: lichess.org's DGT page.
LICHESS_ORIGIN = "https://lichess.org"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def origin_problem(origin: str | None, allowed: tuple[str, ...] = ()) -> str | None:
    """Why a request with this ``Origin`` header is refused; None when it is served."""
    if origin is None:
        return None
    wanted = origin.strip().lower().rstrip("/")
    if wanted == LICHESS_ORIGIN or wanted in {o.lower().rstrip("/") for o in allowed}:
        return None
    try:
        parts = urlsplit(wanted)
        host = parts.hostname
    except ValueError:
        host = None
    if host is not None and parts.scheme in ("http", "https") and _is_loopback(host):
        return None
    return f"pages from {origin[:100]!r} may not use the LiveChess API"
