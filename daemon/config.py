"""The daemon's configuration: one TOML file, validated, normalised into :class:`Config`.

Every key is documented in ``docs/configuration.md``; the keys are the public interface
(issue 4): they may be extended, never renamed. Two forms are accepted and normalised
into the same model, a list of :class:`Section`, each with its event and its boards:

* one ``[event]`` with top-level ``[[boards]]``;
* ``[[sections]]`` (several time controls in one venue), each with ``name`` and its own
  ``[[sections.boards]]``; each section may set any ``[event]`` key, and ``[event]``
  then holds what the sections share (at least the event's ``name``).

A bad file raises :class:`ConfigError` carrying one line per problem, naming the key
path and why (``config.toml: boards[2].port: duplicate port "/dev/ttyACM0" (also board
1)``); array positions count from 1 in file order. The command line prints
:func:`format_config_errors` and exits with :data:`EXIT_BAD_CONFIG`.

Exceptions::

    ConfigError    the file is missing, unreadable, not TOML or not valid
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import ipaddress
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError
from pydantic_core import ErrorDetails

from daemon.durations import TimeControl, parse_duration

__all__ = [
    "ARBITER_TOKEN_ENV",
    "EXIT_BAD_CONFIG",
    "LICHESS_TOKEN_ENV",
    "MQTT_PASSWORD_ENV",
    "BoardConfig",
    "Config",
    "ConfigError",
    "EventConfig",
    "LichessConfig",
    "MqttConfig",
    "PairingConfig",
    "PgnFolderConfig",
    "RelayConfig",
    "RelayTable",
    "Section",
    "ServerConfig",
    "StorageConfig",
    "WebhookConfig",
    "format_config_errors",
    "load_config",
    "load_relay_config",
    "parse_config",
]

#: Exit code of every command that is given a bad configuration file.
EXIT_BAD_CONFIG = 2
#: Environment variables that override secrets in the file (so the file can be shared).
ARBITER_TOKEN_ENV = "DGTCAST_ARBITER_TOKEN"
LICHESS_TOKEN_ENV = "DGTCAST_LICHESS_TOKEN"
MQTT_PASSWORD_ENV = "DGTCAST_MQTT_PASSWORD"

_PLACEHOLDER_TOKEN = "change-me"
_MIN_PUBLIC_TOKEN = 12
_DEFAULT_WARNING = 300  # seconds before the default time that the late-arrival warning comes
_TOML_POSITION = re.compile(
    r"^(?P<msg>.*) \(at (?:line (?P<line>\d+), column (?P<col>\d+)|end of document)\)$"
)


# -- values ---------------------------------------------------------------------------------


def _show(value: object) -> str:
    """A TOML value the way the user wrote it, for error lines."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return str(value)


def _duration(value: object) -> int:
    if not isinstance(value, str):
        raise ValueError(f'must be a duration in quotes like "30m", got {_show(value)}')
    return parse_duration(value)


def _public_delay(value: object) -> int:
    seconds = _duration(value)
    if seconds > 3600:
        raise ValueError(f"must be at most 1h (lichess allows 0-3600 s), got {_show(value)}")
    return seconds


def _time_control(value: object) -> TimeControl:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError(f'must be a time control in quotes like "5400+30", got {_show(value)}')
    return TimeControl.from_pgn(value)


def _date(value: object) -> dt.date:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError(f"must be a date like 2026-06-24, got {_show(value)}")


def _datetime(value: object) -> dt.datetime:
    """A date and time; without an offset it is the venue's (this machine's) local time."""
    moment = value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            moment = dt.datetime.fromisoformat(value)
    if not isinstance(moment, dt.datetime):
        raise ValueError(
            f"must be a date and time like 2026-06-24T10:00:00+10:00, got {_show(value)}"
        )
    return moment if moment.tzinfo is not None else moment.astimezone()


