"""Log output for a person at a terminal, a log file, or systemd's journal.

Under systemd (``JOURNAL_STREAM`` names the very stream stderr is, see systemd.exec(5))
each line starts with its syslog priority, ``<3>`` for an error, ``<4>`` a warning, ``<6>``
information, ``<7>`` debug, and carries no time stamp: journald adds the time and keeps
the priority, so ``journalctl -u dgtcast -p warning`` shows the warnings and worse.
Elsewhere each line starts with the time and the level name.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

__all__ = ["JournaldFormatter", "configure_logging", "under_journald"]

PLAIN_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"

_PRIORITIES = {
    logging.CRITICAL: 2,
    logging.ERROR: 3,
    logging.WARNING: 4,
    logging.INFO: 6,
    logging.DEBUG: 7,
}


class JournaldFormatter(logging.Formatter):
    """``<priority>logger: message``; a traceback's lines follow, indented, same priority."""

    def format(self, record: logging.LogRecord) -> str:
        priority = next(
            (value for level, value in _PRIORITIES.items() if record.levelno >= level), 7
        )
        text = f"{record.name}: {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return "\n".join(f"<{priority}>{line}" for line in text.splitlines())


def under_journald(environ: Mapping[str, str] | None = None, fd: int = 2) -> bool:
    """Whether ``fd`` (stderr) is connected to systemd's journal (systemd.exec(5))."""
    stream = (os.environ if environ is None else environ).get("JOURNAL_STREAM", "")
    device, _, inode = stream.partition(":")
    if not (device.isdigit() and inode.isdigit()):
        return False
    try:
        status = os.fstat(fd)
    except OSError:
        return False
    return (status.st_dev, status.st_ino) == (int(device), int(inode))


def configure_logging(level: str) -> None:
    """Send log records at ``level`` and above to stderr, formatted for where it goes.

    Raises:
        ValueError: ``level`` is not a logging level name.
    """
    handler = logging.StreamHandler(sys.stderr)
    if under_journald():
        handler.setFormatter(JournaldFormatter())
    else:
        handler.setFormatter(logging.Formatter(PLAIN_FORMAT))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
