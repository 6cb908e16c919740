"""A relay's configuration (``dgtcast relay --config FILE``): validated, normalised.

The same tables as a daemon's, without the event (docs/deployment.md); the checks that
span keys are the daemon's own (:class:`daemon.config.model.TableBuilder`).

Exceptions::

    ConfigError    the file is missing, unreadable, not TOML or not valid
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from daemon.config.errors import ConfigError, describe_validation, load_toml
from daemon.config.model import TableBuilder
from daemon.config.tables import (
    FileTables,
    LichessConfig,
    MqttConfig,
    PgnFolderConfig,
    RelayFileTables,
    RelayTable,
    ServerConfig,
)

__all__ = ["RelayConfig", "load_relay_config"]


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
    lichess: tuple[LichessConfig, ...] = ()
    pgn_folder: PgnFolderConfig | None = None


def load_relay_config(
    path: str | os.PathLike[str], *, env: Mapping[str, str] | None = None
) -> RelayConfig:
    """Read and validate a relay's configuration file.

    Raises:
        ConfigError: one line per problem, never a traceback.
    """
    source = str(path)
    data = load_toml(path)
    try:
        tables = RelayFileTables.model_validate(data)
    except ValidationError as exc:
        raise describe_validation(source, exc, RelayFileTables) from None
    base_dir = Path(path).resolve().parent
    return _relay_config(tables, Path(source), base_dir, os.environ if env is None else env)


def _relay_config(
    tables: RelayFileTables, source: Path, base_dir: Path, env: Mapping[str, str]
) -> RelayConfig:
    shared = FileTables.model_construct(
        server=tables.server, mqtt=tables.mqtt, lichess=tables.lichess, pgn_folder=tables.pgn_folder
    )
    builder = TableBuilder(shared, base_dir=base_dir, env=env, now=dt.datetime.now().astimezone())
    server, mqtt = builder.server(), builder.mqtt()
    lichess, pgn_folder = builder.lichess(), builder.pgn_folder()
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
