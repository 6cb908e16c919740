"""Log output for a person at a terminal, a log file, or systemd's journal.

Under systemd (``JOURNAL_STREAM`` names the very stream stderr is, see systemd.exec(5))
each line starts with its syslog priority, ``<3>`` for an error, ``<4>`` a warning, ``<6>``
information, ``<7>`` debug, and carries no time stamp: journald adds the time and keeps
the priority, so ``journalctl -u dgtcast -p warning`` shows the warnings and worse.
Elsewhere each line starts with the time and the level name.

Without the live console (``--plain``, a pipe, systemd) the log is the arbiter's view:
:func:`log_alerts` writes every step of every alert's life as one line (raised and
updated at WARNING, acknowledged and resolved at INFO; :func:`alert_lines`), so
``journalctl -u dgtcast`` follows the alerts as the arbiter page does.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

from broadcast.feed.alerts import Alert, AlertStep
from broadcast.feed.hub import Hub

__all__ = [
    "JournaldFormatter",
    "alert_lines",
    "configure_logging",
    "log_alerts",
    "under_journald",
    "wanted",
]

log = logging.getLogger("daemon.alerts")

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


def wanted(stream: object = None, environ: dict[str, str] | None = None) -> bool:
    """Whether the live console should run (daemon/console/view.py): a terminal, not
    systemd, not a dumb one. Asked here, where rich is not imported: most runs log lines."""
    stream = sys.stdout if stream is None else stream
    env = dict(os.environ) if environ is None else environ
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return False
    return env.get("TERM", "") != "dumb" and not under_journald(env)


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


def alert_lines(alert: Alert, logged: int = 0) -> list[tuple[int, str]]:
    """The log lines of ``alert``'s history steps after the first ``logged`` (pure).

    Each is ``(level, text)``: ``! alert 7 raised: board 3 flag_fall: Board 3: White's
    flag fell ...``, ``= alert 7 resolved by arbiter: board 3 flag_fall: an arbiter
    confirmed the result 0-1``. A raised or updated alert says what to do (its action),
    an acknowledged or resolved one why (its note).
    """
    where = f"board {alert.board}" if alert.board else "the event"
    lines = []
    for step in alert.history[logged:]:
        lines.append((_level(step), _line(alert, step, where)))
    return lines


def _level(step: AlertStep) -> int:
    return logging.WARNING if step.step in ("raised", "updated") else logging.INFO


def _line(alert: Alert, step: AlertStep, where: str) -> str:
    mark = "!" if step.step in ("raised", "updated") else "="
    by = f" by {step.by}" if step.step != "raised" else ""
    head = f"{mark} alert {alert.id} {step.step}{by}: {where} {alert.kind.value}"
    if step.step == "raised":
        return f"{head}: {alert.action}" if alert.action else head
    if step.step == "updated":
        said = "; ".join(part for part in (step.note, alert.action) if part)
        return f"{head}: {said}" if said else head
    return f"{head}: {step.note}" if step.note else head


async def log_alerts(hub: Hub) -> None:
    """Log every step of every alert of ``hub``, once each, until cancelled.

    The alerts open when it starts are logged whole (a restart: what still waits).
    """
    logged: dict[int, int] = {}

    def write(alert: Alert) -> None:
        for level, text in alert_lines(alert, logged.get(alert.id, 0)):
            log.log(level, "%s", text)
        logged[alert.id] = len(alert.history)

    async with hub.subscribe(alerts=True, boards=False) as subscription:
        for alert in hub.open_alerts():
            write(alert)
        async for update in subscription:
            for alert in update.alerts:
                write(alert)