def _dgt_mode(value: object) -> int:
    if value != 23 or isinstance(value, bool):
        raise ValueError(
            f"only 23 (computer-controlled clocks, dgt-protocol.md §8) is supported,"
            f" got {_show(value)}"
        )
    return 23


def _path(value: object) -> Path:
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be a file path in quotes, got {_show(value)}")
    return Path(value)


def _url(value: object) -> str:
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"must be an http:// or https:// address, got {_show(value)}")
    return str(value)


def _topic_prefix(value: object) -> str:
    if not isinstance(value, str) or not value.strip("/") or set(value) & {"+", "#"}:
        raise ValueError(f"must be an MQTT topic without + or #, got {_show(value)}")
    return value.strip("/")


def _mqtt_name(value: object) -> str:
    """A daemon or relay id: one MQTT topic level (it names topics and client ids)."""
    if not isinstance(value, str) or not value or re.search(r"[#+/\s]", value):
        raise ValueError(f"must be a name without /, +, # or spaces, got {_show(value)}")
    return value


_Text = Annotated[str, Field(min_length=1)]
_Port = Annotated[int, Field(ge=1, le=65535)]
_Elo = Annotated[int, Field(ge=0, le=4000)]
_FideId = Annotated[int, Field(ge=1)]
_Duration = Annotated[int, PlainValidator(_duration)]
_PathValue = Annotated[Path, PlainValidator(_path)]
_Url = Annotated[str, PlainValidator(_url)]
_Title = Literal["GM", "IM", "FM", "CM", "WGM", "WIM", "WFM", "WCM"]


# -- tables ---------------------------------------------------------------------------------


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class BoardConfig(_Table):
    """One ``[[boards]]`` table: a board, its e-board port if any, and its players.

    A board without ``port`` has no e-board: arbiters enter its result by hand.
    ``clock_white_side`` overrides the side of the clock that is learned from the
    first moves (dgt-protocol.md §7.2, "Which clock side is White").
    """

    number: int = Field(ge=1)
    port: _Text | None = None
    white: str = ""
    black: str = ""
    white_elo: _Elo | None = None
    black_elo: _Elo | None = None
    white_fide_id: _FideId | None = None
    black_fide_id: _FideId | None = None
    white_title: _Title | None = None
    black_title: _Title | None = None
    clock_white_side: Literal["left", "right"] | None = None

    @property
    def has_eboard(self) -> bool:
        """True when an e-board is cabled (a ``port`` is given)."""
        return self.port is not None


class _EventKeys(_Table):
    site: str | None = None
    date: Annotated[dt.date, PlainValidator(_date)] | None = None
    round: Annotated[int, Field(ge=1)] | None = None
    round_start: Annotated[dt.datetime, PlainValidator(_datetime)] | None = None
    time_control: Annotated[TimeControl, PlainValidator(_time_control)] | None = None
    dgt_mode: Annotated[int, PlainValidator(_dgt_mode)] | None = None
    default_time: _Duration | None = None
    default_time_warning: _Duration | None = None


class _EventTable(_EventKeys):
    name: _Text | None = None


class _SectionTable(_EventKeys):
    name: _Text
    boards: list[BoardConfig] = Field(default_factory=list)


class ServerConfig(_Table):
    """``[server]``: where the broadcast and arbiter channel listen.

    ``arbiter_token`` is None only on a loopback host (see docs/configuration.md).
    """

    host: _Text = "127.0.0.1"
    port: _Port = 8080
    arbiter_token: _Text | None = None
    public_delay: Annotated[int, PlainValidator(_public_delay)] = 0


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


class LichessConfig(_Table):
    """``[lichess]``: push the round's PGN to a lichess broadcast round."""

    enabled: bool = False
    push_url: _Url | None = None
    token: _Text | None = None


class PgnFolderConfig(_Table):
    """``[pgn_folder]``: ``game-N.pgn`` per board and ``games.pgn`` for all."""

    path: _PathValue


