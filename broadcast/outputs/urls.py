"""The addresses the outputs send to, checked once at configuration time.

Kept apart from :mod:`broadcast.outputs.outgoing` so that checking a configuration
(``dgtcast round next`` reads it too) loads no HTTP client.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["check_url"]


def check_url(url: str) -> str:
    """``url`` itself if it is an ``http://`` or ``https://`` URL with a host.

    Raises:
        ValueError: any other URL.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    return url
