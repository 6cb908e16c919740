"""The daemon's configuration: one TOML file, validated, normalised into :class:`Config`.

Every key is documented in ``docs/configuration.md``; the keys are the public interface
(issue 4): they may be extended, never renamed. Two forms are accepted and normalised
into the same model, a list of sections (:class:`~daemon.config.sections.Section`), each
with its event and its boards:

* one ``[event]`` with top-level ``[[boards]]``;
* ``[[sections]]`` (several time controls in one venue), each with ``name`` and its own
  ``[[sections.boards]]``; each section may set any ``[event]`` key, and ``[event]``
  then holds what the sections share (at least the event's ``name``).

A bad file raises :class:`ConfigError` carrying one line per problem, naming the key
path and why (``config.toml: boards[2].port: duplicate port "/dev/ttyACM0" (also board
1)``); array positions count from 1 in file order. The command line prints
:func:`format_config_errors` and exits with :data:`EXIT_BAD_CONFIG`.

The tables and their keys are in :mod:`daemon.config.tables`; the one-line translation of
pydantic and TOML errors, and the TOML reader, in :mod:`daemon.config.errors`; the
sections, their events and pairings in :mod:`daemon.config.sections`; a relay's
configuration in :mod:`daemon.config.relay`. Here: the checks that span keys, and the
normalised :class:`Config`.

Exceptions::

    ConfigError    the file is missing, unreadable, not TOML or not valid
"""

from __future__ import annotations

import copy
import datetime as dt
import ipaddress
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from broadcast.feed.signing import MIN_KEY
from daemon.config.boards import board_problems
from daemon.config.errors import ConfigError, describe_validation, load_toml, parse_toml
from daemon.config.lichess import check_lichess
from daemon.config.prizes import prize_rules
from daemon.config.sections import Section, SectionReader
from daemon.config.tables import (
    AnalysisConfig,
    BoardConfig,
    FileTables,
    LichessConfig,
    LiveChessConfig,
    MqttConfig,
    PairingConfig,
    PgnFolderConfig,
    ServerConfig,
    StorageConfig,
    WebhookConfig,
)
from daemon.prizes.rules import PrizeRules

__all__ = [
    "ARBITER_TOKEN_ENV",
    "EXIT_BAD_CONFIG",
    "LICHESS_TOKEN_ENV",
    "MQTT_EVENT_KEY_ENV",
    "MQTT_PASSWORD_ENV",
    "BoardConfig",
    "Config",
    "ConfigError",
    "ConfigFile",
    "LichessConfig",
    "LiveChessConfig",
    "MqttConfig",
    "PairingConfig",
    "PgnFolderConfig",
    "ServerConfig",
    "StorageConfig",
    "TableBuilder",
    "WebhookConfig",
    "format_config_errors",
    "is_every_interface",
    "is_loopback",
    "load_config",
    "load_config_or_report",
    "parse_config",
    "weak_token_problem",
]

#: Exit code of every command that is given a bad configuration file.
EXIT_BAD_CONFIG = 2
#: Environment variables that override secrets in the file (so the file can be shared).
ARBITER_TOKEN_ENV = "DGTCAST_ARBITER_TOKEN"
LICHESS_TOKEN_ENV = "DGTCAST_LICHESS_TOKEN"
MQTT_PASSWORD_ENV = "DGTCAST_MQTT_PASSWORD"
#: The event key of ``[mqtt]`` from the environment (docs/deployment.md, "The event key").
MQTT_EVENT_KEY_ENV = "DGTCAST_EVENT_KEY"

#: The tokens of the example files: refused on a host other than loopback.
_PLACEHOLDER_TOKENS = frozenset({"change-me", "change-me-to-a-long-secret"})
_MIN_PUBLIC_TOKEN = 12


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
    lichess: tuple[LichessConfig, ...] = ()
    pgn_folder: PgnFolderConfig | None = None
    webhook: WebhookConfig | None = None
    pairing: PairingConfig | None = None
    livechess: LiveChessConfig | None = None
    analysis: AnalysisConfig | None = None
    #: Each section's prize rules (``[prizes]``, ``[sections.prizes]``), by section name.
    prizes: Mapping[str, PrizeRules] = field(default_factory=dict)

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


