"""The relay's pure core: what the daemons keep on the MQTT broker, fed into a hub.

:class:`RelayView` takes each message of the relay's subscriptions (topic and payload,
docs/mqtt.md), checks it (:mod:`broadcast.feed.inbound`, the event key's signature) and
updates the hub at once: board states and clock readings, who owns which board, the
daemons' online status and alerts, the sections' past rounds and standings, the engine's
evaluations. It routes arbiter commands to the owning daemon
(:class:`~broadcast.relay.routing.Router`). Every MQTT message a relay reads is parsed
here.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from base.colors import Color
from broadcast.feed.alerts import Alert
from broadcast.feed.hub import Hub
from broadcast.feed.inbound import (
    BadMessage,
    board_number,
    board_state_from_broker,
    bounded_time,
    check_size,
    read_json,
)
from broadcast.feed.messages import (
    BoardState,
    BoardStatus,
    ClockReading,
    Evaluation,
    evaluation_from_json,
)
from broadcast.feed.pgn import with_clock_tags
from broadcast.feed.signing import EventKey
from broadcast.outputs.mqtt_rounds import section_filters
from broadcast.outputs.mqtt_wire import (
    OPEN_ALERTS,
    RESOLVED_ALERTS,
    Ownership,
    Topics,
    read_alert_list,
)
from broadcast.relay.rounds import RelayRounds
from broadcast.relay.routing import alerts_to_show
from broadcast.web.log_limit import LogLimit

__all__ = ["RelayView"]

log = logging.getLogger(__name__)


class RelayView:
    """What the broker says about the event, fed into a hub; routes commands.

    Call :meth:`receive_message` with each message of the subscriptions of
    :meth:`subscriptions`; the hub is updated at once. Implements
    :class:`~broadcast.relay.routing.Router`.

    * A board state older (``updated_at``) than the one shown is ignored: a broker that
      came back with an older save must not take moves back.
    * A board whose owning daemon is offline is shown ``offline``.
    * Alerts get relay ids (:func:`~broadcast.relay.routing.relay_alert_id`); those of a daemon
      whose boards were all taken over by another are no longer shown.
    * A resolved alert is shown as the daemon resolved it (its history: how, by whom,
      when), from the daemon's list of last resolutions, whichever of the two lists
      arrives first; one that leaves the open list without a resolution there (the
      daemon lost its boards) is resolved as "no longer open on daemon …".
    * When two daemons claim a board, the online one wins, then the newer claim.
    """

    def __init__(
        self,
        hub: Hub,
        prefix: str,
        clock: Callable[[], float] = time.time,
        key: EventKey | None = None,
        on_evaluation: Callable[[Evaluation], None] | None = None,
    ) -> None:
        self.hub = hub
        #: With a key, the JSON messages (states, clocks, evaluations, announcements of
        #: boards, sections' rounds and standings) are taken only when it signed them.
        self.key = key
        self.prefix = prefix
        self.topics = Topics(prefix, "+")  # the filters: every daemon
        #: The sections' past rounds and standings (``<prefix>/section/…``).
        self.rounds = RelayRounds()
        self.ignored = 0  # unreadable or outdated messages
        self._clock = clock
        self._refused = LogLimit()
        self._received: dict[int, BoardState] = {}
        self._claims: dict[str, Ownership] = {}
        self._online: dict[str, bool] = {}
        self._owners: dict[int, str] = {}
        self._alerts: dict[str, dict[int, Alert]] = {}
        self._resolved: dict[str, dict[int, Alert]] = {}
        self._origins: dict[int, tuple[str, int]] = {}
        #: Takes the daemons' evaluations (the relay's public hub's gate).
        self.on_evaluation = on_evaluation

    def subscriptions(self) -> list[str]:
        """The topic filters a relay subscribes to."""
        topics = self.topics
        return [
            topics.board("+", "state"),
            topics.board("+", "clocks"),
            topics.evaluation("+"),
            *(
                topics.daemon(leaf, "+")
                for leaf in ("boards", "status", OPEN_ALERTS, RESOLVED_ALERTS)
            ),
            *section_filters(topics),
        ]

    def receive_message(self, topic: str, payload: bytes) -> None:
        """Take one message of :meth:`subscriptions`; unknown topics are ignored.

        Every message is bounded and checked before use (:mod:`broadcast.feed.inbound`):
        a bad one changes nothing and is one WARNING line every 10 s at most.
        """
        parts = topic.removeprefix(self.prefix + "/").split("/")
        try:
            if parts[0] == "section":
                check_size(parts[-1] if parts[-1] == "standings" else "round", payload)
                self._check_signed(topic, payload)
                self.rounds.receive_message(parts[1:], payload)
            elif len(parts) == 3:
                kind, name, leaf = parts
                check_size(leaf, payload)
                if leaf in _SIGNED_LEAVES:
                    self._check_signed(topic, payload, cleared=kind == "board")
                self._receive(kind, name, leaf, payload)
        except (ValueError, TypeError, KeyError) as exc:
            self._refuse(topic, str(exc))

    def _receive(self, kind: str, name: str, leaf: str, payload: bytes) -> None:
        if kind == "daemon":
            self._receive_daemon(name, leaf, payload)
        elif kind != "board" or not payload:
            return
        elif leaf == "state":
            self._receive_state(board_state_from_broker(payload, board=board_number(name)))
        elif leaf == "clocks":
            self._receive_clocks(board_number(name), read_json(payload, leaf))
        elif leaf == "eval":
            self._receive_evaluation(board_number(name), evaluation_from_json(payload))

    def _check_signed(self, topic: str, payload: bytes, *, cleared: bool = True) -> None:
        """With a key, a message must be signed with it (``cleared``: an empty one, which
        clears a retained topic and cannot be signed, is taken too).

        Raises:
            NotSigned: not signed with the key.
        """
        if self.key is not None and (payload or not cleared):
            self.key.verify(topic, payload)

    def _refuse(self, topic: str, why: str) -> None:
        """Count a refused message; one WARNING line every 10 s at most."""
        self.ignored += 1
        if (count := self._refused.due()) is not None:
            log.warning(
                "< %s: ignored (%s); %d message(s) ignored since the last line",
                topic[:200],
                why[:300],
                count,
            )

    # -- Router -----------------------------------------------------------------------------

    def owner_of(self, board: int) -> str | None:
        """The daemon that owns ``board``."""
        return self._owners.get(board)

    def boards_of(self, daemon_id: str) -> tuple[int, ...]:
        """The boards that ``daemon_id`` owns."""
        return tuple(sorted(b for b, d in self._owners.items() if d == daemon_id))

    def daemon_ids(self) -> list[str]:
        """Every daemon owning a board."""
        return sorted(set(self._owners.values()))

    def is_online(self, daemon_id: str) -> bool:
        """Whether the daemon's retained status is ``online``."""
        return self._online.get(daemon_id, False)

    def alert_origin(self, alert_id: int) -> tuple[str, int] | None:
        """The daemon and local id of the open alert with relay id ``alert_id``."""
        return self._origins.get(alert_id)

    # -- inside -----------------------------------------------------------------------------

    def _receive_state(self, state: BoardState) -> None:
        now = self._clock()
        state = dataclasses.replace(
            state,
            updated_at=bounded_time(state.updated_at, now),
            clock_at=None if state.clock_at is None else bounded_time(state.clock_at, now),
        )
        known = self._received.get(state.board)
        if known is not None and state.updated_at < known.updated_at:
            self.ignored += 1
            log.info("< board %d: older state ignored", state.board)
            return
        self._received[state.board] = state
        self._show(state.board)

    def _receive_evaluation(self, board: int, evaluation: Evaluation) -> None:
        if evaluation.board != board:
            raise ValueError(f"an evaluation of board {evaluation.board} on board {board}'s topic")
        if self.on_evaluation is not None:
            self.on_evaluation(evaluation)

    def _receive_clocks(self, board: int, data: Any) -> None:
        """A clock reading (``/clocks``, every tick): the board's clocks and clock tags.

        The daemon publishes ``/state`` only when the game changes (docs/mqtt.md); the
        ticks in between come here, so the relay's PGN carries the same clock tags.
        """
        state = self._received.get(board)
        reading = _clock_reading(data)
        if state is None or reading is None:
            return
        white, black, running, at = reading
        at = bounded_time(at, self._clock())
        if state.clock_at is not None and at <= state.clock_at:
            return
        pgn = (
            state.pgn
            if white is None or black is None
            else with_clock_tags(state.pgn, white, black)
        )
        self._received[board] = dataclasses.replace(
            state, white_clock=white, black_clock=black, running=running, clock_at=at, pgn=pgn
        )
        owner = self._owners.get(board)
        if owner is None or self.is_online(owner):  # shown as received: the compact way
            compact = ClockReading(
                board=board, white_clock=white, black_clock=black, running=running, clock_at=at
            )
            if self.hub.publish_clock(compact, at):
                return
        self._show(board)

    def _show(self, board: int) -> None:
        state = self._received.get(board)
        if state is None:
            return
        owner = self._owners.get(board)
        if owner is not None and not self.is_online(owner):
            state = dataclasses.replace(state, status=BoardStatus.OFFLINE)
        self.hub.publish_board(state)

    def _receive_daemon(self, daemon_id: str, leaf: str, payload: bytes) -> None:
        if leaf == "status":
            if payload not in (b"online", b"offline", b""):
                raise BadMessage("a daemon's status is online or offline")
            self._online[daemon_id] = payload == b"online"
            log.info("= daemon %s %s", daemon_id, payload.decode())
            self._reassign()
        elif leaf == "boards":
            claim = Ownership.from_payload(payload) if payload else None
            if claim is None and payload:
                raise BadMessage("not an announcement of boards")
            if claim is None:
                self._claims.pop(daemon_id, None)
            else:
                at = bounded_time(claim.at, self._clock())
                self._claims[daemon_id] = dataclasses.replace(claim, daemon_id=daemon_id, at=at)
            self._reassign()
        elif leaf in (OPEN_ALERTS, RESOLVED_ALERTS):
            alerts = read_alert_list(payload) if payload else []
            lists = self._alerts if leaf == OPEN_ALERTS else self._resolved
            lists[daemon_id] = {a.id: a for a in alerts}
            self._show_alerts()

    def _reassign(self) -> None:
        """Recompute each board's owner; show what changed."""
        owners: dict[int, tuple[bool, float, str]] = {}
        for claim in self._claims.values():
            rank = (self.is_online(claim.daemon_id), claim.at, claim.daemon_id)
            for board in claim.boards:
                if board not in owners or rank > owners[board]:
                    owners[board] = rank
        self._owners = {board: rank[2] for board, rank in owners.items()}
        for board in list(self._received):
            self._show(board)
        self._show_alerts()

    def _show_alerts(self) -> None:
        """Make the hub's open alerts those of the daemons that own boards, and show the
        resolutions those daemons published."""
        owners = set(self._owners.values())
        daemons = [d for d in {*self._alerts, *self._resolved} if d in owners or not self._claims]
        shown, settled = alerts_to_show(self._alerts, self._resolved, daemons)
        for relay_id in set(self._origins) - set(shown):
            daemon_id, _ = self._origins.pop(relay_id)
            gone = self.hub.alert(relay_id)
            if gone is not None and gone.is_open and relay_id not in settled:
                note = f"no longer open on daemon {daemon_id}"
                self.hub.publish_alert(gone.resolve(time.time(), note))
        for relay_id, alert in settled.items():
            relayed = dataclasses.replace(alert, id=relay_id)
            if self.hub.alert(relay_id) != relayed:
                self.hub.publish_alert(relayed)
        for relay_id, (daemon_id, alert) in shown.items():
            self._origins[relay_id] = (daemon_id, alert.id)
            relayed = dataclasses.replace(alert, id=relay_id)
            if self.hub.alert(relay_id) != relayed:
                self.hub.publish_alert(relayed)


#: The topics' last levels whose messages a daemon signs with an event key (a daemon's
#: status is not: docs/deployment.md, "The event key"). An empty one is signed by no one:
#: taken on a board's topics (where it changes nothing), refused on a daemon's.
_SIGNED_LEAVES = frozenset({"state", "clocks", "eval", "boards", OPEN_ALERTS, RESOLVED_ALERTS})


def _clock_reading(data: Any) -> tuple[float | None, float | None, Color | None, float] | None:
    """``(white, black, running, at)`` of a ``/clocks`` payload; None without a reading.

    Raises:
        TypeError, KeyError: not a clock reading.
    """
    if not isinstance(data, dict):
        raise TypeError("not a clock reading (no JSON object)")
    white, black, running, at = data["white"], data["black"], data["running"], data["at"]
    if running not in ("white", "black", None):
        raise TypeError(f"running must be white, black or null, got {running!r}")
    for value in (white, black, at):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"not a number: {str(value)[:40]}")
        if not -1e11 < value < 1e11:  # not infinite, NaN, nor too large for a float
            raise TypeError(f"a number out of range: {str(value)[:40]}")
    if at is None:
        return None
    return (
        None if white is None else float(white),
        None if black is None else float(black),
        running,
        float(at),
    )
