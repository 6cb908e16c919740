"""Routing arbiter commands from a relay to the daemons that own the boards (pure).

A relay learns who owns which board from the daemons' retained announcements (a
:class:`Router`); :func:`plan_command` says where a command goes, or answers it at once.
Alert ids are per daemon; a relay shows alert ``local_id`` of board ``board`` as
:func:`relay_alert_id` (``local_id * 10000 + board``), unique across daemons because
each board has one owner. Alerts about the event (board 0: the journal, a lichess round)
are every daemon's: their relay ids carry a 24-bit digest of the daemon's id, the same on
every relay. :func:`alerts_to_show` says which alerts a relay shows open and which as
their daemon resolved them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from broadcast.feed.alerts import Alert
from broadcast.feed.commands import AckAlert, ArbiterCommand, CommandReply, NextRound, SetClocks

__all__ = [
    "BOARD_SPAN",
    "CommandPlan",
    "Delivery",
    "Router",
    "alerts_to_show",
    "merge_clock_replies",
    "plan_command",
    "relay_alert_id",
    "with_relay_ids",
]

#: Relay alert ids are ``local_id * BOARD_SPAN + board`` for boards below this.
BOARD_SPAN = 10_000
_WIDE = 1 << 50  # boards from BOARD_SPAN on: a pairing above every id of the first form


_EVENT = 1 << 51  # event alerts (board 0): above both forms, below 2**53 (JavaScript)
_LOCAL_BITS = 21  # local ids below 2,097,152 (the engine's, and output alerts' from 1e6)


def relay_alert_id(board: int, local_id: int, daemon_id: str = "") -> int:
    """The id a relay gives alert ``local_id`` of daemon ``daemon_id``, raised for ``board``."""
    if board == 0:
        digest = int.from_bytes(hashlib.sha256(daemon_id.encode()).digest()[:3], "big")
        return _EVENT + (digest << _LOCAL_BITS) + local_id % (1 << _LOCAL_BITS)
    if board < BOARD_SPAN:
        return local_id * BOARD_SPAN + board
    total = board + local_id
    return _WIDE + total * (total + 1) // 2 + local_id


class Router(Protocol):
    """Who owns what, as a relay learnt it from the broker."""

    def owner_of(self, board: int) -> str | None:
        """The daemon that announced ``board``."""
        ...

    def boards_of(self, daemon_id: str) -> tuple[int, ...]:
        """The boards routed to ``daemon_id``."""
        ...

    def daemon_ids(self) -> list[str]:
        """Every daemon that owns at least one board."""
        ...

    def is_online(self, daemon_id: str) -> bool:
        """Whether the daemon's retained status says ``online``."""
        ...

    def alert_origin(self, alert_id: int) -> tuple[str, int] | None:
        """The daemon and its own id of open alert ``alert_id`` (a relay id)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """One command for one daemon, as that daemon knows it (its own alert ids)."""

    daemon_id: str
    command: ArbiterCommand
    online: bool
    subject: str  # "board 7", "alert 70007": names the target in messages


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandPlan:
    """What to do with a command: answer at once, or deliver it (and merge the answers)."""

    reply: CommandReply | None = None
    deliveries: tuple[Delivery, ...] = ()
    offline_boards: dict[str, str] = field(default_factory=dict)  # set_clocks: board → why


def _error(reason: str, **details: Any) -> CommandPlan:
    return CommandPlan(reply=CommandReply(ok=False, reason=reason, details=details))


def plan_command(command: ArbiterCommand, router: Router) -> CommandPlan:
    """Where ``command`` goes; an answer at once when it cannot go anywhere."""
    if isinstance(command, SetClocks):
        return _plan_set_clocks(router, command)
    if isinstance(command, NextRound):
        return _error(
            "next_round goes to the daemon that runs the section: use its arbiter page or"
            " `dgtcast round next` there"
        )
    target: ArbiterCommand
    if isinstance(command, AckAlert):
        origin = router.alert_origin(command.id)
        if origin is None:
            return _error(f"alert {command.id} is not open (resolved already, or unknown)")
        daemon_id, local_id = origin
        target, subject = AckAlert(id=local_id), f"alert {command.id}"
    else:
        owner = router.owner_of(command.board)
        if owner is None:
            return _error(f"board {command.board} is not announced by any daemon")
        daemon_id, target, subject = owner, command, f"board {command.board}"
    online = router.is_online(daemon_id)
    if not online and not target.DEFERRABLE:
        return _error(
            f"{subject}'s daemon {daemon_id!r} is offline; {target.TYPE} is not"
            " queued (the position may change meanwhile): try again when it is back",
            daemon=daemon_id,
        )
    delivery = Delivery(daemon_id=daemon_id, command=target, online=online, subject=subject)
    return CommandPlan(deliveries=(delivery,))


def _plan_set_clocks(router: Router, command: SetClocks) -> CommandPlan:
    """To every daemon (only the one with ``command.board``, when it names one)."""
    daemons = router.daemon_ids()
    if command.board is not None:
        daemons = [d for d in daemons if command.board in router.boards_of(d)]
    if not daemons:
        return _error("no daemon has announced any board")
    deliveries, offline = [], {}
    for daemon_id in daemons:
        if router.is_online(daemon_id):
            subject = f"daemon {daemon_id!r}"
            deliveries.append(
                Delivery(daemon_id=daemon_id, command=command, online=True, subject=subject)
            )
        else:
            for board in router.boards_of(daemon_id):
                offline[str(board)] = f"its daemon {daemon_id!r} is offline"
    return CommandPlan(deliveries=tuple(deliveries), offline_boards=offline)


def merge_clock_replies(replies: Iterable[CommandReply], offline: dict[str, str]) -> CommandReply:
    done: set[int] = set()
    failed = dict(offline)
    for reply in replies:
        done.update(int(b) for b in reply.details.get("set", []))
        failed.update({str(b): str(why) for b, why in reply.details.get("failed", {}).items()})
        if not reply.ok and not reply.details.get("failed"):
            failed["?"] = reply.reason
    details: dict[str, Any] = {"set": sorted(done)}
    if not failed:
        return CommandReply(ok=True, details=details)
    details["failed"] = failed
    reasons = "; ".join(f"board {b}: {why}" for b, why in sorted(failed.items()))
    return CommandReply(ok=False, reason=reasons, details=details)


def with_relay_ids(reply: CommandReply, daemon_id: str) -> CommandReply:
    """Daemon ``daemon_id``'s answer with its alert ids turned into relay ids."""
    alerts = reply.details.get("alerts")
    if not isinstance(alerts, list):
        return reply
    shown = []
    for alert in alerts:
        if isinstance(alert, dict) and isinstance(alert.get("id"), int):
            relay_id = relay_alert_id(int(alert["board"]), alert["id"], daemon_id)
            alert = {**alert, "id": relay_id}
        shown.append(alert)
    return CommandReply(
        ok=reply.ok, reason=reply.reason, details={**reply.details, "alerts": shown}
    )


