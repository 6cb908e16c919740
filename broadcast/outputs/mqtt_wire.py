"""The MQTT vocabulary of an event: topic names, announcements of boards, payloads (pure).

Daemons publish with it (:mod:`broadcast.outputs.mqtt`), relays read and route with it
(:mod:`broadcast.relay`); every topic of docs/mqtt.md and docs/deployment.md is built
here. Topics under a prefix (default ``dgtcast``)::

    <prefix>/board/<n>/pgn | fen | status | state           retained, QoS 1, on game changes
    <prefix>/board/<n>/clocks                                retained, QoS 1, every clock tick
    <prefix>/board/<n>/result                                retained, QoS 1, confirmed result
    <prefix>/board/<n>/eval                                  retained, QoS 1, engine evaluation
    <prefix>/alerts                                          QoS 1, each version of an alert
    <prefix>/results                                         QoS 1, one message per result
    <prefix>/daemon/<id>/status                              retained "online" / "offline"
    <prefix>/daemon/<id>/boards                              retained ownership (relays)
    <prefix>/daemon/<id>/alerts                              retained open alerts (relays)
    <prefix>/daemon/<id>/resolved                            retained last resolutions (relays)
    <prefix>/daemon/<id>/commands                            arbiter commands (relay.remote)
    <prefix>/relay/<id>/replies                              the daemons' answers to a relay
    <prefix>/section/<key>/round/<n> | standings             retained (relays: mqtt_rounds)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, ValidationError

from broadcast.feed.alerts import Alert, alerts_from_json
from broadcast.feed.messages import BoardState, Evaluation, decode_untrusted_json, to_json_dict

__all__ = [
    "OPEN_ALERTS",
    "RESOLVED_ALERTS",
    "Ownership",
    "Topics",
    "alert_list_payload",
    "clocks_payload",
    "encode",
    "evaluation_payload",
    "read_alert_list",
    "result_payload",
    "status_payload",
]

#: ``<prefix>/daemon/<id>/<leaf>`` of a daemon's open alerts, retained (relays show them).
OPEN_ALERTS = "alerts"
#: ``<prefix>/daemon/<id>/<leaf>`` of its last resolved alerts, retained: each as it was
#: resolved (how, by whom, when), so that relays show the daemon's own resolution.
RESOLVED_ALERTS = "resolved"


@dataclass(frozen=True, slots=True)
class Topics:
    """Topic names under ``prefix``."""

    prefix: str
    daemon_id: str

    def board(self, board: int | str, leaf: str) -> str:
        """``<prefix>/board/<n>/<leaf>``; ``board = "+"`` is the filter of every board."""
        return f"{self.prefix}/board/{board}/{leaf}"

    def evaluation(self, board: int | str) -> str:
        """``<prefix>/board/<n>/eval``: the engine's evaluation of the board's public
        position (``[analysis]``), retained; ``board = "+"`` is the filter of every board."""
        return self.board(board, "eval")

    @property
    def alerts(self) -> str:
        """Every alert, not retained."""
        return f"{self.prefix}/alerts"

    @property
    def results(self) -> str:
        """Every confirmed result, not retained."""
        return f"{self.prefix}/results"

    @property
    def daemon_status(self) -> str:
        """``online`` / ``offline``, retained; ``offline`` is also our will."""
        return f"{self.prefix}/daemon/{self.daemon_id}/status"

    def daemon(self, leaf: str, daemon_id: str | None = None) -> str:
        """``<prefix>/daemon/<id>/<leaf>`` (our own id by default)."""
        return f"{self.prefix}/daemon/{daemon_id or self.daemon_id}/{leaf}"

    def relay_replies(self, relay_id: str | None = None) -> str:
        """``<prefix>/relay/<id>/replies``: the daemons' answers to one relay (our id)."""
        return f"{self.prefix}/relay/{relay_id or self.daemon_id}/replies"

    def section(self, section: str | None, leaf: str) -> str:
        """``<prefix>/section/<key>/<leaf>``: a section's past rounds and standings, for
        relays (:mod:`broadcast.outputs.mqtt_rounds`); ``section = None`` is the filter of
        every section. ``<key>`` is the name percent-encoded (``%`` for no section)."""
        key = "+" if section is None else quote(section, safe="") if section else "%"
        return f"{self.prefix}/section/{key}/{leaf}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Ownership:
    """What one daemon owns: ``<prefix>/daemon/<id>/boards``, retained.

    Relays route arbiter commands by it, and a daemon that starts looks for boards or
    sections another live daemon announced (see :mod:`broadcast.relay.ownership`).

    Attributes:
        daemon_id: the announcing daemon.
        boards: its board numbers (every board of its round, e-board or not).
        sections: its named sections ("" is no section and is never claimed).
        at: when it was announced (epoch seconds); the newer claim wins on a relay.
    """

    daemon_id: str
    boards: tuple[int, ...]
    sections: tuple[str, ...] = ()
    at: float = 0.0

    def to_payload(self) -> bytes:
        """The announcement's JSON."""
        return encode(
            {
                "daemon": self.daemon_id,
                "boards": sorted(self.boards),
                "sections": sorted(s for s in self.sections if s),
                "at": self.at,
            }
        )

    @classmethod
    def from_payload(cls, payload: bytes) -> Ownership | None:
        """Read an announcement; None when it is not one (garbage, or a cleared topic).

        Untrusted (any client of the broker may write it): validated by pydantic.
        """
        try:
            data = _OwnershipData.model_validate_json(payload)
        except ValidationError:
            return None
        boards = tuple(b for b in data.boards if b >= 1)
        sections = tuple(s for s in data.sections if s)
        return cls(daemon_id=data.daemon, boards=boards, sections=sections, at=data.at)


