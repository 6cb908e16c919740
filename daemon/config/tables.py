"""The configuration file's tables as pydantic models: every key, its type and its limits.

Every key is documented in ``docs/configuration.md``. The values here are checked one by
one; what spans keys (duplicate ports, secrets from the environment, relative paths) is
checked when :mod:`daemon.config.model` builds the :class:`~daemon.config.model.Config`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainValidator

from base.pgn_tags import tag_value_problem
from broadcast.feed.messages import MAX_BOARD
from daemon.config.errors import shown
from daemon.config.prizes import PrizesTable
from daemon.game.durations import TimeControl, parse_duration

__all__ = [
    "AnalysisConfig",
    "BoardConfig",
    "EventKeys",
    "EventTable",
    "FileTables",
    "LichessConfig",
    "LichessTables",
    "LiveChessConfig",
    "MqttConfig",
    "PairingConfig",
    "PgnFolderConfig",
    "RelayFileTables",
    "RelayTable",
    "SectionTable",
    "ServerConfig",
    "StorageConfig",
    "WebhookConfig",
]

# -- values ---------------------------------------------------------------------------------


#: Longest duration a key may give (default times, time-outs): a day.
_LONGEST_DURATION = 24 * 3600


def _duration(value: object) -> int:
    if not isinstance(value, str):
        raise ValueError(f'must be a duration in quotes like "30m", got {shown(value)}')
    seconds = parse_duration(value)
    if seconds > _LONGEST_DURATION:
        raise ValueError(f"must be at most 24h, got {shown(value)}")
    return seconds


def _public_delay(value: object) -> int:
    if not isinstance(value, str):
        raise ValueError(f'must be a duration in quotes like "30m", got {shown(value)}')
    seconds = parse_duration(value)
    if seconds > 3600:
        raise ValueError(f"must be at most 1h (lichess allows 0-3600 s), got {shown(value)}")
    return seconds


def _time_control(value: object) -> TimeControl:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError(f'must be a time control in quotes like "5400+30", got {shown(value)}')
    return TimeControl.from_text(value)


def _date(value: object) -> dt.date:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError(f"must be a date like 2026-06-24, got {shown(value)}")


def _datetime(value: object) -> dt.datetime:
    """A date and time; without an offset it is the venue's (this machine's) local time."""
    moment = value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            moment = dt.datetime.fromisoformat(value)
    if not isinstance(moment, dt.datetime):
        raise ValueError(
            f"must be a date and time like 2026-06-24T10:00:00+10:00, got {shown(value)}"
        )
    return moment if moment.tzinfo is not None else moment.astimezone()


def _dgt_mode(value: object) -> int:
    if value != 23 or isinstance(value, bool):
        raise ValueError(
            f"only 23 (computer-controlled clocks, docs/protocol.md §8) is supported,"
            f" got {shown(value)}"
        )
    return 23


def _path(value: object) -> Path:
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be a file path in quotes, got {shown(value)}")
    return Path(value)


def _serial_number(value: object) -> str:
    if not isinstance(value, str) or len(value) != 5 or not value.isdigit():
        raise ValueError(
            f'must be the board\'s serial number, 5 digits in quotes like "12345",'
            f" got {shown(value)}"
        )
    return value


def _url(value: object) -> str:
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"must be an http:// or https:// address, got {shown(value)}")
    return str(value)


def _origin(value: object) -> str:
    parts = urlsplit(value) if isinstance(value, str) else None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.netloc
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        raise ValueError(
            f'must be a web origin like "https://arbiter.example.org", got {shown(value)}'
        )
    return f"{parts.scheme}://{parts.netloc}".lower()


def _topic_prefix(value: object) -> str:
    if not isinstance(value, str) or not value.strip("/") or set(value) & {"+", "#"}:
        raise ValueError(f"must be an MQTT topic without + or #, got {shown(value)}")
    return value.strip("/")


def _mqtt_name(value: object) -> str:
    """A daemon or relay id: one MQTT topic level (it names topics and client ids)."""
    if not isinstance(value, str) or not value or re.search(r"[#+/\s]", value):
        raise ValueError(f"must be a name without /, +, # or spaces, got {shown(value)}")
    return value


def _tiebreak_code(value: object) -> str:
    """A tie-break's FIDE code as a TRF writes it (``BH-C1``, ``BH/C1``, ``SB``); which codes
    dgtcast computes is checked when the section's TRF is read (daemon/pairing/tiebreaks.py)."""
    if not isinstance(value, str) or not re.fullmatch(
        r"[A-Za-z]{2,4}(?:[-/#][A-Za-z][0-9])?", value
    ):
        raise ValueError(f'must be a tie-break code like "BH-C1", got {shown(value)}')
    return value


