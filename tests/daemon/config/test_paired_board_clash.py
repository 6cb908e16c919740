"""A section whose pairings put games on another section's boards: a one-line error.

``dgtcast run`` and ``dgtcast demo`` refuse such a configuration with exit code 2 and
a line naming the key (``sections[N].pairing.first_board``), the boards and the section.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.daemon.support import refused_start
from tests.serving import dgtcast

ROOT = Path(__file__).resolve().parents[3]

EXPECTED = (
    "event.toml: sections[1].pairing.first_board: the pairings put Open's games of round 4"
    " on board 4 of section 'U12': number them from a board no other section uses"
)


def _config(folder: Path) -> Path:
    """The Open paired from round 4's file (six games: boards 1-6), the U12 on board 4."""
    for name in ("tournament-example.trf", "round4-pairings.txt"):
        shutil.copy(ROOT / "config" / name, folder / name)
    path = folder / "event.toml"
    path.write_text(
        "\n".join(
            [
                "[event]",
                'name = "Spring Congress"',
                'time_control = "5400+30"',
                "",
                "[server]",
                'host = "127.0.0.1"',
                "port = 8080",
                "",
                "[storage]",
                'path = "journal.db"',
                "",
                "[[sections]]",
                'name = "Open"',
                "round = 4",
                "[sections.pairing]",
                'trf = "tournament-example.trf"',
                'pairings = "round4-pairings.txt"',
                "[[sections.boards]]",
                "number = 1",
                f'port = "{folder / "tty-open-1"}"',
                "",
                "[[sections]]",
                'name = "U12"',
                "round = 3",
                "[[sections.boards]]",
                "number = 4",
                f'port = "{folder / "tty-u12-4"}"',
                'white = "E, E"',
                'black = "F, F"',
                "",
            ]
        )
    )
    return path


def test_run_refuses_paired_games_on_another_sections_board(tmp_path: Path) -> None:
    stderr = refused_start(_config(tmp_path))
    assert stderr.strip().splitlines() == [
        EXPECTED.replace("event.toml", str(tmp_path / "event.toml"))
    ]


def test_demo_refuses_them_too(tmp_path: Path) -> None:
    config = _config(tmp_path)
    argv = dgtcast("demo", "--plain", "--config", str(config), "--http-port", "0")
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [EXPECTED.replace("event.toml", str(config))]