class WebhookConfig(_Table):
    """``[webhook]``: alerts and results are POSTed as JSON to this address."""

    url: _Url


class PairingConfig(_Table):
    """``[pairing]``: the tournament's TRF file, and the pairing program's output."""

    trf: _PathValue
    pairings: _PathValue | None = None
    command: list[_Text] | None = None  # run on the saved TRF after each confirmed result


class _FileTables(_Table):
    """The file as written, before the two forms are normalised."""

    event: _EventTable | None = None
    server: ServerConfig = Field(default_factory=ServerConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    boards: list[BoardConfig] | None = None
    sections: list[_SectionTable] | None = None
    mqtt: MqttConfig | None = None
    lichess: LichessConfig | None = None
    pgn_folder: PgnFolderConfig | None = None
    webhook: WebhookConfig | None = None
    pairing: PairingConfig | None = None


# -- validation errors as one line each ------------------------------------------------------

_REASONS: dict[str, Callable[[ErrorDetails], str]] = {
    "missing": lambda e: "required",
    "int_type": lambda e: f"must be a whole number, got {_show(e['input'])}",
    "string_type": lambda e: f"must be text in quotes, got {_show(e['input'])}",
    "bool_type": lambda e: f"must be true or false, got {_show(e['input'])}",
    "string_too_short": lambda e: "must not be empty",
    "greater_than_equal": lambda e: f"must be at least {_ctx(e, 'ge')}, got {_show(e['input'])}",
    "less_than_equal": lambda e: f"must be at most {_ctx(e, 'le')}, got {_show(e['input'])}",
    "literal_error": lambda e: (
        f"must be {str(_ctx(e, 'expected')).replace(chr(39), chr(34))}, got {_show(e['input'])}"
    ),
    "value_error": lambda e: str(_ctx(e, "error")),
    "list_type": lambda e: f"must be an array of tables, got {_show(e['input'])}",
    "model_type": lambda e: f"must be a table, got {_show(e['input'])}",
}


def _ctx(error: ErrorDetails, key: str) -> object:
    return error.get("ctx", {}).get(key)


def _key_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part + 1}]" if isinstance(part, int) else f".{part}" if path else part
    return path


def _known_keys(loc: tuple[int | str, ...], root: type[BaseModel] = _FileTables) -> list[str]:
    """The keys the table at ``loc`` accepts (for "did you mean")."""
    model: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, str) and model is not None:
            field = model.model_fields.get(part)
            model = None if field is None else _model_in(field.annotation)
    return [] if model is None else list(model.model_fields)


def _model_in(annotation: object) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        model = _model_in(arg)
        if model is not None:
            return model
    return None


def _describe(error: ErrorDetails, root: type[BaseModel] = _FileTables) -> str:
    loc = error["loc"]
    if error["type"] == "extra_forbidden":
        known = _known_keys(loc[:-1], root)
        close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.75)
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        return f"{_key_path(loc)}: unknown key{hint}"
    describe = _REASONS.get(error["type"])
    reason = error["msg"] if describe is None else describe(error)
    return f"{_key_path(loc)}: {reason}"