def _name(value: object) -> str:
    """A name that becomes a PGN tag value: one line, no control characters, not too long."""
    if not isinstance(value, str):
        raise ValueError(f"must be a string in quotes, got {shown(value)}")
    problem = tag_value_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _nonempty_name(value: object) -> str:
    if value == "":
        raise ValueError("must not be empty")
    return _name(value)


_Text = Annotated[str, Field(min_length=1)]
#: A player, event, site or section name (it is written into PGN tags).
_Name = Annotated[str, PlainValidator(_name)]
_NonEmptyName = Annotated[str, PlainValidator(_nonempty_name)]
_Port = Annotated[int, Field(ge=1, le=65535)]
_Elo = Annotated[int, Field(ge=0, le=4000)]
_FideId = Annotated[int, Field(ge=1, le=99_999_999_999)]  # TRF: 11 digits
_Duration = Annotated[int, PlainValidator(_duration)]
_PathValue = Annotated[Path, PlainValidator(_path)]
_Url = Annotated[str, PlainValidator(_url)]
_Serial = Annotated[str, PlainValidator(_serial_number)]
_Title = Literal["GM", "IM", "FM", "CM", "WGM", "WIM", "WFM", "WCM"]


# -- tables ---------------------------------------------------------------------------------


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class BoardConfig(_Table):
    """One ``[[boards]]`` table: a board, its e-board port if any, and its players.

    A board without ``port`` or ``serial`` has no e-board: arbiters enter its result by
    hand. ``serial`` (the number the board reports, docs/protocol.md §4) picks the board
    among the ports ``port`` names (a path or glob; default every serial port), so
    cables plugged back in another order never swap games.
    ``clock_white_side`` overrides the side of the clock that is learned from the
    first moves (docs/protocol.md §7.2, "Which clock side is White").
    """

    number: int = Field(ge=1, le=MAX_BOARD)  # TRF: 4 digits
    port: _Text | None = None
    serial: _Serial | None = None
    white: _Name = ""
    black: _Name = ""
    white_elo: _Elo | None = None
    black_elo: _Elo | None = None
    white_fide_id: _FideId | None = None
    black_fide_id: _FideId | None = None
    white_title: _Title | None = None
    black_title: _Title | None = None
    clock_white_side: Literal["left", "right"] | None = None

    @property
    def has_eboard(self) -> bool:
        """True when an e-board is cabled (a ``port`` or a ``serial`` is given)."""
        return self.port is not None or self.serial is not None


class EventKeys(_Table):
    """The keys of ``[event]`` that a section may set too."""

    site: _Name | None = None
    date: Annotated[dt.date, PlainValidator(_date)] | None = None
    round: Annotated[int, Field(ge=1, le=999)] | None = None  # TRF: 3 digits
    round_start: Annotated[dt.datetime, PlainValidator(_datetime)] | None = None
    time_control: Annotated[TimeControl, PlainValidator(_time_control)] | None = None
    black_time_control: Annotated[TimeControl, PlainValidator(_time_control)] | None = None
    draw_odds: Literal["white", "black"] | None = None
    variant: Literal["standard", "chess960"] | None = None
    dgt_mode: Annotated[int, PlainValidator(_dgt_mode)] | None = None
    default_time: _Duration | None = None
    default_time_warning: _Duration | None = None


class EventTable(EventKeys):
    """``[event]`` as written."""

    name: _NonEmptyName | None = None