def alerts_to_show(
    open_alerts: Mapping[str, Mapping[int, Alert]],
    resolved: Mapping[str, Mapping[int, Alert]],
    daemons: Iterable[str],
) -> tuple[dict[int, tuple[str, Alert]], dict[int, Alert]]:
    """By relay id: the open alerts to show (with their daemon), and the resolved ones,
    of ``daemons``, from each daemon's open list and its list of last resolutions.

    A resolution wins over the open version of the same alert (the open list is then the
    older message); one of another alert with the same id (a daemon on a new journal
    numbers from 1 again) never closes it.
    """
    shown: dict[int, tuple[str, Alert]] = {}
    settled: dict[int, Alert] = {}
    for daemon_id in daemons:
        done = resolved.get(daemon_id, {})
        for alert in done.values():
            settled[relay_alert_id(alert.board, alert.id, daemon_id)] = alert
        for alert in open_alerts.get(daemon_id, {}).values():
            resolution = done.get(alert.id)
            if resolution is None or not _same_alert(resolution, alert):
                relay_id = relay_alert_id(alert.board, alert.id, daemon_id)
                shown[relay_id] = (daemon_id, alert)
                settled.pop(relay_id, None)
    return shown, settled


def _same_alert(one: Alert, other: Alert) -> bool:
    """Two versions of one alert: same board, kind and time raised."""
    return (one.board, one.kind, one.at) == (other.board, other.kind, other.at)