class _OwnershipData(BaseModel):
    daemon: str
    boards: list[int]
    sections: list[str]
    at: float


def encode(data: Any) -> bytes:
    """``data`` as compact JSON (UTF-8), as every JSON payload of the event is sent."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def clocks_payload(state: BoardState) -> bytes:
    """``/clocks``: seconds left at ``at`` (epoch seconds), and the side whose time runs."""
    return encode(
        {
            "white": state.white_clock,
            "black": state.black_clock,
            "running": state.running,
            "at": state.clock_at,
        }
    )


def evaluation_payload(evaluation: Evaluation) -> bytes:
    """``/eval``: the :class:`Evaluation` as JSON (no ``cp`` nor ``mate``: none)."""
    return encode(to_json_dict(evaluation))


def status_payload(state: BoardState) -> bytes:
    """``/status``: the board and its game without the moves."""
    return encode(
        {
            "board": state.board,
            "section": state.section,
            "round": state.round,
            "white": state.white,
            "black": state.black,
            "status": state.status.value,
            "result": state.result,
            "result_final": state.result_final,
            "variant": state.variant,
            "plies": len(state.moves),
            "last_move": state.last_move,
            "updated_at": state.updated_at,
        }
    )


def result_payload(state: BoardState) -> bytes:
    """``/results`` and ``/board/<n>/result``: a result, for a pairing program.

    ``final`` is false for a provisional result (published only with ``results =
    "provisional"``); a pairing program takes the ``final`` ones.
    """
    return encode(
        {
            "board": state.board,
            "section": state.section,
            "round": state.round,
            "white": state.white,
            "black": state.black,
            "result": state.result,
            "final": state.result_final,
            "at": state.updated_at,
        }
    )


def alert_list_payload(alerts: list[Alert], *, signed: bool = False) -> bytes:
    """``/daemon/<id>/alerts`` and ``…/resolved``: a JSON list of alerts; ``signed`` (an
    event key is set): ``{"alerts": [...]}``, an object that can carry the signature."""
    listed = [to_json_dict(alert) for alert in alerts]
    return encode({"alerts": listed} if signed else listed)


def read_alert_list(payload: bytes) -> list[Alert]:
    """The alerts of a list of :func:`alert_list_payload`, in either form (untrusted).

    Raises:
        ValueError: not a list of alerts.
    """
    if not payload.lstrip().startswith(b"{"):
        return alerts_from_json(payload)
    data = decode_untrusted_json(payload)
    if not isinstance(data, dict) or not isinstance(data.get("alerts"), list):
        raise ValueError("not a list of alerts")
    return alerts_from_json(json.dumps(data["alerts"]))