class ConfigError(Exception):
    """The configuration cannot be used; ``problems`` holds one line per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True, slots=True, kw_only=True)
class EventConfig:
    """A section's event, with every default filled in.

    Attributes:
        name: the event's name (PGN ``Event``).
        site: where it is played (PGN ``Site``), "" when not given.
        date: the round's date; default the date of ``round_start``.
        round: the round number, 1 or more.
        round_start: when White's clocks are started (FIDE 6.6), time-zone aware.
        time_control: what every clock of the section is set to.
        dgt_mode: 23 when the clocks are computer-controlled (dgt-protocol.md §8).
        default_time: seconds after ``round_start`` a player absent from the board
            loses (FIDE 6.7); 0 when the regulations state none.
        default_time_warning: seconds before the default time that the late-arrival
            warning is given.
    """

    name: str
    site: str
    date: dt.date
    round: int
    round_start: dt.datetime
    time_control: TimeControl
    dgt_mode: int | None
    default_time: int
    default_time_warning: int

    @property
    def default_at(self) -> dt.datetime:
        """When the default time expires (FIDE 6.7)."""
        return self.round_start + dt.timedelta(seconds=self.default_time)


@dataclass(frozen=True, slots=True, kw_only=True)
class Section:
    """Boards that share an event and a time control; ``name`` is "" in the one-event form."""

    name: str
    event: EventConfig
    boards: tuple[BoardConfig, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The whole validated configuration.

    Paths (journal, PGN folder, TRF) are absolute: relative ones in the file are taken
    from the folder of the file.
    """

    source: Path
    sections: tuple[Section, ...]
    server: ServerConfig
    storage: StorageConfig
    mqtt: MqttConfig | None = None
    lichess: LichessConfig | None = None
    pgn_folder: PgnFolderConfig | None = None
    webhook: WebhookConfig | None = None
    pairing: PairingConfig | None = None

    @property
    def boards(self) -> tuple[BoardConfig, ...]:
        """Every board of every section, in file order."""
        return tuple(board for section in self.sections for board in section.boards)

    def section_of(self, number: int) -> Section:
        """The section board ``number`` plays in.

        Raises:
            KeyError: no such board.
        """
        for section in self.sections:
            if any(board.number == number for board in section.boards):
                return section
        raise KeyError(number)

    def board(self, number: int) -> BoardConfig:
        """The board with this number.

        Raises:
            KeyError: no such board.
        """
        for board in self.boards:
            if board.number == number:
                return board
        raise KeyError(number)


def format_config_errors(error: ConfigError) -> str:
    """The text the command line prints (to stderr) before exiting with code 2."""
    return "\n".join(error.problems)