class PairingConfig(_Table):
    """``[pairing]`` (or ``[sections.pairing]``): the TRF file and the pairing program's output.

    ``pairings`` may name the round with ``{round}`` (``"round{round}.txt"``): ``dgtcast
    round next`` then reads the next round's file; without it the same file is read again
    (the pairing program overwrote it), and without ``pairings`` the next round's games
    come from the TRF. ``first_board`` numbers the games (default: the section's lowest
    ``[[boards]]`` number, else 1). ``tiebreaks``: the standings' tie-breaks when the TRF
    names none (records 202/212 win).
    """

    trf: _PathValue
    pairings: _PathValue | None = None
    command: list[_Text] | None = None  # run on the saved TRF after each confirmed result
    first_board: Annotated[int, Field(ge=1)] | None = None
    tiebreaks: list[Annotated[str, PlainValidator(_tiebreak_code)]] | None = None

    def pairings_for(self, round_number: int) -> Path | None:
        """The pairings file of ``round_number`` (``{round}`` filled in)."""
        if self.pairings is None:
            return None
        return Path(str(self.pairings).replace("{round}", str(round_number)))


class SectionTable(EventKeys):
    """One ``[[sections]]`` table as written."""

    name: _NonEmptyName
    boards: list[BoardConfig] = Field(default_factory=list)
    pairing: PairingConfig | None = None
    prizes: PrizesTable | None = None


class ServerConfig(_Table):
    """``[server]``: where the broadcast and arbiter channel listen.

    ``arbiter_token`` is None only on a loopback host (see docs/configuration.md).
    ``allowed_origins``: web origins besides the server's own whose pages may use the
    arbiter channel (docs/faults.md). ``max_connections_per_client``: connections one
    address may hold (0: no limit; raise it when spectators share one public address).
    """

    host: _Text = "127.0.0.1"
    port: _Port = 8080
    arbiter_token: _Text | None = None
    public_delay: Annotated[int, PlainValidator(_public_delay)] = 0
    allowed_origins: list[Annotated[str, PlainValidator(_origin)]] = Field(default_factory=list)
    max_connections_per_client: int = Field(default=256, ge=0)
    results: Literal["confirmed", "provisional"] = "confirmed"


class StorageConfig(_Table):
    """``[storage]``: the journal; ``synchronous = "full"`` also survives power loss."""

    path: _PathValue = Path("dgtcast.db")
    synchronous: Literal["normal", "full"] = "normal"


class MqttConfig(_Table):
    """``[mqtt]``: publish games, alerts and results to a broker.

    ``daemon_id`` names the daemon on the broker (default: the host name): daemons that
    share a broker need different ids (docs/deployment.md). ``tls`` connects with TLS,
    trusting the system's certificate authorities or ``ca_file``.
    """

    enabled: bool = True
    host: _Text = "localhost"
    port: _Port = 1883
    prefix: Annotated[str, PlainValidator(_topic_prefix)] = "dgtcast"
    username: _Text | None = None
    password: _Text | None = None
    daemon_id: Annotated[str, PlainValidator(_mqtt_name)] | None = None
    tls: bool = False
    ca_file: _PathValue | None = None
    event_key: _Text | None = None  # or DGTCAST_EVENT_KEY: signs commands and announcements


_ROUND_ID = re.compile(r"^[A-Za-z0-9]{8}$")
_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def _board_range(value: object) -> tuple[int, int]:
    match = _RANGE.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f'must be a board range in quotes like "1-100", got {shown(value)}')
    first = int(match.group(1))
    last = int(match.group(2) or first)
    if not 1 <= first <= last:
        raise ValueError(f"must run from a first board >= 1 to a last one, got {shown(value)}")
    return first, last


def _rounds(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ValueError(f'must be a table like {{ 1 = "Ab12Cd34" }}, got {shown(value)}')
    rounds: dict[str, str] = {}
    for key, round_id in value.items():
        if not str(key).isdigit() or int(key) < 1:
            raise ValueError(f"keys must be round numbers, got {shown(key)}")
        if not isinstance(round_id, str) or not _ROUND_ID.match(round_id):
            raise ValueError(
                f"round {key}: must be a lichess round id (the 8 letters and digits at the"
                f" end of the round's URL), got {shown(round_id)}"
            )
        rounds[str(int(key))] = round_id
    return rounds


def _broadcast_id(value: object) -> str:
    if not isinstance(value, str) or not _ROUND_ID.match(value):
        raise ValueError(
            "must be a lichess broadcast id (the 8 letters and digits before the round's"
            f" in its URL), got {shown(value)}"
        )
    return value


class LichessConfig(_Table):
    """One ``[lichess]`` or ``[[lichess]]`` table (docs/integrations.md).

    ``enabled`` defaults to true when ``rounds`` is given, false otherwise (the old
    single-table form).
    """

    enabled: bool | None = None
    push_url: _Url | None = None
    token: Annotated[str, Field(min_length=1)] | None = None
    rounds: Annotated[dict[str, str], PlainValidator(_rounds)] | None = None
    section: Annotated[str, Field(min_length=1)] | None = None
    boards: Annotated[tuple[int, int], PlainValidator(_board_range)] | None = None
    server: _Url = "https://lichess.org"
    #: The lichess broadcast the rounds belong to (``dgtcast lichess setup`` writes it).
    broadcast: Annotated[str, PlainValidator(_broadcast_id)] | None = None

    @property
    def is_enabled(self) -> bool:
        """Whether this table pushes."""
        return self.enabled if self.enabled is not None else self.rounds is not None


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, dict) else value


