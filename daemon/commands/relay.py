"""``dgtcast relay --config FILE``: serve every daemon's boards from the MQTT broker.

The relay's file holds ``[mqtt]`` (the broker, required), ``[server]``, ``[relay]`` and
optionally ``[lichess]`` and ``[pgn_folder]`` (docs/deployment.md). Exit codes: 0 done,
2 bad configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import replace

from broadcast.relay.server import Relay, RelaySettings, default_relay_id
from broadcast.web.listen import ListenError
from daemon.commands.options import add_http_port
from daemon.config.lichess import lichess_targets
from daemon.config.model import ConfigError, format_config_errors
from daemon.config.relay import RelayConfig, load_relay_config
from daemon.links.settings import mqtt_settings, pgn_folder_settings
from daemon.shell import runtime
from daemon.shell.limits import connection_limits, quiet_accept_errors, raise_open_file_limit
from daemon.shell.logs import configure_logging

__all__ = ["add_arguments", "relay_settings", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config``, ``--http-port``, ``--log-level``."""
    parser.add_argument("--config", required=True, help="the relay's TOML configuration")
    add_http_port(parser, "listen on this HTTP port instead of [server] port")
    parser.add_argument("--log-level", default="INFO", help="DEBUG shows every MQTT message")


def relay_settings(
    config: RelayConfig, *, port: int | None = None, open_files: int | None = None
) -> RelaySettings:
    """The relay's settings from its configuration (``port`` overrides ``[server] port``;
    ``open_files``: the process's limit, which bounds the connections it serves)."""
    broker = mqtt_settings(config.mqtt, client_id=config.relay.id or default_relay_id())
    server = config.server
    settings = RelaySettings(
        mqtt=broker,
        host=server.host,
        port=server.port,
        arbiter_token=server.arbiter_token,
        delay=float(server.public_delay),
        results=server.results,
        command_timeout=float(config.relay.command_timeout),
        lichess=tuple(lichess_targets(config.lichess)),
        pgn_folder=pgn_folder_settings(config.pgn_folder),
        allowed_origins=tuple(server.allowed_origins),
        limits=connection_limits(open_files, server.max_connections_per_client),
    )
    return settings if port is None else replace(settings, port=port)


def run(args: argparse.Namespace) -> int:
    """Run the relay until Ctrl-C or SIGTERM; exit code 2 on a bad configuration."""
    configure_logging(args.log_level)
    try:
        config = load_relay_config(args.config)
    except ConfigError as exc:
        print(format_config_errors(exc), file=sys.stderr)
        return 2
    try:
        settings = relay_settings(config, port=args.http_port, open_files=raise_open_file_limit())
        return runtime.run(_serve(settings))
    except ListenError as exc:
        print(f"dgtcast relay: {exc}", file=sys.stderr)
        return 2


async def _serve(settings: RelaySettings) -> int:
    relay = Relay(settings)
    quiet_accept_errors(asyncio.get_running_loop())
    stop = asyncio.Event()
    remove = runtime.install_signal_handlers(stop)
    try:
        await relay.start()
        task = asyncio.create_task(relay.run(stop))
        base = f"http://{settings.host}:{relay.server.port}"
        print(f"relay of mqtt://{settings.mqtt.host}:{settings.mqtt.port}", flush=True)
        print(f"viewer:  {base}/", flush=True)
        if settings.arbiter_token is None:  # on loopback, none configured: no commands
            print("arbiter: off (a relay needs [server] arbiter_token)", flush=True)
        else:
            print(f"arbiter: {base}/arbiter", flush=True)
        print(f"PGN:     {base}/round.pgn", flush=True)
        await task
    finally:
        remove()
    return 0
