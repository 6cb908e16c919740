"""Configuration edges through ``dgtcast run`` (issue 17.8 and 17.11): one line, exit 2.

A ``[pairing]`` table that could never hand a result over, TOML nested past Python's
recursion limit and numbers far past anything a tournament has are refused at start, in
one line naming the key, and nothing is opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.daemon.support import BoardSpec, refused_start, write_config

HUGE = "100000000000000000000"  # 10^20

CASES: list[tuple[str, dict[str, Any], str]] = [
    # (id, write_config's arguments, the expected line after "FILE: ")
    (
        "pairing-without-pairings",
        {"tables": {"pairing": {"trf": "tournament.trf"}}},
        "pairing.pairings: required with [pairing] (the pairing program's output for this"
        " round): without it no confirmed result would reach the TRF",
    ),
    ("round-1e20", {"round_number": int(HUGE)}, f"event.round: must be at most 999, got {HUGE}"),
    (
        "default-time-1e20-hours",
        {"default_time": f"{HUGE}h"},
        f'event.default_time: must be at most 24h, got "{HUGE}h"',
    ),
    (
        "time-control-1e23-seconds",
        {"time_control": "100000000000000000000000+2"},
        'event.time_control: invalid time control "100000000000000000000000+2":'
        " a DGT clock shows at most 9:59:59",
    ),
    (
        "deep-nesting",
        {"extra": "[extra]\nx = " + "[" * 50_000 + "]" * 50_000 + "\n"},
        "TOML arrays or inline tables nested too deeply to read",
    ),
]


@pytest.mark.parametrize(("options", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_config_edge_is_one_line_and_exit_2(
    tmp_path: Path, options: dict[str, Any], expected: str
) -> None:
    config = write_config(tmp_path, [BoardSpec(1, None)], **options)
    (tmp_path / "tournament.trf").write_text("012 Test Open\n")
    assert refused_start(config).splitlines() == [f"{config}: {expected}"]
    assert not (tmp_path / "journal.db").exists()


def test_a_pairing_file_that_does_not_exist_is_named(tmp_path: Path) -> None:
    pairing = {"trf": "gone.trf", "pairings": "round2.txt"}
    config = write_config(tmp_path, [BoardSpec(1, None)], tables={"pairing": pairing})
    (tmp_path / "round2.txt").write_text("1\n1 2\n")
    assert refused_start(config).splitlines() == [
        f"{config}: pairing.trf: no such file: {tmp_path / 'gone.trf'}"
    ]