@dataclass(frozen=True, slots=True)
class ConfigFile:
    """A configuration file read once; :meth:`build` makes its :class:`Config` for a start
    time as often as needed (the daemon's first start is only known from its journal,
    which the configuration names)."""

    data: Mapping[str, Any]
    source: str
    base_dir: Path
    env: Mapping[str, str]

    @classmethod
    def read(
        cls, path: str | os.PathLike[str], *, env: Mapping[str, str] | None = None
    ) -> ConfigFile:
        """Read ``path`` (TOML); ``env`` holds the secrets (default ``os.environ``).

        Raises:
            ConfigError: the file cannot be read or is no TOML (one line).
        """
        return cls(
            data=load_toml(path),
            source=str(path),
            base_dir=Path(path).resolve().parent,
            env=os.environ if env is None else env,
        )

    def build(self, now: dt.datetime | None = None) -> Config:
        """Validate and normalise the file's tables (see :func:`load_config`).

        Raises:
            ConfigError: one line per problem, never a traceback.
        """
        return _build(
            copy.deepcopy(dict(self.data)),
            source=self.source,
            base_dir=self.base_dir,
            env=self.env,
            now=dt.datetime.now().astimezone() if now is None else now,
        )


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
        now: when the daemon started (default: now): the round's date when neither
            ``date`` nor ``round_start`` says it. After a restart, pass the first start
            time kept in the journal, so the date does not move past midnight.

    Raises:
        ConfigError: one line per problem, never a traceback.
    """
    return ConfigFile.read(path, env=env).build(now)


def load_config_or_report(path: str | os.PathLike[str]) -> Config | None:
    """:func:`load_config` for a command: None once the problems are printed to stderr
    (:func:`format_config_errors`); the command then exits with code 2."""
    try:
        return load_config(path)
    except ConfigError as exc:
        print(format_config_errors(exc), file=sys.stderr)
        return None


def parse_config(
    text: str, *, source: str, base_dir: Path, env: Mapping[str, str], now: dt.datetime
) -> Config:
    """Validate configuration text (see :func:`load_config`); pure, for tests and tools.

    Raises:
        ConfigError: one line per problem.
    """
    return _build(parse_toml(text, source), source=source, base_dir=base_dir, env=env, now=now)


def _build(
    data: dict[str, Any], *, source: str, base_dir: Path, env: Mapping[str, str], now: dt.datetime
) -> Config:
    try:
        tables = FileTables.model_validate(data)
    except ValidationError as exc:
        raise describe_validation(source, exc, FileTables) from None
    builder = TableBuilder(tables, base_dir=base_dir, env=env, now=now)
    config = builder.build(Path(source))
    if builder.problems:
        raise ConfigError([f"{source}: {line}" for line in builder.problems])
    assert config is not None
    return config


class TableBuilder:
    """Turns validated tables into a :class:`Config`, collecting cross-key problems."""

    def __init__(
        self, tables: FileTables, *, base_dir: Path, env: Mapping[str, str], now: dt.datetime
    ) -> None:
        self.tables = tables
        self.base_dir = base_dir
        self.env = env
        self.now = now
        self.problems: list[str] = []
        self._section_reader = SectionReader(
            tables, now=now, resolve=self._path, problems=self.problems
        )

    def build(self, source: Path) -> Config | None:
        sections = self._section_reader.sections()
        self.problems += board_problems([(s.name, s.boards, array) for s, array in sections])
        server = self.server()
        config = Config(
            source=source,
            sections=tuple(section for section, _ in sections),
            server=server,
            storage=self.tables.storage.model_copy(
                update={"path": self._path(self.tables.storage.path)}
            ),
            mqtt=self.mqtt(),
            lichess=self.lichess(_board_sections(sections)),
            pgn_folder=self.pgn_folder(),
            webhook=self.tables.webhook,
            livechess=self.livechess(),
            analysis=self.analysis(sections),
        )
        paired = self._section_reader.with_pairings(config.sections)
        shared = paired[0].pairing if len(paired) == 1 else None
        config = replace(config, sections=paired, pairing=shared, prizes=self.prizes(paired))
        return None if self.problems else config

    def prizes(self, sections: tuple[Section, ...]) -> dict[str, PrizeRules]:
        """Each section's ``[prizes]`` (its own, or the top-level one for a single section)."""
        shared = self.tables.prizes
        own = [table.prizes for table in self.tables.sections or ()] or [None] * len(sections)
        if shared is not None and len(sections) > 1:
            self.problems.append(
                "prizes: with several [[sections]] give each its own [sections.prizes]"
            )
            shared = None
        rules = {}
        for index, (section, table) in enumerate(zip(sections, own, strict=True), start=1):
            where = "prizes" if table is None else f"sections[{index}].prizes"
            chosen = table or shared
            if chosen is None:
                continue
            if section.pairing is None:
                self.problems.append(
                    f"{where}: needs the section's [pairing] (prizes come from its TRF)"
                )
            rules[section.name] = prize_rules(chosen, where, self._path, self.problems)
        return rules

    # -- other tables -------------------------------------------------------------------

    def server(self) -> ServerConfig:
        server = self.tables.server
        token = self.env.get(ARBITER_TOKEN_ENV) or server.arbiter_token
        if not is_loopback(server.host):
            where = "server.arbiter_token"
            if token is None:
                self.problems.append(
                    f'{where}: required when serving on "{server.host}"'
                    f" (or set {ARBITER_TOKEN_ENV})"
                )
            elif weak_token(token):
                self.problems.append(
                    f'{where}: too easy to guess for "{server.host}":'
                    f" use at least {_MIN_PUBLIC_TOKEN} random characters"
                )
        return server.model_copy(update={"arbiter_token": token})

    def mqtt(self) -> MqttConfig | None:
        mqtt = self.tables.mqtt
        if mqtt is None:
            return None
        password = self.env.get(MQTT_PASSWORD_ENV) or mqtt.password
        if password is not None and mqtt.username is None:
            self.problems.append("mqtt.password: given without mqtt.username")
        if mqtt.ca_file is not None and not mqtt.tls:
            self.problems.append("mqtt.ca_file: given without mqtt.tls = true")
        ca_file = None if mqtt.ca_file is None else self._path(mqtt.ca_file)
        event_key = self.env.get(MQTT_EVENT_KEY_ENV) or mqtt.event_key
        if event_key is not None and len(event_key) < MIN_KEY:
            self.problems.append(
                f"mqtt.event_key: too short: use at least {MIN_KEY} random characters,"
                " the same on every daemon and relay of the event"
            )
            event_key = None
        update = {"password": password, "ca_file": ca_file, "event_key": event_key}
        return mqtt.model_copy(update=update)

    def lichess(self, boards: Mapping[int, str] | None = None) -> tuple[LichessConfig, ...]:
        """The enabled ``[[lichess]]`` tables; ``boards`` (number → section) checks them."""
        tables, problems = check_lichess(
            self.tables.lichess or [],
            token=self.env.get(LICHESS_TOKEN_ENV),
            boards=boards,
            env_name=LICHESS_TOKEN_ENV,
        )
        self.problems += problems
        return tables

    def pgn_folder(self) -> PgnFolderConfig | None:
        folder = self.tables.pgn_folder
        if folder is None:
            return None
        return folder.model_copy(update={"path": self._path(folder.path)})

    def livechess(self) -> LiveChessConfig | None:
        table = self.tables.livechess
        if table is None or table.folder is None:
            return table
        return table.model_copy(update={"folder": self._path(table.folder)})

    def analysis(self, sections: list[tuple[Section, str]]) -> AnalysisConfig | None:
        """``[analysis]``, its boards and sections checked against the event's."""
        table = self.tables.analysis
        if table is None:
            return None
        numbers = {board.number for section, _ in sections for board in section.boards}
        for number in table.boards or ():
            if number not in numbers:
                self.problems.append(f"analysis.boards: board {number} is not configured")
        names = {section.name for section, _ in sections}
        for name in table.sections or ():
            if name not in names:
                self.problems.append(f"analysis.sections: no section named {name!r}")
        return table

    def _path(self, path: Path) -> Path:
        return path if path.is_absolute() else self.base_dir / path


