"""The outputs' settings from the configuration: one mapping for the daemon and the relay.

A daemon (``daemon/shell/outputs.py``) and a relay (``daemon/commands/relay.py``) read the
same ``[mqtt]`` and ``[pgn_folder]`` tables; here they become the settings of the broadcast
layer's clients, once (``[lichess]``: :mod:`daemon.config.lichess`), and the daemon's
:class:`~broadcast.outputs.kinds.OutputSettings` of the kinds it shares with a relay.
"""

from __future__ import annotations

from dataclasses import replace

from broadcast.feed.signing import EventKey
from broadcast.outputs.kinds import OutputSettings
from broadcast.outputs.mqtt_client import MqttSettings
from broadcast.outputs.pgn_folder import PgnFolderSettings
from broadcast.outputs.webhook import WebhookSettings
from daemon.config.model import Config
from daemon.config.tables import MqttConfig, PgnFolderConfig, WebhookConfig

__all__ = ["mqtt_settings", "output_settings", "pgn_folder_settings", "webhook_settings"]


def mqtt_settings(mqtt: MqttConfig, *, client_id: str | None = None) -> MqttSettings:
    """The broker, and the name this program goes by on it.

    Args:
        mqtt: the ``[mqtt]`` table.
        client_id: the name on the broker (a relay's id); default ``mqtt.daemon_id``, or
            the host name when that is not set either.
    """
    settings = MqttSettings(
        host=mqtt.host,
        port=mqtt.port,
        prefix=mqtt.prefix,
        username=mqtt.username,
        password=mqtt.password,
        tls=mqtt.tls,
        ca_file=None if mqtt.ca_file is None else str(mqtt.ca_file),
        event_key=None if mqtt.event_key is None else EventKey(mqtt.event_key),
    )
    name = client_id or mqtt.daemon_id
    return settings if name is None else replace(settings, daemon_id=name)


def pgn_folder_settings(folder: PgnFolderConfig | None) -> PgnFolderSettings | None:
    """The PGN folder, None without ``[pgn_folder]``."""
    return None if folder is None else PgnFolderSettings(path=folder.path)


def webhook_settings(webhook: WebhookConfig | None) -> WebhookSettings | None:
    """The alert webhook, None without ``[webhook]``."""
    return None if webhook is None else WebhookSettings(url=webhook.url)


def output_settings(config: Config) -> OutputSettings:
    """A daemon's settings of the output kinds it shares with a relay (its lichess push
    is a link of its own, which reads the file again: :mod:`daemon.links.lichess`)."""
    return OutputSettings(
        pgn_folder=pgn_folder_settings(config.pgn_folder),
        webhook=webhook_settings(config.webhook),
    )
