"""The tables of output kinds: what a daemon and a relay start their outputs from.

Each kind of ``daemon/shell/outputs.py`` (the daemon's) and ``broadcast/outputs/kinds.py``
(``SHARED``, a relay's) names the table of the configuration file it is built from, once;
a kind whose table is absent starts nothing, and one that is there starts its jobs under
the names the faults and logs use (daemon/shell/faults.py).
"""

from __future__ import annotations

from pathlib import Path

from broadcast.feed.hub import Hub
from broadcast.outputs.kinds import SHARED, Feeds, OutputSettings, start_outputs
from broadcast.outputs.lichess import LichessTarget
from broadcast.outputs.output_alerts import OutputAlerts
from broadcast.outputs.pgn_folder import PgnFolderSettings
from broadcast.outputs.webhook import WebhookSettings
from daemon.config.tables import FileTables, RelayFileTables
from daemon.shell.outputs import KINDS


def _feeds() -> Feeds:
    hub = Hub()
    return Feeds(hub=hub, public=hub, alerts=OutputAlerts(hub, lambda: 0.0), refusal_fix="fix")


def test_each_kind_of_the_daemon_is_one_table_of_its_file() -> None:
    keys = [kind.key for kind in KINDS]
    assert len(keys) == len(set(keys)), keys
    assert set(keys) <= set(FileTables.model_fields), set(keys) - set(FileTables.model_fields)


def test_each_kind_of_a_relay_is_one_table_of_its_file() -> None:
    keys = [kind.key for kind in SHARED]
    assert len(keys) == len(set(keys)), keys
    assert set(keys) <= set(RelayFileTables.model_fields)


def test_a_kind_without_its_table_starts_nothing() -> None:
    assert start_outputs(SHARED, OutputSettings(), _feeds()) == []


def test_each_configured_kind_starts_under_its_name(tmp_path: Path) -> None:
    settings = OutputSettings(
        lichess=(LichessTarget(token="t", rounds={"1": "abcdefgh"}),),
        pgn_folder=PgnFolderSettings(path=tmp_path),
        webhook=WebhookSettings(url="http://127.0.0.1:9/alerts"),
    )
    names = [name for name, _ in start_outputs(SHARED, settings, _feeds())]
    assert names == ["the lichess push", "the PGN folder"]