def load_config(
    path: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    now: dt.datetime | None = None,
) -> Config:
    """Read, validate and normalise a configuration file.

    Args:
        path: the TOML file; named in every error line as given.
        env: environment for the secrets (default ``os.environ``).
        now: when the daemon started (default: now), the default ``round_start``. After
            a restart, pass the first start time kept in the journal, so the default
            time of FIDE 6.7 does not move.

    Raises:
        ConfigError: one line per problem, never a traceback.
    """
    source = str(path)
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError([f"{source}: cannot read the file: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise ConfigError([f"{source}: not UTF-8 text"]) from None
    return parse_config(
        text,
        source=source,
        base_dir=Path(path).resolve().parent,
        env=os.environ if env is None else env,
        now=dt.datetime.now().astimezone() if now is None else now,
    )


def parse_config(
    text: str, *, source: str, base_dir: Path, env: Mapping[str, str], now: dt.datetime
) -> Config:
    """Validate configuration text (see :func:`load_config`); pure, for tests and tools.

    Raises:
        ConfigError: one line per problem.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([_describe_toml_error(source, text, exc)]) from None
    try:
        tables = _FileTables.model_validate(data)
    except ValidationError as exc:
        raise ConfigError([f"{source}: {_describe(error)}" for error in exc.errors()]) from None
    builder = _Builder(tables, base_dir=base_dir, env=env, now=now)
    config = builder.build(Path(source))
    if builder.problems:
        raise ConfigError([f"{source}: {line}" for line in builder.problems])
    assert config is not None
    return config


def _describe_toml_error(source: str, text: str, exc: tomllib.TOMLDecodeError) -> str:
    match = _TOML_POSITION.match(str(exc))
    if match is None:
        return f"{source}: TOML syntax error: {exc}"
    if match.group("line") is None:
        where = f"line {text.count(chr(10)) + 1} (end of file)"
    else:
        where = f"line {match.group('line')}, column {match.group('col')}"
    return f"{source}: {where}: TOML syntax error: {match.group('msg')}"


#: The keys a section may take from [event] or set itself (all but ``name``).
_EVENT_KEYS = tuple(_EventKeys.model_fields)


class _Builder:
    """Turns validated tables into a :class:`Config`, collecting cross-key problems."""

    def __init__(
        self, tables: _FileTables, *, base_dir: Path, env: Mapping[str, str], now: dt.datetime
    ) -> None:
        self.tables = tables
        self.base_dir = base_dir
        self.env = env
        self.now = now
        self.problems: list[str] = []

    def build(self, source: Path) -> Config | None:
        sections = self._sections()
        self._check_boards(sections)
        server = self._server()
        config = Config(
            source=source,
            sections=tuple(section for section, _ in sections),
            server=server,
            storage=self.tables.storage.model_copy(
                update={"path": self._path(self.tables.storage.path)}
            ),
            mqtt=self._mqtt(),
            lichess=self._lichess(),
            pgn_folder=self._pgn_folder(),
            webhook=self.tables.webhook,
            pairing=self._pairing(),
        )
        return None if self.problems else config

    # -- sections and events ------------------------------------------------------------

    def _sections(self) -> list[tuple[Section, str]]:
        """Each section with the key path of its boards array (for error lines)."""
        tables = self.tables
        if tables.sections is not None:
            if tables.boards is not None:
                self.problems.append(
                    "boards: top-level [[boards]] cannot be combined with [[sections]];"
                    " move them into [[sections.boards]]"
                )
            if not tables.sections:
                self.problems.append("sections: no sections configured")
            if tables.event is None or tables.event.name is None:
                self.problems.append("event.name: required (the name the sections share)")
            return [self._section(i, table) for i, table in enumerate(tables.sections, 1)]
        if tables.event is None:
            self.problems.append("event: required table missing (or use [[sections]])")
        elif tables.event.name is None:
            self.problems.append("event.name: required")
        if not tables.boards:
            self.problems.append("boards: no boards configured; add [[boards]] tables")
        event = self._event(tables.event or _EventTable(), None, "event")
        return [(Section(name="", event=event, boards=tuple(tables.boards or ())), "boards")]

    def _section(self, index: int, table: _SectionTable) -> tuple[Section, str]:
        where = f"sections[{index}]"
        if not table.boards:
            self.problems.append(f"{where}.boards: no boards in this section")
        event = self._event(self.tables.event or _EventTable(), table, where)
        return Section(name=table.name, event=event, boards=tuple(table.boards)), f"{where}.boards"

    def _event(self, shared: _EventTable, own: _SectionTable | None, where: str) -> EventConfig:
        values: dict[str, Any] = {key: getattr(shared, key) for key in _EVENT_KEYS}
        if own is not None:
            values.update({k: getattr(own, k) for k in _EVENT_KEYS if getattr(own, k) is not None})
        scope = "" if own is None else ", here or in [event]"
        for key in ("round", "time_control"):
            if values[key] is None and (own is not None or self.tables.event is not None):
                self.problems.append(f"{where}.{key}: required{scope}")
        round_start = values["round_start"] or self.now
        default_time = values["default_time"] or 0
        warning = values["default_time_warning"]
        return EventConfig(
            name=shared.name or "",
            site=values["site"] or "",
            date=values["date"] or round_start.date(),
            round=values["round"] or 1,
            round_start=round_start,
            # A stand-in when it is missing: that is reported, and no Config is returned.
            time_control=values["time_control"] or TimeControl.from_pgn("60"),
            dgt_mode=values["dgt_mode"],
            default_time=default_time,
            default_time_warning=_DEFAULT_WARNING if warning is None else warning,
        )

    # -- boards -------------------------------------------------------------------------

    def _check_boards(self, sections: list[tuple[Section, str]]) -> None:
        numbers: dict[int, str] = {}
        ports: dict[str, int] = {}
        players: dict[str, int] = {}
        names = {section.name for section, _ in sections}
        if len(names) < len(sections):
            self._duplicate_section_names(sections)
        for section, array in sections:
            for index, board in enumerate(section.boards, 1):
                where = f"{array}[{index}]"
                if board.number in numbers:
                    self.problems.append(
                        f"{where}.number: duplicate board number {board.number}"
                        f" (also {numbers[board.number]})"
                    )
                numbers.setdefault(board.number, where)
                if board.port is not None:
                    if board.port in ports:
                        self.problems.append(
                            f'{where}.port: duplicate port "{board.port}"'
                            f" (also board {ports[board.port]})"
                        )
                    ports.setdefault(board.port, board.number)
                self._check_players(where, board, players)

    def _duplicate_section_names(self, sections: list[tuple[Section, str]]) -> None:
        seen: dict[str, int] = {}
        for index, (section, _) in enumerate(sections, 1):
            if section.name in seen:
                self.problems.append(
                    f'sections[{index}].name: duplicate section name "{section.name}"'
                    f" (also sections[{seen[section.name]}])"
                )
            seen.setdefault(section.name, index)

    def _check_players(self, where: str, board: BoardConfig, players: dict[str, int]) -> None:
        if board.white and board.white == board.black:
            self.problems.append(f'{where}.black: "{board.black}" cannot play themselves')
            return
        for color in ("white", "black"):
            fide_id = getattr(board, f"{color}_fide_id")
            name = getattr(board, color)
            key = f"fide:{fide_id}" if fide_id is not None else f"name:{name}"
            if not name and fide_id is None:
                continue
            if key in players:
                shown = f"FIDE id {fide_id}" if fide_id is not None else f'"{name}"'
                self.problems.append(
                    f"{where}.{color}: {shown} already plays on board {players[key]}"
                )
            players.setdefault(key, board.number)

    # -- other tables -------------------------------------------------------------------

    def _server(self) -> ServerConfig:
        server = self.tables.server
        token = self.env.get(ARBITER_TOKEN_ENV) or server.arbiter_token
        if not _is_loopback(server.host):
            where = "server.arbiter_token"
            if token is None:
                self.problems.append(
                    f'{where}: required when serving on "{server.host}"'
                    f" (or set {ARBITER_TOKEN_ENV})"
                )
            elif token == _PLACEHOLDER_TOKEN or len(token) < _MIN_PUBLIC_TOKEN:
                self.problems.append(
                    f'{where}: too easy to guess for "{server.host}":'
                    f" use at least {_MIN_PUBLIC_TOKEN} random characters"
                )
        return server.model_copy(update={"arbiter_token": token})

    def _mqtt(self) -> MqttConfig | None:
        mqtt = self.tables.mqtt
        if mqtt is None:
            return None
        password = self.env.get(MQTT_PASSWORD_ENV) or mqtt.password
        if password is not None and mqtt.username is None:
            self.problems.append("mqtt.password: given without mqtt.username")
        if mqtt.ca_file is not None and not mqtt.tls:
            self.problems.append("mqtt.ca_file: given without mqtt.tls = true")
        ca_file = None if mqtt.ca_file is None else self._path(mqtt.ca_file)
        return mqtt.model_copy(update={"password": password, "ca_file": ca_file})

    def _lichess(self) -> LichessConfig | None:
        lichess = self.tables.lichess
        if lichess is None:
            return None
        token = self.env.get(LICHESS_TOKEN_ENV) or lichess.token
        if lichess.enabled and lichess.push_url is None:
            self.problems.append("lichess.push_url: required when lichess.enabled = true")
        if lichess.enabled and token is None:
            self.problems.append(
                f"lichess.token: required when lichess.enabled = true (or set {LICHESS_TOKEN_ENV})"
            )
        return lichess.model_copy(update={"token": token})

    def _pgn_folder(self) -> PgnFolderConfig | None:
        folder = self.tables.pgn_folder
        if folder is None:
            return None
        return folder.model_copy(update={"path": self._path(folder.path)})

    def _pairing(self) -> PairingConfig | None:
        pairing = self.tables.pairing
        if pairing is None:
            return None
        pairings = None if pairing.pairings is None else self._path(pairing.pairings)
        return pairing.model_copy(update={"trf": self._path(pairing.trf), "pairings": pairings})

    def _path(self, path: Path) -> Path:
        return path if path.is_absolute() else self.base_dir / path


# -- relays ---------------------------------------------------------------------------------


class RelayTable(_Table):
    """``[relay]``: the relay's name on the broker and its patience with daemons.

    ``id`` names the relay's MQTT client (default: the host name and process id);
    ``command_timeout`` is how long an arbiter command waits for the owning daemon's
    answer before the arbiter is told it did not come.
    """

    id: Annotated[str, PlainValidator(_mqtt_name)] | None = None
    command_timeout: _Duration = 8


class _RelayFileTables(_Table):
    server: ServerConfig = Field(default_factory=ServerConfig)
    mqtt: MqttConfig | None = None
    lichess: LichessConfig | None = None
    pgn_folder: PgnFolderConfig | None = None
    relay: RelayTable = Field(default_factory=RelayTable)


@dataclass(frozen=True, slots=True, kw_only=True)
class RelayConfig:
    """A relay's validated configuration (``dgtcast relay --config FILE``).

    The same tables as a daemon's, without the event: a relay learns the boards from
    the broker (docs/deployment.md).
    """

    source: Path
    server: ServerConfig
    mqtt: MqttConfig
    relay: RelayTable
    lichess: LichessConfig | None = None
    pgn_folder: PgnFolderConfig | None = None


def load_relay_config(
    path: str | os.PathLike[str], *, env: Mapping[str, str] | None = None
) -> RelayConfig:
    """Read and validate a relay's configuration file.

    Raises:
        ConfigError: one line per problem, never a traceback.
    """
    source = str(path)
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError([f"{source}: cannot read the file: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise ConfigError([f"{source}: not UTF-8 text"]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([_describe_toml_error(source, text, exc)]) from None
    try:
        tables = _RelayFileTables.model_validate(data)
    except ValidationError as exc:
        lines = [f"{source}: {_describe(e, _RelayFileTables)}" for e in exc.errors()]
        raise ConfigError(lines) from None
    base_dir = Path(path).resolve().parent
    return _relay_config(tables, Path(source), base_dir, os.environ if env is None else env)


def _relay_config(
    tables: _RelayFileTables, source: Path, base_dir: Path, env: Mapping[str, str]
) -> RelayConfig:
    shared = _FileTables.model_construct(
        server=tables.server, mqtt=tables.mqtt, lichess=tables.lichess, pgn_folder=tables.pgn_folder
    )
    builder = _Builder(shared, base_dir=base_dir, env=env, now=dt.datetime.now().astimezone())
    server, mqtt = builder._server(), builder._mqtt()
    lichess, pgn_folder = builder._lichess(), builder._pgn_folder()
    problems = builder.problems
    if mqtt is None or not mqtt.enabled:
        problems.append("mqtt: a relay needs [mqtt] (enabled): it serves what the broker holds")
    elif mqtt.daemon_id is not None:
        problems.append("mqtt.daemon_id: a relay is no daemon; name it with relay.id")
    if not 1 <= tables.relay.command_timeout <= 60:
        problems.append("relay.command_timeout: must be between 1s and 1m")
    if problems or mqtt is None:
        raise ConfigError([f"{source}: {line}" for line in problems])
    return RelayConfig(
        source=source,
        server=server,
        mqtt=mqtt,
        relay=tables.relay,
        lichess=lichess,
        pgn_folder=pgn_folder,
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
