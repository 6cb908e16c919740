"""The arbiter token of a daemon on loopback that has none configured (docs/configuration.md).

On a loopback host ``[server] arbiter_token`` may be left out: only this machine can
connect, and the person at it is trusted. The arbiter channel still needs a token (a
page of another site opened in the arbiter's browser, or a reverse proxy on the same
machine, must not reach it), so the daemon makes one at its first start and keeps it in
a file only its user may read, beside the journal (``congress.db.arbiter-token``). The
command line (``dgtcast round next``, ``dgtcast result``) reads it from there, and the
daemon prints the arbiter page's address with it (``/arbiter#token=…``): the person at
the laptop never types it. The file outlives restarts, so a signed-in page stays
signed in.

:func:`arbiter_token` is the one answer to "which token reaches this daemon".
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from daemon.config.model import Config, is_loopback

__all__ = ["ArbiterToken", "arbiter_token", "daemon_token", "local_token_path"]

#: Added to the journal's file name: the file that holds a loopback daemon's own token.
SUFFIX = ".arbiter-token"


@dataclass(frozen=True, slots=True, kw_only=True)
class ArbiterToken:
    """The token that reaches a daemon, and where it comes from.

    Attributes:
        value: the token; None when there is none (yet).
        local: it is the daemon's own (loopback, none configured), kept at ``path``.
        path: the file of the daemon's own token.
        saved: the value is in the file (a new one is saved once the daemon serves).
    """

    value: str | None
    local: bool
    path: Path
    saved: bool = True

    def save(self) -> None:
        """Write a new local token to its file, readable by this user only (atomically).

        Raises:
            OSError: the file cannot be written beside the journal.
        """
        if self.saved or self.value is None:
            return
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            handle.write(self.value + "\n")
        os.replace(temporary, self.path)


def local_token_path(config: Config) -> Path:
    """Where a loopback daemon without a configured token keeps its own."""
    journal = config.storage.path
    return journal.with_name(journal.name + SUFFIX)


def arbiter_token(config: Config) -> ArbiterToken:
    """The configured token (``[server]`` or the environment), else the daemon's own.

    The daemon's own is read from its file; it is None before the daemon first started
    (or on a host that is not loopback, where a token is always configured).
    """
    path = local_token_path(config)
    configured = config.server.arbiter_token
    if configured is not None or not is_loopback(config.server.host):
        return ArbiterToken(value=configured, local=False, path=path)
    return ArbiterToken(value=_read(path), local=True, path=path)


def daemon_token(config: Config) -> ArbiterToken:
    """:func:`arbiter_token`, or a new token of the daemon's own when it has none yet
    (not saved: :meth:`ArbiterToken.save` once the daemon serves, so that a refused
    start leaves nothing behind)."""
    token = arbiter_token(config)
    if not token.local or token.value is not None:
        return token
    return ArbiterToken(value=secrets.token_urlsafe(24), local=True, path=token.path, saved=False)


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None