def weak_token(token: str) -> bool:
    """Whether an arbiter token is too easy to guess from the network (a placeholder of
    the examples, or too short)."""
    return token in _PLACEHOLDER_TOKENS or len(token) < _MIN_PUBLIC_TOKEN


def weak_token_problem(config: Config) -> str | None:
    """The one-line error for a token too short on any host (loopback too), or None.

    ``dgtcast run`` refuses one on loopback too (only the demo may use a short token):
    any page the arbiter's browser opens can try tokens on ``localhost``.
    """
    token = config.server.arbiter_token
    if token is None or len(token) >= _MIN_PUBLIC_TOKEN:
        return None
    return (
        f"{config.source}: server.arbiter_token: too short, also on"
        f' "{config.server.host}": use at least {_MIN_PUBLIC_TOKEN} random characters'
    )


def is_every_interface(host: str) -> bool:
    """Whether ``host`` (``[server] host``) listens on every interface (``0.0.0.0``, ``::``):
    a browser of this machine reaches it at 127.0.0.1, no browser at that address."""
    return host in ("0.0.0.0", "::", "")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (``[server] host``) is this machine only: ``localhost``, 127.x, ::1."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _board_sections(sections: list[tuple[Section, str]]) -> dict[int, str]:
    return {board.number: section.name for section, _ in sections for board in section.boards}