#: The ``lichess`` key: one table or an array of tables, always a list once read.
LichessTables = Annotated[list[LichessConfig], BeforeValidator(_one_or_many)]


class PgnFolderConfig(_Table):
    """``[pgn_folder]``: ``game-N.pgn`` per board and ``games.pgn`` for all."""

    path: _PathValue


class LiveChessConfig(_Table):
    """``[livechess]``: the DGT LiveChess 2 local API and PGN folder (docs/integrations.md).

    ``enabled`` serves the API on ``host``:``port`` (LiveChess's port 1982 by default);
    ``folder`` keeps a LiveChess 2 PGN folder there (with or without the API).
    ``allowed_origins``: web origins whose pages may use the API besides lichess.org
    and this machine's (broadcast/livechess/origins.py).
    """

    enabled: bool = False
    host: _Text = "127.0.0.1"
    port: _Port = 1982
    folder: _PathValue | None = None
    allowed_origins: list[Annotated[str, PlainValidator(_origin)]] = Field(default_factory=list)


class WebhookConfig(_Table):
    """``[webhook]``: alerts and results are POSTed as JSON to this address."""

    url: _Url


class AnalysisConfig(_Table):
    """``[analysis]``: the engine's evaluation of public positions (docs/configuration.md).

    Off unless ``enabled``. ``engine``: a path or a command on PATH (default
    ``stockfish`` on PATH, then /usr/games/stockfish). ``boards`` / ``sections``: the
    boards analysed (neither: every board). The bound per position is ``time`` seconds
    and/or ``depth`` plies, whichever is reached first (default 0.5 s); ``threads`` and
    ``hash`` (MB) are the engine's ``Threads`` and ``Hash``.
    """

    enabled: bool = False
    engine: _Text | None = None
    boards: list[Annotated[int, Field(ge=1, le=MAX_BOARD)]] | None = None
    sections: list[_NonEmptyName] | None = None
    time: Annotated[float, Field(gt=0, le=60)] | None = None
    depth: Annotated[int, Field(ge=1, le=99)] | None = None
    threads: Annotated[int, Field(ge=1, le=64)] = 1
    hash: Annotated[int, Field(ge=1, le=4096)] = 16


class FileTables(_Table):
    """The file as written, before the two forms are normalised."""

    event: EventTable | None = None
    server: ServerConfig = Field(default_factory=ServerConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    boards: list[BoardConfig] | None = None
    sections: list[SectionTable] | None = None
    mqtt: MqttConfig | None = None
    lichess: LichessTables | None = None
    pgn_folder: PgnFolderConfig | None = None
    webhook: WebhookConfig | None = None
    pairing: PairingConfig | None = None
    livechess: LiveChessConfig | None = None
    analysis: AnalysisConfig | None = None
    prizes: PrizesTable | None = None


class RelayTable(_Table):
    """``[relay]``: the relay's name on the broker and its patience with daemons.

    ``id`` names the relay's MQTT client (default: the host name and process id);
    ``command_timeout`` is how long an arbiter command waits for the owning daemon's
    answer before the arbiter is told it did not come.
    """

    id: Annotated[str, PlainValidator(_mqtt_name)] | None = None
    command_timeout: _Duration = 8


class RelayFileTables(_Table):
    """A relay's file as written: the daemon's tables without the event, and ``[relay]``."""

    server: ServerConfig = Field(default_factory=ServerConfig)
    mqtt: MqttConfig | None = None
    lichess: LichessTables | None = None
    pgn_folder: PgnFolderConfig | None = None
    relay: RelayTable = Field(default_factory=RelayTable)
